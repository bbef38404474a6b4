// Package cosmos is the database.Store that speaks the real Cosmos DB protocol through
// azcosmos. It authenticates with azidentity's default credential chain; a key is used
// only when one is configured explicitly (the emulator).
package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/rawjson"
)

// PartitionKeyPath is where ARO-HCP's containers take the partition key from.
const PartitionKeyPath = "/partitionKey"

// Config says where the database is and how to authenticate.
type Config struct {
	Endpoint string
	Database string
	// Key selects key authentication. Leave it empty in production: the default
	// credential chain (workload identity, managed identity, az CLI) is used then.
	Key string
	// TryTimeout bounds each HTTP attempt of every call; 0 is DefaultTryTimeout.
	TryTimeout time.Duration
	// ClientOptions carries transport and pipeline policies (metrics, retries).
	ClientOptions azcore.ClientOptions
}

// NewClient builds an azcosmos client for cfg. Every HTTP attempt it makes is bounded by
// cfg.TryTimeout (see tryTimeoutPolicy).
func NewClient(cfg Config) (*azcosmos.Client, error) {
	if cfg.Endpoint == "" {
		return nil, errors.New("cosmos: endpoint is required")
	}
	tryTimeout := cfg.TryTimeout
	if tryTimeout <= 0 {
		tryTimeout = DefaultTryTimeout
	}
	opts := &azcosmos.ClientOptions{ClientOptions: cfg.ClientOptions}
	// First of the per-retry policies, so that the attempt's deadline covers the others
	// (metrics among them); a fresh slice leaves the caller's options untouched.
	opts.PerRetryPolicies = append([]policy.Policy{tryTimeoutPolicy{timeout: tryTimeout}}, cfg.ClientOptions.PerRetryPolicies...)
	if cfg.Key != "" {
		cred, err := azcosmos.NewKeyCredential(cfg.Key)
		if err != nil {
			return nil, fmt.Errorf("cosmos: key credential: %w", err)
		}
		client, err := azcosmos.NewClientWithKey(cfg.Endpoint, cred, opts)
		if err != nil {
			return nil, fmt.Errorf("cosmos: client for %s: %w", cfg.Endpoint, err)
		}
		return client, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: cfg.ClientOptions})
	if err != nil {
		return nil, fmt.Errorf("cosmos: default Azure credential: %w", err)
	}
	client, err := azcosmos.NewClient(cfg.Endpoint, cred, opts)
	if err != nil {
		return nil, fmt.Errorf("cosmos: client for %s: %w", cfg.Endpoint, err)
	}
	return client, nil
}

// Store is a database.Store over one Cosmos database.
type Store struct {
	client   *azcosmos.Client
	database string
}

// New returns a store for the named database; it does no I/O.
func New(client *azcosmos.Client, databaseName string) *Store {
	return &Store{client: client, database: databaseName}
}

func (s *Store) Container(name string) database.Container {
	c, err := s.client.NewContainer(s.database, name)
	if err != nil {
		// NewContainer only validates its arguments; an empty name is a programming error.
		panic(fmt.Sprintf("cosmos: container %q: %v", name, err))
	}
	return &Container{name: name, client: c}
}

// EnsureDatabase creates the database if it does not exist.
func (s *Store) EnsureDatabase(ctx context.Context) error {
	_, err := s.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: s.database}, nil)
	if err != nil && statusOf(err) != http.StatusConflict {
		return fmt.Errorf("cosmos: create database %s: %w", s.database, err)
	}
	return nil
}

// EnsureContainer creates a container laid out as ARO-HCP's are (partition key
// /partitionKey, per-item ttl enabled) if it does not exist.
func (s *Store) EnsureContainer(ctx context.Context, name string) error {
	db, err := s.client.NewDatabase(s.database)
	if err != nil {
		return fmt.Errorf("cosmos: database %s: %w", s.database, err)
	}
	ttlOn := int32(-1) // per-item ttl honoured, nothing expires by default
	_, err = db.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     name,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{PartitionKeyPath}},
		DefaultTimeToLive:      &ttlOn,
	}, nil)
	if err != nil && statusOf(err) != http.StatusConflict {
		return fmt.Errorf("cosmos: create container %s: %w", name, err)
	}
	return nil
}

// Container is one Cosmos container.
type Container struct {
	name   string
	client *azcosmos.ContainerClient
}

var _ database.Container = (*Container)(nil)

func (c *Container) Name() string { return c.name }

func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func (c *Container) opError(op, pk, id string, err error) error {
	if err == nil {
		return nil
	}
	status := statusOf(err)
	return &database.OpError{Op: op, Container: c.name, PartitionKey: pk, ID: id, StatusCode: status, Kind: database.KindForStatus(status), Err: err}
}

// envelope reads a stored document's id, partitionKey and _etag without decoding the
// rest of it: every change-feed item and write response passes through here. A body
// that is not a JSON object has none of them.
func envelope(body []byte) (id, pk, etag string) {
	fields, err := rawjson.Fields(body, "id", "partitionKey", "_etag")
	if err != nil {
		return "", "", ""
	}
	return rawjson.String(fields[0]), rawjson.String(fields[1]), rawjson.String(fields[2])
}

func itemFrom(body []byte) database.Item {
	id, pk, etag := envelope(body)
	return database.Item{ID: id, PartitionKey: pk, ETag: etag, Body: body}
}

var writeOptions = azcosmos.ItemOptions{EnableContentResponseOnWrite: true}

func (c *Container) Get(ctx context.Context, pk, id string) (database.Item, error) {
	resp, err := c.client.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil)
	if err != nil {
		return database.Item{}, c.opError("get", pk, id, err)
	}
	return itemFrom(resp.Value), nil
}

func (c *Container) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	opts := writeOptions
	resp, err := c.client.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), body, &opts)
	if err != nil {
		id, _, _ := envelope(body)
		return database.Item{}, c.opError("create", pk, id, err)
	}
	return itemFrom(resp.Value), nil
}

// Replace is always If-Match guarded, which is what makes retrying one that timed out
// safe (see tryTimeoutPolicy): if the first attempt was applied, the retry answers 412.
func (c *Container) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	if ifMatch == "" {
		return database.Item{}, &database.OpError{Op: "replace", Container: c.name, PartitionKey: pk, ID: id, Kind: database.ErrIfMatchRequired}
	}
	opts := writeOptions
	etag := azcore.ETag(ifMatch)
	opts.IfMatchEtag = &etag
	resp, err := c.client.ReplaceItem(ctx, azcosmos.NewPartitionKeyString(pk), id, body, &opts)
	if err != nil {
		return database.Item{}, c.opError("replace", pk, id, err)
	}
	return itemFrom(resp.Value), nil
}

// Patch is a Cosmos partial document update (PatchItem). Like a write that timed out, a
// patch is not replayed by the SDK (see tryTimeoutPolicy); one guarded by IfMatch or a
// Condition that its own effect falsifies answers 412 if the caller retries it after it
// was applied.
func (c *Container) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, popts database.PatchOptions) (database.Item, error) {
	patch, err := patchOperations(ops, popts.Condition)
	if err != nil {
		return database.Item{}, &database.OpError{Op: "patch", Container: c.name, PartitionKey: pk, ID: id, Kind: database.ErrBadRequest, Err: err}
	}
	opts := writeOptions
	opts.EnableContentResponseOnWrite = !popts.Minimal
	if popts.IfMatch != "" {
		etag := azcore.ETag(popts.IfMatch)
		opts.IfMatchEtag = &etag
	}
	resp, err := c.client.PatchItem(ctx, azcosmos.NewPartitionKeyString(pk), id, patch, &opts)
	if err != nil {
		return database.Item{}, c.opError("patch", pk, id, err)
	}
	if popts.Minimal {
		return database.Item{ID: id, PartitionKey: pk, ETag: string(resp.ETag)}, nil
	}
	return itemFrom(resp.Value), nil
}

// patchOperations translates a validated patch into azcosmos's form.
func patchOperations(ops []database.PatchOperation, condition string) (azcosmos.PatchOperations, error) {
	var p azcosmos.PatchOperations
	if err := database.ValidatePatch(ops); err != nil {
		return p, err
	}
	if condition != "" {
		// azcosmos v1.5.0 writes the condition between quotes without escaping it, so a
		// double quote or a backslash in it would make the request invalid JSON; escaping
		// it here yields a JSON string that decodes to the condition as given.
		quoted, err := json.Marshal(condition)
		if err != nil {
			return p, fmt.Errorf("patch condition: %w", err)
		}
		p.SetCondition(string(quoted[1 : len(quoted)-1]))
	}
	for _, op := range ops {
		// json.RawMessage marshals as itself, JSON null included (a nil interface would
		// be dropped by the SDK's omitempty).
		switch op.Kind {
		case database.PatchSet:
			p.AppendSet(op.Path, op.Value)
		case database.PatchAdd:
			p.AppendAdd(op.Path, op.Value)
		case database.PatchReplace:
			p.AppendReplace(op.Path, op.Value)
		case database.PatchRemove:
			p.AppendRemove(op.Path)
		case database.PatchIncrement:
			var n int64
			if err := json.Unmarshal(op.Value, &n); err != nil {
				return p, fmt.Errorf("incr %s: %w", op.Path, err)
			}
			p.AppendIncrement(op.Path, n)
		}
	}
	return p, nil
}

func (c *Container) Delete(ctx context.Context, pk, id, ifMatch string) error {
	var opts azcosmos.ItemOptions
	if ifMatch != "" {
		etag := azcore.ETag(ifMatch)
		opts.IfMatchEtag = &etag
	}
	_, err := c.client.DeleteItem(ctx, azcosmos.NewPartitionKeyString(pk), id, &opts)
	return c.opError("delete", pk, id, err)
}

// listQuery is a plain filter: the gateway serves it across partitions, which rules out
// ORDER BY and aggregates.
const listQuery = "SELECT * FROM c WHERE STRINGEQUALS(c.resourceType, @resourceType, true)"

func (c *Container) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	return func(yield func(database.Item, error) bool) {
		pk := azcosmos.NewPartitionKey()
		if opts.PartitionKey != "" {
			pk = azcosmos.NewPartitionKeyString(opts.PartitionKey)
		}
		qopts := &azcosmos.QueryOptions{
			QueryParameters: []azcosmos.QueryParameter{{Name: "@resourceType", Value: opts.ResourceType}},
			PageSizeHint:    int32(opts.PageSize),
		}
		if opts.PageSize <= 0 {
			qopts.PageSizeHint = -1
		}
		pager := c.client.NewQueryItemsPager(listQuery, pk, qopts)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				yield(database.Item{}, c.opError("list", opts.PartitionKey, "", err))
				return
			}
			for _, body := range page.Items {
				if !yield(itemFrom(body), nil) {
					return
				}
			}
		}
	}
}

func (c *Container) Batch(ctx context.Context, pk string, ops []database.BatchOperation) ([]database.BatchResult, error) {
	b := c.client.NewTransactionalBatch(azcosmos.NewPartitionKeyString(pk))
	for i, op := range ops {
		var itemOpts *azcosmos.TransactionalBatchItemOptions
		if op.IfMatch != "" {
			etag := azcore.ETag(op.IfMatch)
			itemOpts = &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &etag}
		}
		switch op.Kind {
		case database.BatchCreate:
			b.CreateItem(op.Body, itemOpts)
		case database.BatchReplace:
			if op.IfMatch == "" {
				return nil, &database.OpError{Op: "batch", Container: c.name, PartitionKey: pk, ID: op.ID, Kind: database.ErrIfMatchRequired}
			}
			b.ReplaceItem(op.ID, op.Body, itemOpts)
		case database.BatchRead:
			b.ReadItem(op.ID, nil)
		case database.BatchDelete:
			b.DeleteItem(op.ID, itemOpts)
		case database.BatchPatch:
			patch, err := patchOperations(op.PatchOperations, op.Condition)
			if err != nil {
				return nil, &database.OpError{Op: "batch", Container: c.name, PartitionKey: pk, ID: op.ID, Kind: database.ErrBadRequest,
					Err: fmt.Errorf("batch operation %d: %w", i, err)}
			}
			b.PatchItem(op.ID, patch, itemOpts)
		default:
			return nil, fmt.Errorf("batch operation %d: unknown kind %q", i, op.Kind)
		}
	}
	resp, err := c.client.ExecuteTransactionalBatch(ctx, b, &azcosmos.TransactionalBatchOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		return nil, c.opError("batch", pk, "", err)
	}
	if !resp.Success {
		// The failing operation carries its own status; the others report 424.
		for i, r := range resp.OperationResults {
			status := int(r.StatusCode)
			if status >= 400 && status != http.StatusFailedDependency {
				kind := database.KindForStatus(status)
				return nil, &database.OpError{Op: "batch", Container: c.name, PartitionKey: pk, StatusCode: status, Kind: kind,
					Err: &database.BatchError{Index: i, StatusCode: status, Kind: kind}}
			}
		}
		return nil, &database.OpError{Op: "batch", Container: c.name, PartitionKey: pk, Err: errors.New("batch failed without a failing operation")}
	}
	results := make([]database.BatchResult, len(resp.OperationResults))
	for i, r := range resp.OperationResults {
		results[i] = database.BatchResult{StatusCode: int(r.StatusCode), ETag: string(r.ETag), Body: r.ResourceBody}
	}
	return results, nil
}

func (c *Container) FeedRanges(ctx context.Context) ([]database.FeedRange, error) {
	ranges, err := c.client.ReadFeedRanges(ctx, nil)
	if err != nil {
		return nil, c.opError("read feed ranges", "", "", err)
	}
	out := make([]database.FeedRange, len(ranges))
	for i, r := range ranges {
		out[i] = database.FeedRange{MinInclusive: r.MinInclusive, MaxExclusive: r.MaxExclusive}
	}
	return out, nil
}

// wholeKeySpace is the effective-partition-key range of an entire container.
var wholeKeySpace = azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}

func (c *Container) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	if opts.FeedRange != nil && opts.PartitionKey != "" {
		return database.ChangeFeedPage{}, errors.New("change feed: set a feed range or a partition key, not both")
	}
	feedRange := wholeKeySpace
	if opts.FeedRange != nil {
		feedRange = azcosmos.FeedRange{MinInclusive: opts.FeedRange.MinInclusive, MaxExclusive: opts.FeedRange.MaxExclusive}
	}
	req := &azcosmos.ChangeFeedOptions{MaxItemCount: int32(opts.MaxItemCount), FeedRange: &feedRange}
	if opts.PartitionKey != "" {
		pk := azcosmos.NewPartitionKeyString(opts.PartitionKey)
		req.PartitionKey = &pk
	}
	switch {
	case opts.Continuation != "":
		cont := opts.Continuation
		req.Continuation = &cont
	case opts.Start == database.FromNow:
		now := time.Now()
		req.StartFrom = &now
	case opts.Start == database.FromTime:
		start := opts.StartTime
		req.StartFrom = &start
	}
	resp, err := c.client.ReadChangeFeed(ctx, req)
	if err != nil {
		return database.ChangeFeedPage{}, c.opError("change feed", opts.PartitionKey, "", err)
	}
	page := database.ChangeFeedPage{Continuation: resp.ContinuationToken, NotModified: len(resp.Items) == 0}
	if page.Continuation == "" {
		page.Continuation = opts.Continuation
	}
	for _, body := range resp.Items {
		page.Items = append(page.Items, itemFrom(body))
	}
	return page, nil
}

// DeleteDatabase removes the whole database; tests use it to clean up.
func (s *Store) DeleteDatabase(ctx context.Context) error {
	db, err := s.client.NewDatabase(s.database)
	if err != nil {
		return fmt.Errorf("cosmos: database %s: %w", s.database, err)
	}
	if _, err := db.Delete(ctx, nil); err != nil && statusOf(err) != http.StatusNotFound {
		return fmt.Errorf("cosmos: delete database %s: %w", s.database, err)
	}
	return nil
}
