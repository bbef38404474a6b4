// Package docwrite holds the fleet's one way of updating a stored document: a replace
// under If-Match of a changed copy, skipped when nothing changed.
package docwrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// Outcome is what ReplaceIfChanged did.
type Outcome int

const (
	Unchanged Outcome = iota
	Written
	// Conflicted means the document changed since it was read (412); nothing was written.
	Conflicted
)

// ReplaceIfChanged writes updated, a mutated DeepCopy of read, under If-Match on the etag
// read carries, unless it encodes to the same bytes as read: the codec keeps the original
// bytes of every unchanged value, so equal bytes mean nothing changed and a write would
// only wake every reader of the document.
func ReplaceIfChanged[P any](ctx context.Context, c database.Container, read, updated *api.Document[P]) (Outcome, error) {
	before, err := api.Encode(read)
	if err != nil {
		return Unchanged, err
	}
	after, err := api.Encode(updated)
	if err != nil {
		return Unchanged, err
	}
	if bytes.Equal(before, after) {
		return Unchanged, nil
	}
	if _, err := database.Replace(ctx, c, updated); err != nil {
		if errors.Is(err, database.ErrPreconditionFailed) {
			return Conflicted, nil
		}
		return Unchanged, fmt.Errorf("replacing %s: %w", updated.ResourceID, err)
	}
	return Written, nil
}

// CreateIfAbsent creates doc unless a document with its id exists already, which is not
// an error: whoever created it first wins, and readers see that document.
func CreateIfAbsent[P any](ctx context.Context, c database.Container, doc *api.Document[P]) (created bool, err error) {
	if _, err := database.Create(ctx, c, doc); err != nil {
		if errors.Is(err, database.ErrConflict) {
			return false, nil
		}
		return false, fmt.Errorf("creating %s in %s: %w", doc.ResourceID, c.Name(), err)
	}
	return true, nil
}
