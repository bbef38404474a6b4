package informers

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// decodedItem is a feed or list item turned into a cache object.
type decodedItem struct {
	obj     versionedObject
	key     string
	deleted bool
}

// registration is one resource type's share of a container's pump.
type registration struct {
	resourceType string
	decode       func(database.Item) (decodedItem, error)
	// written returns, for a feed item that is a write this process made (its document
	// and _etag are in the write-through overlay), that write's decoded copy with the
	// item's _lsn: the decode is done already.
	written func(item database.Item, resourceID string) (decodedItem, bool)

	mu      sync.Mutex
	current *watcher // receives feed events
	pending *watcher // made by List, handed to the next Watch
}

func (r *registration) subscribe(w *watcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil && r.current != w {
		r.current.Stop()
	}
	r.current, r.pending = w, w
}

func (r *registration) takePending() *watcher {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.pending
	r.pending = nil
	return w
}

func (r *registration) publish(d decodedItem) {
	r.mu.Lock()
	w := r.current
	r.mu.Unlock()
	if w == nil {
		return
	}
	typ := watch.Modified
	if d.deleted {
		typ = watch.Deleted
	}
	w.send(typ, d.obj, d.key)
}

// Pump is the single change-feed reader of one container. Every registered type shares
// it, so an idle container costs one request per feed range per poll however many types
// are cached.
type Pump struct {
	container database.Container
	opts      Options
	logger    *slog.Logger
	metrics   *metrics
	start     time.Time

	// polled is when the last poll completed (unix nanoseconds): every feed range read
	// to its end without an error.
	polled atomic.Int64

	mu    sync.Mutex
	types map[string]*registration
}

func (p *Pump) markPolled(t time.Time) {
	p.polled.Store(t.UnixNano())
	p.metrics.lastPoll.WithLabelValues(p.container.Name()).Set(float64(t.UnixNano()) / 1e9)
}

func (p *Pump) lastPolled() time.Time { return time.Unix(0, p.polled.Load()) }

func newPump(c database.Container, opts Options, m *metrics, start time.Time) *Pump {
	// Counters exist at 0 from the start, so that alerts see their first increase.
	m.feedErrors.WithLabelValues(c.Name())
	return &Pump{
		container: c, opts: opts, metrics: m, start: start,
		logger: opts.Logger.With("container", c.Name()),
		types:  map[string]*registration{},
	}
}

func (p *Pump) register(r *registration) {
	p.metrics.malformed.WithLabelValues(p.container.Name(), r.resourceType)
	p.metrics.feedItems.WithLabelValues(p.container.Name(), r.resourceType)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.types[strings.ToLower(r.resourceType)] = r
}

func (p *Pump) registrationFor(resourceType string) *registration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.types[strings.ToLower(resourceType)]
}

// Run polls until ctx ends. Feed positions start at the pump's creation time, which is
// before any informer lists: watch before list, so nothing falls between the two.
func (p *Pump) Run(ctx context.Context) {
	ranges := p.feedRanges(ctx)
	if ranges == nil {
		return
	}
	continuations := make([]string, len(ranges))
	ticker := time.NewTicker(p.opts.PollInterval)
	defer ticker.Stop()
	for {
		oldest, failed := int64(0), false
		for i := range ranges {
			ts, err := p.drain(ctx, &ranges[i], &continuations[i])
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				failed = true
				p.metrics.feedErrors.WithLabelValues(p.container.Name()).Inc()
				p.logger.Warn("change feed read failed; retrying next poll", "feedRange", ranges[i], "error", err)
			}
			oldest = earliest(oldest, ts)
		}
		lag := 0.0
		if oldest > 0 {
			lag = max(0, time.Since(time.Unix(oldest, 0)).Seconds())
		}
		p.metrics.feedLag.WithLabelValues(p.container.Name()).Set(lag)
		if !failed {
			p.markPolled(time.Now())
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (p *Pump) feedRanges(ctx context.Context) []database.FeedRange {
	backoff := p.opts.PollInterval
	for {
		ranges, err := p.container.FeedRanges(ctx)
		if err == nil {
			return ranges
		}
		if ctx.Err() != nil {
			// Stopped, not failed: a read cut short by the stop is nothing to warn of.
			return nil
		}
		p.metrics.feedErrors.WithLabelValues(p.container.Name()).Inc()
		p.logger.Warn("reading feed ranges failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
}

// drain reads one feed range up to where it ended when read, publishing every page
// before moving the continuation past it: it stops at a page with room left (fewer
// items than asked for), which reached the end of the range at that moment, rather than
// asking again for the changes written since. Those wait for the next poll, like any
// change written just after one; chasing them made a container whose writers never
// pause cost several requests a poll, a page of a few documents each. A full page is
// followed at once, so a backlog is read in one poll. It returns the oldest _ts it
// delivered (0 if none): the change that waited longest for this poll.
func (p *Pump) drain(ctx context.Context, r *database.FeedRange, continuation *string) (int64, error) {
	var oldest int64
	for {
		opts := database.ChangeFeedOptions{FeedRange: r, Continuation: *continuation, MaxItemCount: p.opts.PageSize}
		if *continuation == "" {
			opts.Start, opts.StartTime = database.FromTime, p.start
		}
		page, err := p.container.ChangeFeed(ctx, opts)
		if err != nil {
			return oldest, err
		}
		for _, item := range page.Items {
			oldest = earliest(oldest, p.publish(item))
		}
		*continuation = page.Continuation
		if page.NotModified || len(page.Items) < p.opts.PageSize {
			return oldest, nil
		}
	}
}

// earliest is the older of two _ts values, 0 standing for none.
func earliest(a, b int64) int64 {
	if b > 0 && (a == 0 || b < a) {
		return b
	}
	return a
}

func (p *Pump) publish(item database.Item) int64 {
	_, resourceID, resourceType := api.Identify(item.Body)
	reg := p.registrationFor(resourceType)
	if reg == nil {
		return 0
	}
	d, ok := reg.written(item, resourceID)
	if !ok {
		var err error
		if d, err = reg.decode(item); err != nil {
			p.malformed(reg.resourceType, item, err)
			return 0
		}
	}
	p.metrics.feedItems.WithLabelValues(p.container.Name(), reg.resourceType).Inc()
	reg.publish(d)
	return d.obj.storedVersion().ts
}

func (p *Pump) malformed(resourceType string, item database.Item, err error) {
	p.metrics.malformed.WithLabelValues(p.container.Name(), resourceType).Inc()
	p.logger.Error("skipping malformed document", "id", item.ID, "partitionKey", item.PartitionKey, "resourceType", resourceType, "error", err)
}

// relistAfter is a jittered relist period, so replicas and types do not relist in step.
func (p *Pump) relistAfter() time.Duration {
	base := p.opts.RelistPeriod
	return base + time.Duration(rand.Float64()*p.opts.RelistJitter*float64(base))
}
