package controllertest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// Tree decodes a document for comparison: numbers stay json.Number, so trees compare
// exactly with Equal.
func Tree(t testing.TB, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v map[string]any
	require.NoError(t, dec.Decode(&v))
	return v
}

// Normalize turns a Go value into what Tree decodes it to.
func Normalize(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	require.NoError(t, dec.Decode(&out))
	return out
}

// ApplyEdits returns body with edits applied, in order.
func ApplyEdits(t testing.TB, body []byte, edits ...Edit) []byte {
	t.Helper()
	if len(edits) == 0 {
		return body
	}
	root := Tree(t, body)
	for _, e := range edits {
		setPath(t, root, e)
	}
	out, err := json.Marshal(root)
	require.NoError(t, err)
	return out
}

// splitPath splits a dot path; [..] quotes a segment that holds dots.
func splitPath(p string) []string {
	var out []string
	for p != "" {
		if strings.HasPrefix(p, "[") {
			end := strings.Index(p, "]")
			out = append(out, p[1:end])
			p = strings.TrimPrefix(p[end+1:], ".")
			continue
		}
		seg, rest, _ := strings.Cut(p, ".")
		out = append(out, seg)
		p = rest
	}
	return out
}

func setPath(t testing.TB, root map[string]any, e Edit) {
	t.Helper()
	segs := splitPath(e.Path)
	m := root
	for _, k := range segs[:len(segs)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := segs[len(segs)-1]
	if e.unset {
		delete(m, last)
		return
	}
	m[last] = Normalize(t, e.Value)
}

// WithoutSystem drops the store's system properties from a tree.
func WithoutSystem(m map[string]any) map[string]any { return arohcp.WithoutSystemProperties(m) }

// StoredTree is a stored document's tree without system properties.
func StoredTree(t testing.TB, item database.Item) map[string]any {
	t.Helper()
	return WithoutSystem(Tree(t, item.Body))
}

// ExpectReplaced is what a replace of before with edits must store: the edits, the
// write counter one up and cosmosMetadata.etag set to the etag that was read, and every
// other field as it was.
func ExpectReplaced(t testing.TB, before database.Item, edits ...Edit) map[string]any {
	t.Helper()
	want := Tree(t, before.Body)
	version := int64(1)
	if md, ok := want["properties"].(map[string]any)["cosmosMetadata"].(map[string]any); ok {
		if n, ok := md["instanceVersion"].(json.Number); ok {
			version, _ = n.Int64()
		}
	}
	setPath(t, want, Set("properties.cosmosMetadata.instanceVersion", version+1))
	setPath(t, want, Set("properties.cosmosMetadata.etag", before.ETag))
	for _, e := range edits {
		setPath(t, want, e)
	}
	return WithoutSystem(want)
}

// ConditionTree is a condition as stored.
func ConditionTree(typ, status, reason, message string, at time.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "lastTransitionTime": at.UTC().Format(time.RFC3339), "reason": reason, "message": message}
}
