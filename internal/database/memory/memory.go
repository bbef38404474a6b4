// Package memory is an in-process database.Store with Cosmos semantics: etags, 404/409/412,
// atomic batches, ttl expiry and a change feed with continuations. Unit tests use it;
// it passes the same conformance suite as the Cosmos store.
package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/rawjson"
)

// Store holds containers in memory. The zero value is not usable; call New.
type Store struct {
	now     func() time.Time
	latency time.Duration

	mu         sync.Mutex
	containers map[string]*Container
}

// Option configures a Store.
type Option func(*Store)

// WithClock replaces time.Now, for ttl and change-feed time tests.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithLatency makes every request (each call of a Container method but Name; a List is
// one request however many items it yields) wait d before it is served, as a model of a
// remote store's round trip: the bench runs the memory store with it so that placement's
// concurrency shows once CPU is not the limit. The wait holds no lock, so concurrent
// requests wait side by side; a ctx that ends while waiting ends the request with its
// error. 0, the default, is no wait.
func WithLatency(d time.Duration) Option { return func(s *Store) { s.latency = max(d, 0) } }

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{now: time.Now, containers: map[string]*Container{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Container returns the named container, creating it on first use.
func (s *Store) Container(name string) database.Container {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[name]
	if !ok {
		c = &Container{name: name, now: s.now, latency: s.latency, partitions: map[string]map[string]*entry{}}
		s.containers[name] = c
	}
	return c
}

type entry struct {
	id, partitionKey string
	etag             string
	// rid is _rid, which Cosmos assigns a document when it is created and keeps through
	// every later write of it.
	rid       string
	body      []byte
	ts        int64
	lsn       int64
	expiresAt int64 // unix seconds; 0 = never
}

func (e *entry) item() database.Item {
	return database.Item{ID: e.id, PartitionKey: e.partitionKey, ETag: e.etag, Body: append([]byte(nil), e.body...)}
}

// feedItem is the entry as the change feed shows it: Cosmos adds _lsn, the write's
// sequence number, to change-feed items only.
func (e *entry) feedItem() database.Item {
	it := e.item()
	body := it.Body[:len(it.Body)-1] // the closing brace of the object stage encoded
	it.Body = append(fmt.Appendf(body, `,"_lsn":%d`, e.lsn), '}')
	return it
}

// Container is one in-memory container. All methods are safe for concurrent use.
type Container struct {
	name    string
	now     func() time.Time
	latency time.Duration

	mu         sync.Mutex
	lsn        int64
	partitions map[string]map[string]*entry
}

var _ database.Container = (*Container)(nil)

func (c *Container) Name() string { return c.name }

// wait is the start of every request: the modelled latency (WithLatency), holding no
// lock, then ctx's error if it ended.
func (c *Container) wait(ctx context.Context) error {
	if c.latency > 0 {
		t := time.NewTimer(c.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return ctx.Err()
}

func (c *Container) opError(op, pk, id string, status int, err error) error {
	kind := database.KindForStatus(status)
	if err == nil {
		err = kind
	}
	return &database.OpError{Op: op, Container: c.name, PartitionKey: pk, ID: id, StatusCode: status, Kind: kind, Err: err}
}

// lookup returns a live entry, dropping it first if its ttl has passed. Callers hold mu.
func (c *Container) lookup(pk, id string) *entry {
	e := c.partitions[pk][id]
	if e != nil && e.expiresAt != 0 && c.now().Unix() >= e.expiresAt {
		delete(c.partitions[pk], id)
		return nil
	}
	return e
}

func (c *Container) Get(ctx context.Context, pk, id string) (database.Item, error) {
	if err := c.wait(ctx); err != nil {
		return database.Item{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.lookup(pk, id)
	if e == nil {
		return database.Item{}, c.opError("get", pk, id, http.StatusNotFound, nil)
	}
	return e.item(), nil
}

func (c *Container) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	if err := c.wait(ctx); err != nil {
		return database.Item{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, status, err := c.stage(c.partitions, pk, "", body, false)
	if err != nil {
		return database.Item{}, c.opError("create", pk, e.id, status, err)
	}
	c.commit(e)
	return e.item(), nil
}

func (c *Container) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	if ifMatch == "" {
		return database.Item{}, &database.OpError{Op: "replace", Container: c.name, PartitionKey: pk, ID: id, Kind: database.ErrIfMatchRequired}
	}
	if err := c.wait(ctx); err != nil {
		return database.Item{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.lookup(pk, id)
	if cur == nil {
		return database.Item{}, c.opError("replace", pk, id, http.StatusNotFound, nil)
	}
	if cur.etag != ifMatch {
		return database.Item{}, c.opError("replace", pk, id, http.StatusPreconditionFailed, nil)
	}
	e, status, err := c.stage(c.partitions, pk, id, body, true)
	if err != nil {
		return database.Item{}, c.opError("replace", pk, id, status, err)
	}
	c.commit(e)
	return e.item(), nil
}

// Patch applies a partial document update as Cosmos does (see database.Container.Patch).
// opts.Condition is evaluated by the subset described at conditionSyntax; any other
// predicate is refused with an error that matches none of the vocabulary.
func (c *Container) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	cond, err := preparePatch(ops, opts.Condition)
	if err != nil {
		return database.Item{}, c.patchRefused("patch", pk, id, err)
	}
	if err := c.wait(ctx); err != nil {
		return database.Item{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, status, err := c.stagePatch(c.partitions, pk, id, ops, opts.IfMatch, cond)
	if status != 0 {
		return database.Item{}, c.opError("patch", pk, id, status, err)
	}
	c.commit(e)
	if opts.Minimal {
		return database.Item{ID: e.id, PartitionKey: e.partitionKey, ETag: e.etag}, nil
	}
	return e.item(), nil
}

// preparePatch does the checks of a patch that need no document.
func preparePatch(ops []database.PatchOperation, conditionText string) (*condition, error) {
	if err := database.ValidatePatch(ops); err != nil {
		return nil, err
	}
	if conditionText == "" {
		return nil, nil
	}
	return parseCondition(conditionText)
}

// patchRefused reports a patch refused before it reached the document: malformed
// (ErrBadRequest, as Cosmos would answer) or beyond the memory store's conditions.
func (c *Container) patchRefused(op, pk, id string, err error) error {
	opErr := &database.OpError{Op: op, Container: c.name, PartitionKey: pk, ID: id, Err: err}
	if errors.Is(err, database.ErrBadRequest) {
		opErr.Kind = database.ErrBadRequest
	}
	return opErr
}

// stagePatch builds the entry a patch of the live document would store, in the order
// Cosmos checks: the document exists, If-Match, the condition, then the operations.
func (c *Container) stagePatch(parts map[string]map[string]*entry, pk, id string, ops []database.PatchOperation, ifMatch string, cond *condition) (*entry, int, error) {
	cur := c.lookupIn(parts, pk, id)
	if cur == nil {
		return nil, http.StatusNotFound, nil
	}
	if ifMatch != "" && cur.etag != ifMatch {
		return nil, http.StatusPreconditionFailed, nil
	}
	if cond != nil && !cond.matches(cur.body) {
		return nil, http.StatusPreconditionFailed, errors.New("the patch condition does not hold")
	}
	body, err := applyPatch(cur.body, ops)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	e, status, err := c.stageValid(parts, pk, id, body, true)
	if err != nil {
		return nil, status, err
	}
	return e, 0, nil // status 0: staged
}

func (c *Container) Delete(ctx context.Context, pk, id, ifMatch string) error {
	if err := c.wait(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.lookup(pk, id)
	if cur == nil {
		return c.opError("delete", pk, id, http.StatusNotFound, nil)
	}
	if ifMatch != "" && cur.etag != ifMatch {
		return c.opError("delete", pk, id, http.StatusPreconditionFailed, nil)
	}
	delete(c.partitions[pk], id)
	return nil
}

// stage validates a client's body and builds the entry it would store, without storing
// it. replace selects Replace semantics (the id must match and exist) over Create's.
func (c *Container) stage(parts map[string]map[string]*entry, pk, id string, body []byte, replace bool) (*entry, int, error) {
	// Cosmos refuses a body that is not JSON, and stores what it accepts compacted.
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		return &entry{id: id}, http.StatusBadRequest, fmt.Errorf("body is not a JSON object")
	}
	return c.stageValid(parts, pk, id, compact.Bytes(), replace)
}

// systemProperties are what Cosmos adds to every stored document, in its order; _lsn,
// copied from a change-feed item into a body written back, is not stored either.
var systemProperties = []string{"_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"}

// stageValid is stage for a body that is valid, compact JSON: a client's, compacted, or
// a patch's result.
func (c *Container) stageValid(parts map[string]map[string]*entry, pk, id string, body []byte, replace bool) (*entry, int, error) {
	doc, err := parseMembers(body)
	if err != nil {
		return &entry{id: id}, http.StatusBadRequest, fmt.Errorf("body is not a JSON object")
	}
	var docID string
	if raw, _ := doc.get("id"); json.Unmarshal(raw, &docID) != nil || docID == "" {
		return &entry{id: id}, http.StatusBadRequest, fmt.Errorf("body has no string id")
	}
	if replace && docID != id {
		return &entry{id: id}, http.StatusBadRequest, fmt.Errorf("body id %q does not match %q", docID, id)
	}
	var docPK string
	if raw, ok := doc.get("partitionKey"); !ok || json.Unmarshal(raw, &docPK) != nil || docPK != pk {
		return &entry{id: docID}, http.StatusBadRequest, fmt.Errorf("body partitionKey does not match the request's %q", pk)
	}
	if !replace && c.lookupIn(parts, pk, docID) != nil {
		return &entry{id: docID}, http.StatusConflict, database.ErrConflict
	}
	now := c.now()
	lsn := c.lsn + 1
	e := &entry{id: docID, partitionKey: pk, ts: now.Unix(), lsn: lsn, rid: fmt.Sprintf("mem%d", lsn)}
	if replace {
		if cur := c.lookupIn(parts, pk, docID); cur != nil {
			e.rid = cur.rid
		}
	}
	e.etag = fmt.Sprintf("\"%08x-0000-0000-0000-%012x\"", len(c.name), lsn)
	if raw, ok := doc.get("ttl"); ok {
		var ttl int64
		if err := json.Unmarshal(raw, &ttl); err != nil {
			return e, http.StatusBadRequest, fmt.Errorf("ttl is not an integer")
		}
		if ttl > 0 {
			e.expiresAt = e.ts + ttl
		}
	}
	// Cosmos assigns the system properties itself, after the document's own.
	for _, k := range systemProperties {
		doc.remove(k)
	}
	doc.set("_rid", rawjson.AppendString(nil, e.rid))
	doc.set("_self", rawjson.AppendString(nil, fmt.Sprintf("dbs/memory/colls/%s/docs/%s/", c.name, docID)))
	doc.set("_etag", rawjson.AppendString(nil, e.etag))
	doc.set("_attachments", []byte(`"attachments/"`))
	doc.set("_ts", strconv.AppendInt(nil, e.ts, 10))
	e.body = doc.appendTo(make([]byte, 0, len(body)+160))
	return e, 0, nil
}

func (c *Container) lookupIn(parts map[string]map[string]*entry, pk, id string) *entry {
	e := parts[pk][id]
	if e != nil && e.expiresAt != 0 && c.now().Unix() >= e.expiresAt {
		return nil
	}
	return e
}

func (c *Container) commit(e *entry) {
	c.commitTo(c.partitions, e)
	c.lsn = e.lsn
}

func (c *Container) commitTo(parts map[string]map[string]*entry, e *entry) {
	p := parts[e.partitionKey]
	if p == nil {
		p = map[string]*entry{}
		parts[e.partitionKey] = p
	}
	p[e.id] = e
}

func (c *Container) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	return func(yield func(database.Item, error) bool) {
		if err := c.wait(ctx); err != nil {
			yield(database.Item{}, err)
			return
		}
		c.mu.Lock()
		var items []database.Item
		for pk, part := range c.partitions {
			if opts.PartitionKey != "" && pk != opts.PartitionKey {
				continue
			}
			for id := range part {
				e := c.lookup(pk, id)
				if e == nil || !strings.EqualFold(resourceType(e.body), opts.ResourceType) {
					continue
				}
				items = append(items, e.item())
			}
		}
		c.mu.Unlock()
		sort.Slice(items, func(i, j int) bool {
			if items[i].PartitionKey != items[j].PartitionKey {
				return items[i].PartitionKey < items[j].PartitionKey
			}
			return items[i].ID < items[j].ID
		})
		for _, it := range items {
			if !yield(it, nil) {
				return
			}
		}
	}
}

// resourceType is the document's top-level resourceType, read as Cosmos matches a
// property: by its exact name. Every List reads it from every document of the container,
// so it slices the body rather than decoding it.
func resourceType(body []byte) string {
	fields, err := rawjson.Fields(body, "resourceType")
	if err != nil {
		return ""
	}
	return rawjson.String(fields[0])
}

func (c *Container) Batch(ctx context.Context, pk string, ops []database.BatchOperation) ([]database.BatchResult, error) {
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Work on a copy of the partition so that a failing operation leaves nothing behind.
	staged := map[string]map[string]*entry{pk: {}}
	for id := range c.partitions[pk] {
		if e := c.lookup(pk, id); e != nil {
			staged[pk][id] = e
		}
	}
	saved := c.lsn
	results := make([]database.BatchResult, 0, len(ops))
	fail := func(i, status int) ([]database.BatchResult, error) {
		c.lsn = saved
		return nil, &database.OpError{Op: "batch", Container: c.name, PartitionKey: pk, StatusCode: status,
			Kind: database.KindForStatus(status), Err: &database.BatchError{Index: i, StatusCode: status, Kind: database.KindForStatus(status)}}
	}
	for i, op := range ops {
		switch op.Kind {
		case database.BatchCreate, database.BatchReplace:
			replace := op.Kind == database.BatchReplace
			if replace {
				if op.IfMatch == "" {
					return nil, &database.OpError{Op: "batch", Container: c.name, PartitionKey: pk, ID: op.ID, Kind: database.ErrIfMatchRequired}
				}
				cur := staged[pk][op.ID]
				if cur == nil {
					return fail(i, http.StatusNotFound)
				}
				if cur.etag != op.IfMatch {
					return fail(i, http.StatusPreconditionFailed)
				}
			}
			e, status, err := c.stage(staged, pk, op.ID, op.Body, replace)
			if err != nil || status != 0 {
				if status == 0 {
					status = http.StatusBadRequest
				}
				return fail(i, status)
			}
			c.lsn = e.lsn
			c.commitTo(staged, e)
			status = http.StatusCreated
			if replace {
				status = http.StatusOK
			}
			results = append(results, database.BatchResult{StatusCode: status, ETag: e.etag, Body: append([]byte(nil), e.body...)})
		case database.BatchPatch:
			cond, err := preparePatch(op.PatchOperations, op.Condition)
			if err != nil {
				return nil, c.patchRefused("batch", pk, op.ID, fmt.Errorf("batch operation %d: %w", i, err))
			}
			e, status, _ := c.stagePatch(staged, pk, op.ID, op.PatchOperations, op.IfMatch, cond)
			if e == nil {
				return fail(i, status)
			}
			c.lsn = e.lsn
			c.commitTo(staged, e)
			results = append(results, database.BatchResult{StatusCode: http.StatusOK, ETag: e.etag, Body: append([]byte(nil), e.body...)})
		case database.BatchRead:
			cur := staged[pk][op.ID]
			if cur == nil {
				return fail(i, http.StatusNotFound)
			}
			results = append(results, database.BatchResult{StatusCode: http.StatusOK, ETag: cur.etag, Body: append([]byte(nil), cur.body...)})
		case database.BatchDelete:
			cur := staged[pk][op.ID]
			if cur == nil {
				return fail(i, http.StatusNotFound)
			}
			if op.IfMatch != "" && cur.etag != op.IfMatch {
				return fail(i, http.StatusPreconditionFailed)
			}
			delete(staged[pk], op.ID)
			results = append(results, database.BatchResult{StatusCode: http.StatusNoContent})
		default:
			return nil, fmt.Errorf("batch operation %d: unknown kind %q", i, op.Kind)
		}
	}
	c.partitions[pk] = staged[pk]
	return results, nil
}

// The memory store has one feed range covering the whole key space, as the emulator has.
var wholeRange = database.FeedRange{MinInclusive: "", MaxExclusive: "FF"}

func (c *Container) FeedRanges(ctx context.Context) ([]database.FeedRange, error) {
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	return []database.FeedRange{wholeRange}, nil
}

// continuation is the memory feed's position: the last sequence number delivered.
const continuationPrefix = "memory-lsn:"

func parseContinuation(s string) (int64, error) {
	rest, ok := strings.CutPrefix(s, continuationPrefix)
	if !ok {
		return 0, fmt.Errorf("continuation %q was not issued by the memory store", s)
	}
	return strconv.ParseInt(rest, 10, 64)
}

func (c *Container) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	if err := c.wait(ctx); err != nil {
		return database.ChangeFeedPage{}, err
	}
	if opts.FeedRange != nil && opts.PartitionKey != "" {
		return database.ChangeFeedPage{}, errors.New("change feed: set a feed range or a partition key, not both")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var after int64
	var since int64 = -1
	switch {
	case opts.Continuation != "":
		lsn, err := parseContinuation(opts.Continuation)
		if err != nil {
			return database.ChangeFeedPage{}, &database.OpError{Op: "change feed", Container: c.name, StatusCode: http.StatusBadRequest, Err: err}
		}
		after = lsn
	case opts.Start == database.FromNow:
		after = c.lsn
	case opts.Start == database.FromTime:
		since = opts.StartTime.Unix()
	}
	var changed []*entry
	for pk, part := range c.partitions {
		if opts.PartitionKey != "" && pk != opts.PartitionKey {
			continue
		}
		for id := range part {
			e := c.lookup(pk, id)
			if e != nil && e.lsn > after && e.ts >= since {
				changed = append(changed, e)
			}
		}
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].lsn < changed[j].lsn })
	if opts.MaxItemCount > 0 && len(changed) > opts.MaxItemCount {
		changed = changed[:opts.MaxItemCount]
	}
	page := database.ChangeFeedPage{NotModified: len(changed) == 0}
	last := after
	if since >= 0 && len(changed) == 0 {
		last = c.lsn
	}
	for _, e := range changed {
		page.Items = append(page.Items, e.feedItem())
		last = e.lsn
	}
	page.Continuation = continuationPrefix + strconv.FormatInt(last, 10)
	return page, nil
}
