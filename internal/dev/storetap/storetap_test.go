package storetap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/storetap"
)

func TestPatch(t *testing.T) {
	tests := []struct {
		name       string
		minimal    bool
		wantAnswer bool
	}{
		{name: "a minimal answer has no document, the tap sees it", minimal: true},
		{name: "a whole answer is passed on as is", minimal: false, wantAnswer: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := memory.New().Container("tap")
			created, err := c.Create(t.Context(), "pk", []byte(`{"id":"a","partitionKey":"pk","properties":{"n":1}}`))
			require.NoError(t, err)
			ops := []database.PatchOperation{{Kind: database.PatchSet, Path: "/properties/n", Value: []byte(`2`)}}

			stored, answer, err := storetap.Patch(t.Context(), c, "pk", "a", ops, database.PatchOptions{IfMatch: created.ETag, Minimal: tc.minimal})
			require.NoError(t, err)
			assert.Contains(t, string(stored.Body), `"n":2`, "the tap sees the document as patched")
			assert.Equal(t, stored.ETag, answer.ETag)
			assert.Equal(t, tc.wantAnswer, len(answer.Body) > 0)

			_, _, err = storetap.Patch(t.Context(), c, "pk", "a", ops, database.PatchOptions{IfMatch: created.ETag, Minimal: tc.minimal})
			assert.ErrorIs(t, err, database.ErrPreconditionFailed, "the store's refusal is passed on")
		})
	}
}
