package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/conformance"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) database.Container {
		return memory.New().Container(t.Name())
	})
}

// The memory store evaluates a subset of Cosmos filter predicates and refuses the rest
// rather than guess: a refusal matches none of the error vocabulary, since Cosmos would
// have evaluated the predicate.
func TestPatchRefusesUnsupportedConditions(t *testing.T) {
	c := memory.New().Container(t.Name())
	ctx := context.Background()
	created, err := c.Create(ctx, "p", []byte(`{"id":"a","partitionKey":"p","properties":{"n":1}}`))
	require.NoError(t, err)
	ops := []database.PatchOperation{{Kind: database.PatchSet, Path: "/properties/n", Value: json.RawMessage("2")}}

	for _, cond := range []string{
		"SELECT * FROM c WHERE c.properties.n = 1",
		"FROM c",
		"WHERE c.properties.n = 1",
		"FROM c WHERE c.properties.n = 1 OR c.properties.n = 2",
		"FROM c WHERE c.properties.n > 0",
		"FROM c WHERE c.properties.n = @n",
		"FROM c WHERE NOT c.properties.n = 1",
		"FROM c WHERE d.properties.n = 1",
		"FROM c WHERE STARTSWITH(c.id, 'a')",
		"FROM c WHERE (c.properties.n = 1)",
		"FROM c WHERE c.properties.n = 'unterminated",
		"FROM c WHERE c.properties.n = 1 AND",
	} {
		t.Run(cond, func(t *testing.T) {
			_, err := c.Patch(ctx, "p", "a", ops, database.PatchOptions{Condition: cond})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the memory store evaluates only")
			for _, kind := range []error{database.ErrNotFound, database.ErrConflict, database.ErrPreconditionFailed, database.ErrThrottled, database.ErrBadRequest} {
				assert.NotErrorIs(t, err, kind)
			}
			got, err := c.Get(ctx, "p", "a")
			require.NoError(t, err)
			assert.Equal(t, created.ETag, got.ETag)
		})
	}
}

// Values off a patch's paths keep their stored bytes (the store keeps documents compact),
// number spelling included: the memory store decodes only the objects on each path, so
// 1.0, 2e3 and integers beyond float64 survive a patch of a sibling.
func TestPatchKeepsBytesOffThePath(t *testing.T) {
	c := memory.New().Container(t.Name())
	ctx := context.Background()
	_, err := c.Create(ctx, "p", []byte(`{"id":"a","partitionKey":"p","big":12345678901234567890123,"f":1.50,"properties":{"keep":{ "b" : [1.0, 2e3] },"n":1}}`))
	require.NoError(t, err)
	got, err := c.Patch(ctx, "p", "a", []database.PatchOperation{{Kind: database.PatchIncrement, Path: "/properties/n", Value: json.RawMessage("1")}}, database.PatchOptions{})
	require.NoError(t, err)
	body := string(got.Body)
	assert.Contains(t, body, `"big":12345678901234567890123`)
	assert.Contains(t, body, `"f":1.50`)
	assert.Contains(t, body, `"keep":{"b":[1.0,2e3]}`)
	assert.Contains(t, body, `"n":2`)
}

var fuzzDoc = []byte(`{"id":"a","partitionKey":"p","properties":{"s":"x","n":1,"l":[1,"a",{"k":null}],"o":{"k":true}}}`)

func FuzzParseCondition(f *testing.F) {
	for _, seed := range []string{
		"FROM c WHERE c.properties.s = 'x'",
		`from c where c["properties"]["l"][2].k = null AND NOT IS_DEFINED(c.q)`,
		"FROM c WHERE ARRAY_CONTAINS(c.properties.l, 'a') AND c.properties.n != -1.5e3",
		"FROM c WHERE c.properties.s <> \"y\\\"\"",
	} {
		f.Add(seed)
	}
	c := memory.New().Container("fuzz")
	ctx := context.Background()
	_, err := c.Create(ctx, "p", fuzzDoc)
	require.NoError(f, err)
	ops := []database.PatchOperation{{Kind: database.PatchSet, Path: "/properties/t", Value: json.RawMessage("1")}}
	f.Fuzz(func(t *testing.T, cond string) {
		// Any outcome but a panic or an unrelated error is fine.
		_, err := c.Patch(ctx, "p", "a", ops, database.PatchOptions{Condition: cond})
		if err != nil && !errors.Is(err, database.ErrPreconditionFailed) && !errors.Is(err, database.ErrBadRequest) {
			assert.Contains(t, err.Error(), "memory store: patch condition")
		}
	})
}

func FuzzPatch(f *testing.F) {
	kinds := []database.PatchOperationKind{database.PatchSet, database.PatchAdd, database.PatchReplace, database.PatchRemove, database.PatchIncrement}
	f.Add(uint8(0), "/properties/l/1", `"v"`)
	f.Add(uint8(1), "/properties/l/-", `{"a":[]}`)
	f.Add(uint8(3), "/properties/o/k", ``)
	f.Add(uint8(4), "/properties/n", `-3`)
	f.Add(uint8(1), "/properties/a~1b~0", `null`)
	f.Fuzz(func(t *testing.T, kind uint8, path, value string) {
		c := memory.New().Container("fuzz")
		ctx := context.Background()
		created, err := c.Create(ctx, "p", fuzzDoc)
		require.NoError(t, err)
		op := database.PatchOperation{Kind: kinds[int(kind)%len(kinds)], Path: path}
		if value != "" {
			op.Value = json.RawMessage(value)
		}
		got, err := c.Patch(ctx, "p", "a", []database.PatchOperation{op}, database.PatchOptions{})
		if err != nil {
			require.ErrorIs(t, err, database.ErrBadRequest)
			stored, err := c.Get(ctx, "p", "a")
			require.NoError(t, err)
			assert.Equal(t, created.ETag, stored.ETag, "a failed patch changes nothing")
			return
		}
		var doc map[string]any
		require.NoError(t, json.Unmarshal(got.Body, &doc), "a patched document is a JSON object")
		assert.Equal(t, "a", doc["id"])
		assert.Equal(t, "p", doc["partitionKey"])
	})
}
