package scenario

import (
	"context"
	"errors"
	"iter"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
)

// countingStore counts each operation on a store in the metric the Cosmos client records
// (hcpsched_cosmos_requests_total{operation,status_code,cosmos_container,controller}), so
// that a backend running on the memory store reports its requests per placement, by
// container and by the controller whose reconcile made them, exactly as it does on
// Cosmos. The memory store has no request units; it charges nothing.
type countingStore struct {
	database.Store
	requests *prometheus.CounterVec
}

func newCountingStore(s database.Store, reg prometheus.Registerer) (*countingStore, error) {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricCosmosRequests,
		Help: "Cosmos DB requests by operation, HTTP status code, container and controller (\"none\" outside a reconcile), counted by the scenario runner around the memory store.",
	}, []string{cosmos.LabelOperation, cosmos.LabelStatusCode, cosmos.LabelContainer, cosmos.LabelController})
	if err := reg.Register(requests); err != nil {
		return nil, err
	}
	return &countingStore{Store: s, requests: requests}, nil
}

func (s *countingStore) Container(name string) database.Container {
	return &countingContainer{Container: s.Store.Container(name), requests: s.requests}
}

type countingContainer struct {
	database.Container
	requests *prometheus.CounterVec
}

// count records one request; ok is the status of a success.
func (c *countingContainer) count(ctx context.Context, operation string, ok int, err error) {
	c.requests.WithLabelValues(operation, statusOf(ok, err), c.Name(), database.CallerLabel(ctx)).Inc()
}

// statusOf is the HTTP status Cosmos would have answered: the memory store puts it in
// every error it returns.
func statusOf(ok int, err error) string {
	if err == nil {
		return strconv.Itoa(ok)
	}
	if op, isOp := errors.AsType[*database.OpError](err); isOp && op.StatusCode != 0 {
		return strconv.Itoa(op.StatusCode)
	}
	return cosmos.StatusError
}

func (c *countingContainer) Get(ctx context.Context, pk, id string) (database.Item, error) {
	it, err := c.Container.Get(ctx, pk, id)
	c.count(ctx, cosmos.OperationRead, 200, err)
	return it, err
}

func (c *countingContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	it, err := c.Container.Create(ctx, pk, body)
	c.count(ctx, cosmos.OperationCreate, 201, err)
	return it, err
}

func (c *countingContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	it, err := c.Container.Replace(ctx, pk, id, body, ifMatch)
	c.count(ctx, cosmos.OperationReplace, 200, err)
	return it, err
}

func (c *countingContainer) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	it, err := c.Container.Patch(ctx, pk, id, ops, opts)
	c.count(ctx, cosmos.OperationPatch, 200, err)
	return it, err
}

func (c *countingContainer) Delete(ctx context.Context, pk, id, ifMatch string) error {
	err := c.Container.Delete(ctx, pk, id, ifMatch)
	c.count(ctx, cosmos.OperationDelete, 204, err)
	return err
}

// List counts one query per listing: the memory store pages nothing.
func (c *countingContainer) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	return func(yield func(database.Item, error) bool) {
		var failed error
		defer func() { c.count(ctx, cosmos.OperationQuery, 200, failed) }()
		for it, err := range c.Container.List(ctx, opts) {
			if err != nil {
				failed = err
			}
			if !yield(it, err) {
				return
			}
		}
	}
}

func (c *countingContainer) Batch(ctx context.Context, pk string, ops []database.BatchOperation) ([]database.BatchResult, error) {
	res, err := c.Container.Batch(ctx, pk, ops)
	c.count(ctx, cosmos.OperationBatch, 200, err)
	return res, err
}

func (c *countingContainer) FeedRanges(ctx context.Context) ([]database.FeedRange, error) {
	fr, err := c.Container.FeedRanges(ctx)
	c.count(ctx, cosmos.OperationReadFeedRanges, 200, err)
	return fr, err
}

// ChangeFeed counts a page without changes as Cosmos's 304.
func (c *countingContainer) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	page, err := c.Container.ChangeFeed(ctx, opts)
	status := 200
	if err == nil && page.NotModified {
		status = 304
	}
	c.count(ctx, cosmos.OperationChangeFeed, status, err)
	return page, err
}
