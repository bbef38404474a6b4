package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// The semantics below are Cosmos's partial document update as Microsoft documents it:
// https://learn.microsoft.com/azure/cosmos-db/partial-document-update and
// https://learn.microsoft.com/azure/cosmos-db/partial-document-update-faq.

// patchProperties is the properties object every patch case starts from.
const patchProperties = `"count":5,"ratio":1.5,"name":"a","list":["x","y"],"obj":{"k":"v"},"flag":false,"nothing":null`

func op(kind database.PatchOperationKind, path string, value string) database.PatchOperation {
	o := database.PatchOperation{Kind: kind, Path: path}
	if value != "" {
		o.Value = json.RawMessage(value)
	}
	return o
}

// properties decodes a document's properties with numbers kept as written.
func properties(t *testing.T, body []byte) map[string]any {
	t.Helper()
	props, ok := tree(t, body)["properties"].(map[string]any)
	require.True(t, ok, "the document has properties")
	delete(props, "n")
	return props
}

// wantProperties is the starting properties with changes applied; a nil value deletes.
func wantProperties(t *testing.T, changes map[string]any) map[string]any {
	t.Helper()
	want := properties(t, fmt.Appendf(nil, `{"properties":{%s}}`, patchProperties))
	for k, v := range changes {
		if v == deleted {
			delete(want, k)
			continue
		}
		want[k] = v
	}
	return want
}

type deletedMarker struct{}

var deleted = deletedMarker{}

func num(s string) json.Number { return json.Number(s) }

func testPatchOperations(t *testing.T, c database.Container) {
	const pk = "sub-patch"
	eleven := make([]database.PatchOperation, database.MaxPatchOperations+1)
	for i := range eleven {
		eleven[i] = op(database.PatchSet, fmt.Sprintf("/properties/f%d", i), "1")
	}
	ten := eleven[:database.MaxPatchOperations]
	tenChanges := map[string]any{}
	for i := range ten {
		tenChanges[fmt.Sprintf("f%d", i)] = num("1")
	}

	tests := []struct {
		name string
		ops  []database.PatchOperation
		// want is the properties after the patch, as changes to patchProperties; nil
		// when the patch must fail with wantErr.
		want       map[string]any
		wantErr    error
		wantStatus int
	}{
		{name: "set overwrites", ops: []database.PatchOperation{op(database.PatchSet, "/properties/name", `"b"`)}, want: map[string]any{"name": "b"}},
		{name: "set creates the last segment", ops: []database.PatchOperation{op(database.PatchSet, "/properties/new", `{"a":[1]}`)},
			want: map[string]any{"new": map[string]any{"a": []any{num("1")}}}},
		{name: "set writes JSON null", ops: []database.PatchOperation{op(database.PatchSet, "/properties/name", `null`)}, want: map[string]any{"name": nil}},
		{name: "set writes false", ops: []database.PatchOperation{op(database.PatchSet, "/properties/count", `false`)}, want: map[string]any{"count": false}},
		{name: "set on an array index overwrites the element", ops: []database.PatchOperation{op(database.PatchSet, "/properties/list/1", `"z"`)},
			want: map[string]any{"list": []any{"x", "z"}}},
		{name: "set into a nested object", ops: []database.PatchOperation{op(database.PatchSet, "/properties/obj/k2", `2`)},
			want: map[string]any{"obj": map[string]any{"k": "v", "k2": num("2")}}},
		{name: "set with a missing parent", ops: []database.PatchOperation{op(database.PatchSet, "/properties/missing/leaf", `1`)},
			wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "add creates", ops: []database.PatchOperation{op(database.PatchAdd, "/properties/color", `"silver"`)}, want: map[string]any{"color": "silver"}},
		{name: "add overwrites an existing property", ops: []database.PatchOperation{op(database.PatchAdd, "/properties/name", `"c"`)}, want: map[string]any{"name": "c"}},
		{name: "add on an array index inserts", ops: []database.PatchOperation{op(database.PatchAdd, "/properties/list/0", `"w"`)},
			want: map[string]any{"list": []any{"w", "x", "y"}}},
		{name: "add with - appends", ops: []database.PatchOperation{op(database.PatchAdd, "/properties/list/-", `"z"`)},
			want: map[string]any{"list": []any{"x", "y", "z"}}},
		{name: "add at the array's length appends", ops: []database.PatchOperation{op(database.PatchAdd, "/properties/list/2", `"z"`)},
			want: map[string]any{"list": []any{"x", "y", "z"}}},
		{name: "add beyond the array's length", ops: []database.PatchOperation{op(database.PatchAdd, "/properties/list/3", `"z"`)},
			wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "add with a missing parent", ops: []database.PatchOperation{op(database.PatchAdd, "/properties/missing/leaf", `1`)},
			wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "replace overwrites", ops: []database.PatchOperation{op(database.PatchReplace, "/properties/flag", `true`)}, want: map[string]any{"flag": true}},
		{name: "replace of a missing path", ops: []database.PatchOperation{op(database.PatchReplace, "/properties/missing", `1`)},
			wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "remove deletes", ops: []database.PatchOperation{op(database.PatchRemove, "/properties/obj", "")}, want: map[string]any{"obj": deleted}},
		{name: "remove of a null value deletes it", ops: []database.PatchOperation{op(database.PatchRemove, "/properties/nothing", "")}, want: map[string]any{"nothing": deleted}},
		{name: "remove of an array element shifts the rest", ops: []database.PatchOperation{op(database.PatchRemove, "/properties/list/0", "")},
			want: map[string]any{"list": []any{"y"}}},
		{name: "remove of a missing path", ops: []database.PatchOperation{op(database.PatchRemove, "/properties/missing", "")},
			wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "incr adds", ops: []database.PatchOperation{op(database.PatchIncrement, "/properties/count", `2`)}, want: map[string]any{"count": num("7")}},
		{name: "incr by a negative value subtracts", ops: []database.PatchOperation{op(database.PatchIncrement, "/properties/count", `-6`)}, want: map[string]any{"count": num("-1")}},
		{name: "incr of a float", ops: []database.PatchOperation{op(database.PatchIncrement, "/properties/ratio", `1`)}, want: map[string]any{"ratio": num("2.5")}},
		{name: "incr creates a missing field", ops: []database.PatchOperation{op(database.PatchIncrement, "/properties/fresh", `3`)}, want: map[string]any{"fresh": num("3")}},
		{name: "incr of a string", ops: []database.PatchOperation{op(database.PatchIncrement, "/properties/name", `1`)},
			wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "incr of null", ops: []database.PatchOperation{op(database.PatchIncrement, "/properties/nothing", `1`)},
			wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "incr by a non-integer is refused without I/O", ops: []database.PatchOperation{op(database.PatchIncrement, "/properties/count", `"1"`)},
			wantErr: database.ErrBadRequest},
		{name: "operations apply in order", ops: []database.PatchOperation{
			op(database.PatchAdd, "/properties/seq", `[]`),
			op(database.PatchAdd, "/properties/seq/-", `1`),
			op(database.PatchAdd, "/properties/seq/0", `0`),
			op(database.PatchIncrement, "/properties/seq/1", `1`),
			op(database.PatchRemove, "/properties/name", ""),
		}, want: map[string]any{"seq": []any{num("0"), num("2")}, "name": deleted}},
		{name: "JSON pointer escapes", ops: []database.PatchOperation{op(database.PatchSet, "/properties/a~1b~0c", `1`)}, want: map[string]any{"a/b~c": num("1")}},
		{name: "ten operations", ops: ten, want: tenChanges},
		{name: "eleven operations", ops: eleven, wantErr: database.ErrBadRequest},
		{name: "no operations", ops: nil, wantErr: database.ErrBadRequest},
		{name: "a path that is not a JSON pointer", ops: []database.PatchOperation{op(database.PatchSet, "properties/name", `1`)}, wantErr: database.ErrBadRequest},
		{name: "the id", ops: []database.PatchOperation{op(database.PatchSet, "/id", `"other"`)}, wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "the partition key", ops: []database.PatchOperation{op(database.PatchSet, "/partitionKey", `"other"`)}, wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "a system property", ops: []database.PatchOperation{op(database.PatchSet, "/_etag", `"x"`)}, wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
		{name: "a failing operation undoes the earlier ones", ops: []database.PatchOperation{
			op(database.PatchSet, "/properties/name", `"b"`),
			op(database.PatchRemove, "/properties/missing", ""),
		}, wantErr: database.ErrBadRequest, wantStatus: http.StatusBadRequest},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, body := doc(pk, api.ClusterResourceType, fmt.Sprintf("p%d", i), ","+patchProperties)
			created, err := c.Create(ctx(t), pk, body)
			require.NoError(t, err)

			patched, err := c.Patch(ctx(t), pk, id, tt.ops, database.PatchOptions{})
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, tt.wantErr)
				var opErr *database.OpError
				require.ErrorAs(t, err, &opErr, "errors say which operation failed")
				assert.Equal(t, tt.wantStatus, opErr.StatusCode, "0 is a refusal without I/O")
				assert.Contains(t, err.Error(), c.Name())
				got, err := c.Get(ctx(t), pk, id)
				require.NoError(t, err)
				assert.Equal(t, created.ETag, got.ETag, "a failed patch changes nothing")
				assert.Equal(t, properties(t, created.Body), properties(t, got.Body))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, id, patched.ID)
			assert.Equal(t, pk, patched.PartitionKey)
			assert.NotEqual(t, created.ETag, patched.ETag, "a patch is a write with a new etag")
			assert.Equal(t, patched.ETag, field(t, patched.Body, "_etag"))
			assert.NotNil(t, field(t, patched.Body, "_ts"))
			assert.Equal(t, wantProperties(t, tt.want), properties(t, patched.Body), "the patch returns the whole document")
			got, err := c.Get(ctx(t), pk, id)
			require.NoError(t, err)
			assert.Equal(t, patched.ETag, got.ETag)
			assert.Equal(t, tree(t, patched.Body), tree(t, got.Body))
			for _, k := range []string{"id", "partitionKey", "resourceID", "resourceType"} {
				assert.Equal(t, field(t, created.Body, k), field(t, got.Body, k))
			}
		})
	}

	t.Run("missing document", func(t *testing.T) {
		missingID, _ := doc(pk, api.ClusterResourceType, "never-created", "")
		_, err := c.Patch(ctx(t), pk, missingID, []database.PatchOperation{op(database.PatchSet, "/properties/x", `1`)}, database.PatchOptions{})
		assert.ErrorIs(t, err, database.ErrNotFound)
		var opErr *database.OpError
		require.ErrorAs(t, err, &opErr)
		assert.Equal(t, http.StatusNotFound, opErr.StatusCode)
	})
}

func testPatchGuards(t *testing.T, c database.Container) {
	const pk = "sub-guard"
	set := []database.PatchOperation{op(database.PatchSet, "/properties/name", `"patched"`)}

	tests := []struct {
		name      string
		condition string
		// staleEtag guards with the etag of the document before its last write.
		staleEtag bool
		// currentEtag guards with the current etag as well as the condition.
		currentEtag bool
		wantMatch   bool
	}{
		{name: "current If-Match", currentEtag: true, wantMatch: true},
		{name: "stale If-Match", staleEtag: true},
		{name: "equality holds", condition: "FROM c WHERE c.properties.name = 'a'", wantMatch: true},
		{name: "equality fails", condition: "FROM c WHERE c.properties.name = 'b'"},
		{name: "double-quoted literal", condition: `FROM c WHERE c.properties.name = "a"`, wantMatch: true},
		{name: "bracketed path and number", condition: `from c where c["properties"]["count"] = 5`, wantMatch: true},
		{name: "boolean literal", condition: "FROM c WHERE c.properties.flag = false", wantMatch: true},
		{name: "null literal", condition: "FROM c WHERE c.properties.nothing = null", wantMatch: true},
		{name: "types differ", condition: "FROM c WHERE c.properties.count = '5'"},
		{name: "inequality holds", condition: "FROM c WHERE c.properties.name != 'b'", wantMatch: true},
		{name: "inequality of a different type is undefined", condition: "FROM c WHERE c.properties.count != 'b'"},
		{name: "inequality of a missing field is undefined", condition: "FROM c WHERE c.properties.missing != 'b'"},
		{name: "angle-bracket inequality", condition: "FROM c WHERE c.properties.name <> 'a'"},
		{name: "NOT IS_DEFINED of a missing field", condition: "FROM c WHERE NOT IS_DEFINED(c.properties.missing)", wantMatch: true},
		{name: "NOT IS_DEFINED of a present field", condition: "FROM c WHERE NOT IS_DEFINED(c.properties.name)"},
		{name: "NOT IS_DEFINED of a null field", condition: "FROM c WHERE NOT IS_DEFINED(c.properties.nothing)"},
		{name: "ARRAY_CONTAINS holds", condition: "FROM c WHERE ARRAY_CONTAINS(c.properties.list, 'y')", wantMatch: true},
		{name: "ARRAY_CONTAINS fails", condition: "FROM c WHERE ARRAY_CONTAINS(c.properties.list, 'q')"},
		{name: "ARRAY_CONTAINS of a missing array", condition: "FROM c WHERE ARRAY_CONTAINS(c.properties.missing, 'x')"},
		{name: "AND holds", condition: "FROM c WHERE c.properties.name = 'a' AND ARRAY_CONTAINS(c.properties.list, 'x') AND NOT IS_DEFINED(c.properties.gone)", wantMatch: true},
		{name: "AND with one false term", condition: "FROM c WHERE c.properties.name = 'a' AND c.properties.count = 6"},
		{name: "condition and current If-Match", condition: "FROM c WHERE c.properties.name = 'a'", currentEtag: true, wantMatch: true},
		{name: "condition holds but If-Match is stale", condition: "FROM c WHERE c.properties.name = 'a'", staleEtag: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, body := doc(pk, api.ClusterResourceType, fmt.Sprintf("g%d", i), ","+patchProperties)
			first, err := c.Create(ctx(t), pk, body)
			require.NoError(t, err)
			current, err := c.Replace(ctx(t), pk, id, body, first.ETag)
			require.NoError(t, err)
			opts := database.PatchOptions{Condition: tt.condition}
			if tt.staleEtag {
				opts.IfMatch = first.ETag
			}
			if tt.currentEtag {
				opts.IfMatch = current.ETag
			}

			patched, err := c.Patch(ctx(t), pk, id, set, opts)
			if !tt.wantMatch {
				require.Error(t, err)
				assert.ErrorIs(t, err, database.ErrPreconditionFailed)
				var opErr *database.OpError
				require.ErrorAs(t, err, &opErr)
				assert.Equal(t, http.StatusPreconditionFailed, opErr.StatusCode)
				got, err := c.Get(ctx(t), pk, id)
				require.NoError(t, err)
				assert.Equal(t, current.ETag, got.ETag, "a refused patch changes nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "patched", field(t, patched.Body, "properties", "name"))
		})
	}
}

// testPatchFixtures stores every ARO-HCP fixture as is and patches one field of it:
// every other field must come back as the very bytes the store held before.
func testPatchFixtures(t *testing.T, c database.Container) {
	for i, f := range arohcp.All() {
		t.Run(f.Name, func(t *testing.T) {
			original := tree(t, f.Data)
			pk := fmt.Sprintf("%s-patch-%d", original["partitionKey"], i)
			body := bytes.Replace(f.Data, fmt.Appendf(nil, "%q", original["partitionKey"]), fmt.Appendf(nil, "%q", pk), 1)
			stored, err := c.Create(ctx(t), pk, body)
			require.NoError(t, err)

			ops := []database.PatchOperation{op(database.PatchSet, "/properties/hcpschedPatchProbe", `{"owned":true}`)}
			_, hasVersion := field(t, stored.Body, "properties", "cosmosMetadata", "instanceVersion").(float64)
			if hasVersion {
				ops = append(ops, op(database.PatchIncrement, "/properties/cosmosMetadata/instanceVersion", "1"))
			}
			patched, err := c.Patch(ctx(t), pk, stored.ID, ops, database.PatchOptions{IfMatch: stored.ETag})
			require.NoError(t, err)

			before, after := rawFields(t, stored.Body), rawFields(t, patched.Body)
			for _, k := range arohcp.SystemProperties {
				delete(before, k)
				delete(after, k)
			}
			beforeProps, afterProps := rawFields(t, []byte(before["properties"])), rawFields(t, []byte(after["properties"]))
			delete(before, "properties")
			delete(after, "properties")
			assert.Equal(t, before, after, "top-level fields other than properties are unchanged")
			assert.JSONEq(t, `{"owned":true}`, string(afterProps["hcpschedPatchProbe"]))
			delete(afterProps, "hcpschedPatchProbe")
			if hasVersion {
				beforeMeta, afterMeta := rawFields(t, []byte(beforeProps["cosmosMetadata"])), rawFields(t, []byte(afterProps["cosmosMetadata"]))
				assert.Equal(t, field(t, stored.Body, "properties", "cosmosMetadata", "instanceVersion").(float64)+1,
					field(t, patched.Body, "properties", "cosmosMetadata", "instanceVersion"))
				delete(beforeMeta, "instanceVersion")
				delete(afterMeta, "instanceVersion")
				assert.Equal(t, beforeMeta, afterMeta, "cosmosMetadata apart from instanceVersion is unchanged")
				delete(beforeProps, "cosmosMetadata")
				delete(afterProps, "cosmosMetadata")
			}
			assert.Equal(t, beforeProps, afterProps, "every other property keeps its stored bytes")
		})
	}
}

// rawFields splits a JSON object into its members, each compacted.
func rawFields(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	out := make(map[string]string, len(m))
	for k, v := range m {
		var b bytes.Buffer
		require.NoError(t, json.Compact(&b, v))
		out[k] = b.String()
	}
	return out
}

// testPatchFeed: the change feed delivers a patched document once, at its patched
// version, like any other write.
func testPatchFeed(t *testing.T, c database.Container) {
	const pk = "sub-patch-feed"
	id, body := doc(pk, api.ClusterResourceType, "fed", ","+patchProperties)
	created, err := c.Create(ctx(t), pk, body)
	require.NoError(t, err)
	other := create(t, c, pk, "untouched")
	_, cont := feedItems(t, c, database.ChangeFeedOptions{PartitionKey: pk})

	patched, err := c.Patch(ctx(t), pk, id, []database.PatchOperation{op(database.PatchIncrement, "/properties/count", "1")}, database.PatchOptions{IfMatch: created.ETag})
	require.NoError(t, err)
	items, cont := feedItems(t, c, database.ChangeFeedOptions{PartitionKey: pk, Continuation: cont})
	require.Len(t, items, 1, "the patch is one change")
	assert.Equal(t, id, items[0].ID)
	assert.Equal(t, patched.ETag, items[0].ETag)
	assert.Equal(t, 6.0, field(t, items[0].Body, "properties", "count"))
	assert.NotNil(t, field(t, items[0].Body, "_lsn"))
	assert.Equal(t, field(t, created.Body, "_rid"), field(t, items[0].Body, "_rid"), "_rid is the document's, kept through its writes")

	again, _ := feedItems(t, c, database.ChangeFeedOptions{PartitionKey: pk, Continuation: cont})
	assert.Empty(t, again, "and only once")

	all, _ := feedItems(t, c, database.ChangeFeedOptions{PartitionKey: pk})
	require.Len(t, all, 2)
	assert.Equal(t, []string{other.ID, id}, []string{all[0].ID, all[1].ID}, "the patched document moved to the end of the feed")
	assert.Equal(t, 6.0, field(t, all[1].Body, "properties", "count"))
}

// testPatchMinimal: a patch that asks for the minimal answer is applied all the same, and
// answers with the new etag and no document; a refused one is refused the same way.
func testPatchMinimal(t *testing.T, c database.Container) {
	const pk = "sub-patch-minimal"
	id, body := doc(pk, api.ClusterResourceType, "min", ","+patchProperties)
	created, err := c.Create(ctx(t), pk, body)
	require.NoError(t, err)
	ops := []database.PatchOperation{op(database.PatchIncrement, "/properties/count", "1")}

	patched, err := c.Patch(ctx(t), pk, id, ops, database.PatchOptions{IfMatch: created.ETag, Minimal: true})
	require.NoError(t, err)
	assert.Empty(t, patched.Body, "no document in a minimal answer")
	assert.Equal(t, id, patched.ID)
	assert.Equal(t, pk, patched.PartitionKey)
	require.NotEmpty(t, patched.ETag, "the new etag is in a minimal answer")
	assert.NotEqual(t, created.ETag, patched.ETag)

	read, err := c.Get(ctx(t), pk, id)
	require.NoError(t, err)
	assert.Equal(t, patched.ETag, read.ETag, "the answer's etag is the stored version's")
	assert.Equal(t, 6.0, field(t, read.Body, "properties", "count"), "the patch was applied")

	_, err = c.Patch(ctx(t), pk, id, ops, database.PatchOptions{IfMatch: created.ETag, Minimal: true})
	assert.ErrorIs(t, err, database.ErrPreconditionFailed, "a stale If-Match is refused as without Minimal")
}

func testPatchInBatch(t *testing.T, c database.Container) {
	const pk = "sub-patch-batch"
	id, body := doc(pk, api.ClusterResourceType, "b", ","+patchProperties)
	created, err := c.Create(ctx(t), pk, body)
	require.NoError(t, err)
	newID, newBody := doc(pk, api.ClusterResourceType, "b-new", "")

	t.Run("applies with the batch", func(t *testing.T) {
		results, err := c.Batch(ctx(t), pk, []database.BatchOperation{
			{Kind: database.BatchPatch, ID: id, IfMatch: created.ETag, Condition: "FROM c WHERE c.properties.count = 5",
				PatchOperations: []database.PatchOperation{op(database.PatchIncrement, "/properties/count", "1"), op(database.PatchAdd, "/properties/list/-", `"z"`)}},
			{Kind: database.BatchRead, ID: id},
		})
		require.NoError(t, err)
		require.Len(t, results, 2)
		assert.Equal(t, http.StatusOK, results[0].StatusCode)
		assert.NotEqual(t, created.ETag, results[0].ETag)
		assert.Equal(t, results[0].ETag, results[1].ETag, "a read sees the batch's patch")
		assert.Equal(t, 6.0, field(t, results[1].Body, "properties", "count"))
		assert.Equal(t, []any{"x", "y", "z"}, field(t, results[1].Body, "properties", "list"))
	})

	current, err := c.Get(ctx(t), pk, id)
	require.NoError(t, err)
	failing := []struct {
		name string
		op   database.BatchOperation
		want error
	}{
		{"stale If-Match", database.BatchOperation{Kind: database.BatchPatch, ID: id, IfMatch: created.ETag,
			PatchOperations: []database.PatchOperation{op(database.PatchSet, "/properties/name", `"q"`)}}, database.ErrPreconditionFailed},
		{"condition false", database.BatchOperation{Kind: database.BatchPatch, ID: id, Condition: "FROM c WHERE c.properties.count = 5",
			PatchOperations: []database.PatchOperation{op(database.PatchSet, "/properties/name", `"q"`)}}, database.ErrPreconditionFailed},
		{"operation fails", database.BatchOperation{Kind: database.BatchPatch, ID: id,
			PatchOperations: []database.PatchOperation{op(database.PatchRemove, "/properties/missing", "")}}, database.ErrBadRequest},
		{"document missing", database.BatchOperation{Kind: database.BatchPatch, ID: api.CosmosID("/nope"),
			PatchOperations: []database.PatchOperation{op(database.PatchSet, "/properties/name", `"q"`)}}, database.ErrNotFound},
	}
	for _, tt := range failing {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Batch(ctx(t), pk, []database.BatchOperation{
				{Kind: database.BatchCreate, ID: newID, Body: newBody},
				tt.op,
			})
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			var be *database.BatchError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, 1, be.Index, "the failing operation is named")
			_, err = c.Get(ctx(t), pk, newID)
			assert.ErrorIs(t, err, database.ErrNotFound, "the create before the failure was rolled back")
			got, err := c.Get(ctx(t), pk, id)
			require.NoError(t, err)
			assert.Equal(t, current.ETag, got.ETag)
		})
	}
	t.Run("a malformed patch is refused without I/O", func(t *testing.T) {
		_, err := c.Batch(ctx(t), pk, []database.BatchOperation{{Kind: database.BatchPatch, ID: id}})
		assert.ErrorIs(t, err, database.ErrBadRequest)
	})
}
