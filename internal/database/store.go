// Package database is hcpsched's view of Cosmos DB: a Store of named containers with
// etag-guarded writes, transactional batches within a partition and a change feed. Two
// implementations pass one conformance suite: cosmos (the real protocol, via azcosmos)
// and memory (in-process, for unit tests).
package database

import (
	"context"
	"iter"
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
// ErrThrottled.
type Container interface {
	Name() string
	// Get is a point read.
	Get(ctx context.Context, partitionKey, id string) (Item, error)
	// Create stores a new document; ErrConflict if the id exists in the partition.
	Create(ctx context.Context, partitionKey string, body []byte) (Item, error)
	// Replace overwrites a document only if its current _etag is ifMatch. An empty
	// ifMatch is refused without I/O: unguarded writes lose other writers' changes.
	Replace(ctx context.Context, partitionKey, id string, body []byte, ifMatch string) (Item, error)
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
)

// BatchOperation is one step of a transactional batch. Replace requires IfMatch; Delete
// honours it when set.
type BatchOperation struct {
	Kind    BatchOperationKind
	ID      string
	Body    []byte
	IfMatch string
}

// BatchResult is the outcome of one operation of a successful batch.
type BatchResult struct {
	StatusCode int
	ETag       string
	// Body is the document for Create, Replace and Read.
	Body []byte
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
