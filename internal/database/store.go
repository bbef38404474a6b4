// Package database is hcpsched's view of Cosmos DB: a Store of named containers with
// etag-guarded writes, transactional batches within a partition and a change feed. Two
// implementations pass one conformance suite: cosmos (the real protocol, via azcosmos)
// and memory (in-process, for unit tests).
package database

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"time"
)

// Store opens containers by name. Opening is cheap and does no I/O.
type Store interface {
	Container(name string) Container
}

// Item is one stored document as Cosmos returns it, system properties included.
type Item struct {
	ID           string
	PartitionKey string
	ETag         string
	Body         []byte
}

// Container is one Cosmos container. Every method returns errors that match the
// vocabulary below with errors.Is: ErrNotFound, ErrConflict, ErrPreconditionFailed,
// ErrThrottled, ErrBadRequest.
type Container interface {
	Name() string
	// Get is a point read.
	Get(ctx context.Context, partitionKey, id string) (Item, error)
	// Create stores a new document; ErrConflict if the id exists in the partition.
	Create(ctx context.Context, partitionKey string, body []byte) (Item, error)
	// Replace overwrites a document only if its current _etag is ifMatch. An empty
	// ifMatch is refused without I/O: unguarded writes lose other writers' changes.
	Replace(ctx context.Context, partitionKey, id string, body []byte, ifMatch string) (Item, error)
	// Patch applies a Cosmos partial document update to one document, atomically, and
	// returns the whole document as stored afterwards (new _etag and _ts; the change feed
	// sees the patched version as it sees a Replace). It fails with ErrNotFound when the
	// document is missing, ErrPreconditionFailed when opts.IfMatch is set and stale or
	// opts.Condition does not hold, and ErrBadRequest when an operation cannot apply (see
	// PatchOperation) or the patch is malformed (see ValidatePatch, checked without I/O).
	// Nothing applies unless every operation does.
	//
	// Unlike Replace, Patch does not require an etag: a patch that touches only fields its
	// writer owns can be guarded by a Condition on what it assumes instead. A Patch that
	// set neither guard and is retried after an ambiguous failure (a timeout) may apply
	// twice; only set, replace and remove are idempotent.
	Patch(ctx context.Context, partitionKey, id string, ops []PatchOperation, opts PatchOptions) (Item, error)
	// Delete removes a document for good. ARO-HCP documents are soft-deleted (see
	// SoftDelete) so that deletes reach change-feed readers; this is for expiry and tests.
	Delete(ctx context.Context, partitionKey, id, ifMatch string) error
	// List yields every document of a resource type (compared case-insensitively), in
	// one partition or across all of them.
	List(ctx context.Context, opts ListOptions) iter.Seq2[Item, error]
	// Batch runs operations on one partition atomically: all apply or none does.
	Batch(ctx context.Context, partitionKey string, ops []BatchOperation) ([]BatchResult, error)
	// FeedRanges splits the container for parallel change-feed reading.
	FeedRanges(ctx context.Context) ([]FeedRange, error)
	// ChangeFeed reads one page of changes: each changed document once, at its latest
	// version, oldest change first.
	ChangeFeed(ctx context.Context, opts ChangeFeedOptions) (ChangeFeedPage, error)
}

// ListOptions selects documents for List.
type ListOptions struct {
	ResourceType string
	// PartitionKey restricts the listing to one partition; empty lists across partitions.
	PartitionKey string
	// PageSize bounds each request; 0 lets the store choose.
	PageSize int
}

// BatchOperationKind is what one batch operation does.
type BatchOperationKind string

const (
	BatchCreate  BatchOperationKind = "Create"
	BatchReplace BatchOperationKind = "Replace"
	BatchRead    BatchOperationKind = "Read"
	BatchDelete  BatchOperationKind = "Delete"
	BatchPatch   BatchOperationKind = "Patch"
)

// BatchOperation is one step of a transactional batch. Replace requires IfMatch; Delete
// and Patch honour it when set. Patch takes PatchOperations (and optionally Condition)
// instead of Body, with Container.Patch's semantics.
type BatchOperation struct {
	Kind    BatchOperationKind
	ID      string
	Body    []byte
	IfMatch string
	// PatchOperations and Condition are a BatchPatch's update and filter predicate.
	PatchOperations []PatchOperation
	Condition       string
}

// BatchResult is the outcome of one operation of a successful batch.
type BatchResult struct {
	StatusCode int
	ETag       string
	// Body is the document for Create, Replace and Read.
	Body []byte
}

// PatchOperationKind is one operation of a Cosmos partial document update
// (https://learn.microsoft.com/azure/cosmos-db/partial-document-update). Paths are JSON
// pointers ("/properties/status/x"; "~1" escapes "/" and "~0" escapes "~" in a name).
// Every parent of the path must exist: no operation creates intermediate objects, and a
// missing parent is ErrBadRequest. System properties (/_etag, /_ts, ...), /id and the
// partition key cannot be patched (ErrBadRequest).
//
// Cosmos's "move" is not offered: azcosmos v1.5.0, which the cosmos store speaks
// through, cannot send it.
type PatchOperationKind string

const (
	// PatchSet creates or overwrites the path's last segment; on an array index it
	// overwrites the element there.
	PatchSet PatchOperationKind = "set"
	// PatchAdd creates or overwrites a property; on an array index it inserts before
	// that element (the array's length, or "-", appends).
	PatchAdd PatchOperationKind = "add"
	// PatchReplace overwrites a value that exists; a missing path is ErrBadRequest.
	PatchReplace PatchOperationKind = "replace"
	// PatchRemove deletes a value that exists (an array element shifts the rest down); a
	// missing path is ErrBadRequest.
	PatchRemove PatchOperationKind = "remove"
	// PatchIncrement adds Value (a JSON integer; it may be negative) to a number, or
	// creates the field with Value when it is missing; a value that is not a number is
	// ErrBadRequest.
	PatchIncrement PatchOperationKind = "incr"
)

// MaxPatchOperations is Cosmos's limit on the operations of one patch.
const MaxPatchOperations = 10

// PatchOperation is one step of a partial document update.
type PatchOperation struct {
	Kind PatchOperationKind
	Path string
	// Value is the JSON to write for set, add and replace (JSON null included) and the
	// integer to add for incr; remove takes none.
	Value json.RawMessage
}

// PatchOptions guards a Patch.
type PatchOptions struct {
	// IfMatch, when set, applies the patch only to the document at that _etag.
	IfMatch string
	// Condition, when set, is a Cosmos filter predicate, "FROM c WHERE <predicate>", that
	// the document as stored must satisfy or the patch fails with ErrPreconditionFailed.
	// The cosmos store sends it to Cosmos as is; the memory store evaluates a subset
	// (see the memory package) and refuses anything else.
	Condition string
	// Minimal asks for the answer without the stored document (Cosmos's
	// "Prefer: return=minimal"): the Item carries ID, PartitionKey and the new ETag, and
	// no Body. A caller that knows what it stored (a patch under IfMatch applied to the
	// very version it holds) saves the store sending the document and itself decoding it.
	Minimal bool
}

// Pointer spells a path of field names as a patch operation's JSON pointer: "~" is "~0"
// and "/" is "~1" inside a name.
func Pointer(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(n, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// PointerNames splits a JSON pointer into its unescaped field names; the inverse of
// Pointer.
func PointerNames(pointer string) []string {
	names := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, n := range names {
		names[i] = strings.ReplaceAll(strings.ReplaceAll(n, "~1", "/"), "~0", "~")
	}
	return names
}

// ValidatePatch checks what a patch can be refused for without reading the document:
// 1 to MaxPatchOperations operations of known kinds, each on a JSON-pointer path, with
// a JSON value where the kind needs one and an integer for incr. Stores call it before
// any I/O; its errors match ErrBadRequest.
func ValidatePatch(ops []PatchOperation) error {
	if len(ops) == 0 {
		return fmt.Errorf("%w: a patch needs at least one operation", ErrBadRequest)
	}
	if len(ops) > MaxPatchOperations {
		return fmt.Errorf("%w: a patch has at most %d operations, got %d", ErrBadRequest, MaxPatchOperations, len(ops))
	}
	for i, op := range ops {
		if !strings.HasPrefix(op.Path, "/") || op.Path == "/" {
			return fmt.Errorf("%w: patch operation %d: path %q is not a JSON pointer to a field", ErrBadRequest, i, op.Path)
		}
		switch op.Kind {
		case PatchSet, PatchAdd, PatchReplace:
			if len(op.Value) == 0 || !json.Valid(op.Value) {
				return fmt.Errorf("%w: patch operation %d (%s %s): value is not JSON", ErrBadRequest, i, op.Kind, op.Path)
			}
		case PatchIncrement:
			var n int64
			if err := json.Unmarshal(op.Value, &n); err != nil {
				return fmt.Errorf("%w: patch operation %d (incr %s): value %q is not an integer", ErrBadRequest, i, op.Path, op.Value)
			}
		case PatchRemove:
			if len(op.Value) != 0 {
				return fmt.Errorf("%w: patch operation %d (remove %s) takes no value", ErrBadRequest, i, op.Path)
			}
		default:
			return fmt.Errorf("%w: patch operation %d: unknown kind %q", ErrBadRequest, i, op.Kind)
		}
	}
	return nil
}

// FeedRange is an opaque slice of a container's partition-key space.
type FeedRange struct {
	MinInclusive string
	MaxExclusive string
}

// ChangeFeedStart says where a feed without a continuation begins.
type ChangeFeedStart int

const (
	// FromBeginning replays every document that currently exists.
	FromBeginning ChangeFeedStart = iota
	// FromNow skips what exists; Cosmos resolves it to the current second, so changes
	// made earlier in that same second may still be delivered.
	FromNow
	// FromTime starts at StartTime (second resolution, as Cosmos's If-Modified-Since).
	FromTime
)

// ChangeFeedOptions scopes and positions one change-feed read.
type ChangeFeedOptions struct {
	// Exactly one of FeedRange and PartitionKey may be set; neither reads the whole
	// container.
	FeedRange    *FeedRange
	PartitionKey string
	// Continuation resumes a previous read and wins over Start; it is bound to the scope
	// it was issued for.
	Continuation string
	Start        ChangeFeedStart
	StartTime    time.Time
	// MaxItemCount bounds the page size; 0 lets the store choose.
	MaxItemCount int
}

// ChangeFeedPage is one read of the feed. Continuation is always set and resumes after
// the last item; NotModified means there was nothing new.
type ChangeFeedPage struct {
	Items        []Item
	Continuation string
	NotModified  bool
}
