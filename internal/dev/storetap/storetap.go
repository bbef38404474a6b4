// Package storetap is for test wrappers of a database.Container that observe writes:
// they need the document as a write stored it even when their caller asked for the
// minimal answer (database.PatchOptions.Minimal), which carries no document.
package storetap

import (
	"context"

	"github.com/hcpsched/hcpsched/internal/database"
)

// Patch sends the patch to c asking for the whole answer, and returns both that
// (stored, the document as the patch left it) and the answer the caller asked for
// (without the document when opts.Minimal). A second read after the patch would not do:
// another writer may have written in between.
func Patch(ctx context.Context, c database.Container, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (stored, answer database.Item, err error) {
	whole := opts
	whole.Minimal = false
	stored, err = c.Patch(ctx, pk, id, ops, whole)
	if err != nil {
		return database.Item{}, database.Item{}, err
	}
	answer = stored
	if opts.Minimal {
		answer.Body = nil
	}
	return stored, answer, nil
}
