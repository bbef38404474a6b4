// Package docwritetest checks that a write kept every field its writer does not own:
// it compares stored JSON trees, not decoded structs, so a field no hcpsched type
// declares counts as much as one it does. It also builds the cached document a lean
// cache would hold (only the fields hcpsched declares), which a write must not let
// drop the others from the store.
package docwritetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// Lean decodes body as a cache that keeps only what hcpsched's types declare would hold
// it: every key the Go type of Document[P] does not declare, at any depth, is gone.
func Lean[P any](t testing.TB, body []byte) *api.Document[P] {
	t.Helper()
	stripped, err := StripUndeclared(body, reflect.TypeFor[api.Document[P]]())
	require.NoError(t, err)
	doc, err := api.Decode[P](stripped)
	require.NoError(t, err)
	return doc
}

// StripUndeclared returns body without the object keys that typ (a struct, map, slice
// or pointer to one, walked by JSON names) does not declare.
func StripUndeclared(body []byte, typ reflect.Type) ([]byte, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(strip(v, typ))
}

// WithForeignFields returns body with key: {"kept":true} added to every object that
// typ decodes as a struct (a map would take the key as one of its entries), at every
// depth, except objects with a "type" member (conditions), so that a test sees what a
// write does to fields no hcpsched type declares at every level.
func WithForeignFields(body []byte, typ reflect.Type, key string) ([]byte, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(v any, t reflect.Type)
	walk = func(v any, t reflect.Type) {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch x := v.(type) {
		case map[string]any:
			if t == nil || t.Kind() != reflect.Struct {
				return
			}
			for k, e := range x {
				ft, _ := jsonField(t, k)
				walk(e, ft)
			}
			if _, isCondition := x["type"]; !isCondition && t != timeType {
				x[key] = map[string]any{"kept": true}
			}
		case []any:
			if t == nil || (t.Kind() != reflect.Slice && t.Kind() != reflect.Array) {
				return
			}
			for _, e := range x {
				walk(e, t.Elem())
			}
		}
	}
	walk(v, typ)
	return json.Marshal(v)
}

var timeType = reflect.TypeFor[time.Time]()

func strip(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Map:
			for k, e := range x {
				x[k] = strip(e, t.Elem())
			}
		case reflect.Struct:
			for k, e := range x {
				ft, ok := jsonField(t, k)
				if !ok {
					delete(x, k)
					continue
				}
				x[k] = strip(e, ft)
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range x {
				x[i] = strip(e, t.Elem())
			}
		}
	}
	return v
}

func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous || !f.IsExported() {
			continue
		}
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == "" {
			n = f.Name
		}
		if n == name {
			return f.Type, true
		}
	}
	return nil, false
}

// AssertPreserved fails t unless after (a stored body) is before (the stored body it was
// written from) with only owned fields and cosmosMetadata's write stamps changed.
func AssertPreserved(t testing.TB, before, after []byte, owned []string) {
	t.Helper()
	diffs, err := Differences(before, after, owned)
	require.NoError(t, err)
	if len(diffs) > 0 {
		t.Errorf("the write changed fields it does not own (owned: %s):\n  %s", strings.Join(owned, ", "), strings.Join(diffs, "\n  "))
	}
}

// Differences lists every difference between two stored bodies of one document outside
// the owned fields, comparing compacted raw JSON: a value keeps its bytes or it is a
// difference. Cosmos's system properties may change; cosmosMetadata must show the write's
// stamps (etag = before's _etag, instanceVersion one more, resourceID and partitionKey
// filled in where absent) and nothing else.
func Differences(before, after []byte, owned []string) ([]string, error) {
	c := checker{owned: owned}
	var etag string
	if raw, ok := members(before)["_etag"]; ok {
		if err := json.Unmarshal(raw, &etag); err != nil {
			return nil, fmt.Errorf("before's _etag: %w", err)
		}
	}
	c.etag = etag
	c.compare("", before, after)
	return c.diffs, c.err
}

type checker struct {
	owned []string
	etag  string
	diffs []string
	err   error
}

func (c *checker) differ(path, format string, args ...any) {
	c.diffs = append(c.diffs, path+": "+fmt.Sprintf(format, args...))
}

func (c *checker) compare(path string, b, a json.RawMessage) {
	switch {
	case path != "" && slices.Contains(c.owned, path):
		return
	case path == "properties.cosmosMetadata":
		c.metadata(path, b, a)
		return
	}
	if types := conditionTypes(path, c.owned); len(types) > 0 {
		bl, al := othersThan(b, types), othersThan(a, types)
		if !slices.Equal(bl, al) {
			c.differ(path, "conditions other than %v changed:\n    before %v\n    after  %v", types, bl, al)
		}
		return
	}
	if path == "" || path == "properties" || c.ownsBeneath(path) {
		bm, am := members(b), members(a)
		if (b != nil && !isObject(b)) || (a != nil && !isObject(a)) {
			if compact(b) != compact(a) {
				c.differ(path, "was %s, is %s", compact(b), compact(a))
			}
			return
		}
		keys := slices.Concat(keysOf(bm), keysOf(am))
		sort.Strings(keys)
		for _, k := range slices.Compact(keys) {
			if path == "" && slices.Contains(arohcp.SystemProperties, k) {
				continue
			}
			c.compare(join(path, k), bm[k], am[k])
		}
		return
	}
	if compact(b) != compact(a) {
		c.differ(path, "was %s, is %s", orAbsent(compact(b)), orAbsent(compact(a)))
	}
}

func (c *checker) metadata(path string, b, a json.RawMessage) {
	bm, am := members(b), members(a)
	var etag string
	if err := json.Unmarshal(am["etag"], &etag); err != nil || etag != c.etag {
		c.differ(path+".etag", "is %s, want the etag written over, %q", orAbsent(compact(am["etag"])), c.etag)
	}
	var bv, av int64
	if raw, ok := bm["instanceVersion"]; ok {
		_ = json.Unmarshal(raw, &bv)
	}
	if bv < 1 {
		bv = 1
	}
	if err := json.Unmarshal(am["instanceVersion"], &av); err != nil || av != bv+1 {
		c.differ(path+".instanceVersion", "is %s, want %d", orAbsent(compact(am["instanceVersion"])), bv+1)
	}
	for k, v := range bm {
		if k == "etag" || k == "instanceVersion" {
			continue
		}
		if compact(v) != compact(am[k]) {
			c.differ(path+"."+k, "was %s, is %s", compact(v), orAbsent(compact(am[k])))
		}
	}
	for k := range am {
		if _, had := bm[k]; !had && k != "etag" && k != "instanceVersion" && k != "resourceID" && k != "partitionKey" {
			c.differ(path+"."+k, "appeared")
		}
	}
}

func (c *checker) ownsBeneath(path string) bool {
	for _, o := range c.owned {
		if strings.HasPrefix(o, path+".") || strings.HasPrefix(o, path+"[") {
			return true
		}
	}
	return false
}

func conditionTypes(path string, owned []string) []string {
	var types []string
	for _, o := range owned {
		if rest, ok := strings.CutPrefix(o, path+"["); ok && strings.HasSuffix(rest, "]") {
			types = append(types, strings.TrimSuffix(rest, "]"))
		}
	}
	return types
}

// othersThan is the compacted elements of a condition list whose type is not one of types.
func othersThan(raw json.RawMessage, types []string) []string {
	var list []json.RawMessage
	if raw == nil || string(raw) == "null" {
		return []string{} // a missing list is an empty one
	}
	if json.Unmarshal(raw, &list) != nil {
		return []string{compact(raw)}
	}
	out := []string{}
	for _, e := range list {
		var c struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(e, &c) == nil && slices.Contains(types, c.Type) {
			continue
		}
		out = append(out, compact(e))
	}
	return out
}

func members(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && (t[0] == '{' || string(t) == "null")
}

func keysOf(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func compact(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// OwnedDifferences lists the owned fields whose value in after is not their value in
// want, compared by meaning (a null member is an absent one): want is what the change
// made of a full decode of the document before the write.
func OwnedDifferences(want, after []byte, owned []string) ([]string, error) {
	var w, a any
	if err := decodeUseNumber(want, &w); err != nil {
		return nil, fmt.Errorf("want: %w", err)
	}
	if err := decodeUseNumber(after, &a); err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	var diffs []string
	for _, o := range owned {
		path, typ, isCondition := strings.Cut(o, "[")
		wv, av := at(w, path), at(a, path)
		if isCondition {
			typ = strings.TrimSuffix(typ, "]")
			wv, av = conditionOf(wv, typ), conditionOf(av, typ)
		}
		if !reflect.DeepEqual(withoutNulls(wv), withoutNulls(av)) {
			wb, _ := json.Marshal(wv)
			ab, _ := json.Marshal(av)
			diffs = append(diffs, fmt.Sprintf("%s: is %s, want %s", o, ab, wb))
		}
	}
	return diffs, nil
}

func decodeUseNumber(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// at is the value at a dotted path, nil where there is none.
func at(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func conditionOf(list any, typ string) any {
	l, _ := list.([]any)
	for _, e := range l {
		if m, ok := e.(map[string]any); ok && m["type"] == typ {
			return e
		}
	}
	return nil
}

func withoutNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}
