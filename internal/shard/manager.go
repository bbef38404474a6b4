package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/database"
)

// LeaseResourceType is the resourceType of every document in the lease container: one
// per shard and one per live replica (its membership heartbeat).
const LeaseResourceType = "hcpsched/shardLeases"

// MaxShards keeps a renewal to one transactional batch: Cosmos takes at most 100
// operations in one, and the heartbeat is one of them.
const MaxShards = 99

const (
	kindShard  = "shard"
	kindMember = "member"
)

// Clock is the manager's time source; tests pass one they step by hand.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Config configures a Manager.
type Config struct {
	// Container holds the lease documents; every replica of a group must use the same.
	Container database.Container
	// Group partitions the leases: the component ("backend", "fleet"), so that the two
	// binaries shard apart.
	Group string
	// Identity must be unique per process; it is recorded as the holder of its leases.
	Identity string
	// Shards is how many shards the keys split into; every replica must agree.
	Shards                                    int
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Clock is nil for the real clock. With the real clock a held shard's context also
	// ends on a timer at the renew deadline, between ticks.
	Clock      Clock
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Validate names what is wrong with the config.
func (c Config) Validate() error {
	var errs []error
	if c.Container == nil {
		errs = append(errs, errors.New("shard: a lease container is required"))
	}
	if c.Group == "" || c.Identity == "" {
		errs = append(errs, errors.New("shard: a group and an identity are required"))
	}
	if c.Shards < 1 || c.Shards > MaxShards {
		errs = append(errs, fmt.Errorf("shard: shards must be between 1 and %d, got %d", MaxShards, c.Shards))
	}
	if c.RetryPeriod <= 0 || c.RenewDeadline <= c.RetryPeriod || c.LeaseDuration <= c.RenewDeadline {
		errs = append(errs, fmt.Errorf("shard: want 0 < retry period (%s) < renew deadline (%s) < lease duration (%s)",
			c.RetryPeriod, c.RenewDeadline, c.LeaseDuration))
	}
	return errors.Join(errs...)
}

// leaseDoc is one lease document. renewTime is for people reading the container: no
// replica compares another's clock with its own (see observation).
type leaseDoc struct {
	ID                   string    `json:"id"`
	PartitionKey         string    `json:"partitionKey"`
	ResourceType         string    `json:"resourceType"`
	Kind                 string    `json:"kind"`
	Shard                *int      `json:"shard,omitempty"`
	Shards               int       `json:"shards"`
	HolderIdentity       string    `json:"holderIdentity"`
	RenewTime            time.Time `json:"renewTime"`
	LeaseDurationSeconds int       `json:"leaseDurationSeconds"`
}

// observation is a document as this replica last saw it change: at is this replica's
// clock after the read that first showed the etag, so a lease counts as expired only
// once this replica itself has seen it unchanged for a lease duration, whatever the
// holder's clock says (client-go's leader election judges expiry the same way).
type observation struct {
	etag   string
	at     time.Time
	holder string
}

// lease is this replica's view of one shard.
type lease struct {
	index  int
	exists bool
	seen   observation

	held      bool      // this replica's last write of the lease succeeded
	renewedAt time.Time // taken before that write was sent
	releasing bool      // being handed back: no new claims, in-flight ones drain
	active    int       // claims in flight
	ctx       context.Context
	cancel    context.CancelFunc
	timer     *time.Timer
}

// Manager holds this replica's shard leases and answers which keys it owns.
type Manager struct {
	cfg    Config
	clock  Clock
	real   bool
	logger *slog.Logger
	owned  prometheus.Gauge

	mu       sync.Mutex
	leases   []*lease
	members  map[string]observation // other replicas' heartbeats
	selfETag string                 // this replica's heartbeat; "" until listed
	stopped  bool
	lastRead time.Time // the last round that read the leases
	subs     map[int]func()
	nextSub  int
}

// New builds a manager; Run (or RunAround) makes it hold leases.
func New(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, clock: cfg.Clock, logger: cfg.Logger, members: map[string]observation{}, subs: map[int]func(){}}
	if m.clock == nil {
		m.clock, m.real = realClock{}, true
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	m.logger = m.logger.With("shardGroup", cfg.Group, "identity", cfg.Identity)
	for i := range cfg.Shards {
		m.leases = append(m.leases, &lease{index: i})
	}
	if cfg.Registerer != nil {
		m.owned = prometheus.NewGauge(prometheus.GaugeOpts{
			Name:        "hcpsched_shards_owned",
			Help:        "Shards whose keys this replica works (leaderless mode); the replicas' values sum to the shard count once settled.",
			ConstLabels: prometheus.Labels{"group": cfg.Group},
		})
		if err := cfg.Registerer.Register(m.owned); err != nil {
			return nil, fmt.Errorf("shard: registering metrics: %w", err)
		}
	}
	return m, nil
}

// Shards is how many shards keys split into.
func (m *Manager) Shards() int { return m.cfg.Shards }

// Claim reports whether this replica owns key's shard now. While it does, the returned
// context ends if ownership is lost (the lease could not be renewed in time), and
// release must be called when the work on the key is done: a shard is handed back only
// after its claims drained.
func (m *Manager) Claim(key string) (ctx context.Context, release func(), ok bool) {
	l := m.leases[Of(key, m.cfg.Shards)]
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ownsLocked(l, m.clock.Now()) {
		return nil, nil, false
	}
	l.active++
	var once sync.Once
	return l.ctx, func() {
		once.Do(func() {
			m.mu.Lock()
			l.active--
			m.mu.Unlock()
		})
	}, true
}

// Owns reports whether this replica owns key's shard now, without claiming it.
func (m *Manager) Owns(key string) bool {
	l := m.leases[Of(key, m.cfg.Shards)]
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ownsLocked(l, m.clock.Now())
}

// ownsLocked: held, not being handed back, and renewed within the renew deadline, which
// is shorter than the lease duration any other replica waits before taking it over.
func (m *Manager) ownsLocked(l *lease, now time.Time) bool {
	return !m.stopped && l.held && !l.releasing && now.Before(l.renewedAt.Add(m.cfg.RenewDeadline))
}

// ReadinessCheck is the name of Check in /readyz.
const ReadinessCheck = "shard-leases"

// Check fails while the leases have not been read for a lease duration (or not yet):
// such a replica works no key, whatever its caches say, so it should not look ready.
func (m *Manager) Check(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastRead.IsZero() {
		return errors.New("the shard leases have not been read yet")
	}
	if since := m.clock.Now().Sub(m.lastRead); since >= m.cfg.LeaseDuration {
		return fmt.Errorf("the shard leases in %s have not been read for %s", m.cfg.Container.Name(), since.Round(time.Millisecond))
	}
	return nil
}

// Owned lists the shards this replica owns now.
func (m *Manager) Owned() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	var out []int
	for _, l := range m.leases {
		if m.ownsLocked(l, now) {
			out = append(out, l.index)
		}
	}
	return out
}

// OnAcquire registers f to run, on a goroutine of its own, each time this replica
// acquires shards: controllers enqueue the newly owned keys from their caches.
func (m *Manager) OnAcquire(f func()) (stop func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.nextSub
	m.nextSub++
	m.subs[id] = f
	return func() {
		m.mu.Lock()
		delete(m.subs, id)
		m.mu.Unlock()
	}
}

// RunAround runs the manager for as long as run runs, and hands the leases back only
// after run returned, so that no successor starts on a shard while this replica's
// controllers still drain.
func (m *Manager) RunAround(ctx context.Context, run func(context.Context) error) error {
	mctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- m.Run(mctx) }()
	err := run(ctx)
	stop()
	return errors.Join(err, <-done)
}

// Run renews, balances and takes over leases every retry period until ctx ends, then
// hands every lease back. A failed round is logged and retried: ownership simply lapses
// at the renew deadline if the store stays unreachable.
func (m *Manager) Run(ctx context.Context) error {
	m.logger.Info("sharding keys by lease", "shards", m.cfg.Shards, "container", m.cfg.Container.Name())
	ticker := time.NewTicker(m.cfg.RetryPeriod)
	defer ticker.Stop()
	for {
		if err := m.tick(ctx); err != nil && ctx.Err() == nil {
			m.logger.Warn("shard lease round failed; retrying", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.RenewDeadline)
			defer cancel()
			return m.release(rctx)
		case <-ticker.C:
		}
	}
}

func (m *Manager) shardID(i int) string { return fmt.Sprintf("shard-%03d", i) }
func (m *Manager) memberID(identity string) string {
	return "member-" + identity
}

func (m *Manager) doc(kind string, shard int, holder string, now time.Time) []byte {
	d := leaseDoc{
		PartitionKey: m.cfg.Group, ResourceType: LeaseResourceType, Kind: kind, Shards: m.cfg.Shards,
		HolderIdentity: holder, RenewTime: now.UTC(), LeaseDurationSeconds: int(math.Ceil(m.cfg.LeaseDuration.Seconds())),
	}
	if kind == kindShard {
		d.ID, d.Shard = m.shardID(shard), &shard
	} else {
		d.ID = m.memberID(holder)
	}
	body, _ := json.Marshal(d) // a struct of strings, numbers and a time: cannot fail
	return body
}

// list reads every lease document of the group: one query per round.
func (m *Manager) list(ctx context.Context) (map[string]leaseDoc, map[string]string, error) {
	docs, etags := map[string]leaseDoc{}, map[string]string{}
	for item, err := range m.cfg.Container.List(ctx, database.ListOptions{ResourceType: LeaseResourceType, PartitionKey: m.cfg.Group}) {
		if err != nil {
			return nil, nil, fmt.Errorf("listing shard leases in %s: %w", m.cfg.Container.Name(), err)
		}
		var d leaseDoc
		if err := json.Unmarshal(item.Body, &d); err != nil {
			return nil, nil, fmt.Errorf("decoding shard lease %s: %w", item.ID, err)
		}
		if d.Kind == kindShard && d.Shards != m.cfg.Shards {
			return nil, nil, fmt.Errorf("shard lease %s splits keys into %d shards, this replica into %d: every replica must run with the same --shards", item.ID, d.Shards, m.cfg.Shards)
		}
		docs[item.ID], etags[item.ID] = d, item.ETag
	}
	return docs, etags, nil
}

// tick is one round: observe, renew what is held, drop what lapsed, hand back what is
// above the fair share, take what is free or expired up to it.
func (m *Manager) tick(ctx context.Context) error {
	docs, etags, err := m.list(ctx)
	now := m.clock.Now() // after the read: no earlier than any write it showed
	if err != nil {
		m.mu.Lock()
		m.lapseLocked(now)
		m.mu.Unlock()
		return err
	}
	m.mu.Lock()
	m.lastRead = now
	m.observeLocked(docs, etags, now)
	renew := m.renewPlanLocked()
	m.mu.Unlock()

	renewErr := m.renew(ctx, renew)

	m.mu.Lock()
	now = m.clock.Now()
	m.lapseLocked(now)
	fair := m.fairShareLocked(now)
	toRelease, toAcquire := m.balanceLocked(now, fair)
	m.mu.Unlock()

	releaseErr := m.handBack(ctx, toRelease)
	acquired, acquireErr := m.acquire(ctx, toAcquire)
	m.mu.Lock()
	m.updateGaugeLocked()
	subs := make([]func(), 0, len(m.subs))
	for _, f := range m.subs {
		subs = append(subs, f)
	}
	m.mu.Unlock()
	if acquired > 0 {
		for _, f := range subs {
			go f()
		}
	}
	m.cleanupMembers(ctx, now)
	return errors.Join(renewErr, releaseErr, acquireErr)
}

func (m *Manager) observeLocked(docs map[string]leaseDoc, etags map[string]string, now time.Time) {
	for _, l := range m.leases {
		id := m.shardID(l.index)
		d, ok := docs[id]
		if !ok {
			l.exists = false
			if l.held {
				m.loseLocked(l, "its lease document is gone")
			}
			continue
		}
		l.exists = true
		if etags[id] != l.seen.etag {
			l.seen = observation{etag: etags[id], at: now, holder: d.HolderIdentity}
		}
		if l.held && d.HolderIdentity != m.cfg.Identity {
			m.loseLocked(l, "another replica holds its lease: "+d.HolderIdentity)
		}
	}
	m.selfETag = ""
	seen := map[string]bool{}
	for id, d := range docs {
		if d.Kind != kindMember {
			continue
		}
		if d.HolderIdentity == m.cfg.Identity {
			m.selfETag = etags[id]
			continue
		}
		seen[d.HolderIdentity] = true
		if o, ok := m.members[d.HolderIdentity]; !ok || o.etag != etags[id] {
			m.members[d.HolderIdentity] = observation{etag: etags[id], at: now, holder: d.HolderIdentity}
		}
	}
	for id := range m.members {
		if !seen[id] {
			delete(m.members, id)
		}
	}
}

type write struct {
	lease *lease // nil for the heartbeat
	etag  string // "" to create
}

func (m *Manager) renewPlanLocked() []write {
	out := []write{{etag: m.selfETag}}
	for _, l := range m.leases {
		if l.held {
			out = append(out, write{lease: l, etag: l.seen.etag})
		}
	}
	return out
}

// renew writes the heartbeat and every held lease in one transactional batch (one
// partition holds the group), falling back to one write each when the batch fails.
func (m *Manager) renew(ctx context.Context, ws []write) error {
	start := m.clock.Now()
	ops := make([]database.BatchOperation, 0, len(ws))
	for _, w := range ws {
		ops = append(ops, m.op(w, m.cfg.Identity, start))
	}
	results, err := m.cfg.Container.Batch(ctx, m.cfg.Group, ops)
	if err == nil {
		m.mu.Lock()
		for i, w := range ws {
			m.renewedLocked(w, results[i].ETag, start)
		}
		m.mu.Unlock()
		return nil
	}
	var errs []error
	for i, w := range ws {
		start := m.clock.Now()
		etag, err := m.writeOne(ctx, ops[i])
		m.mu.Lock()
		if err != nil {
			if w.lease != nil && (errors.Is(err, database.ErrPreconditionFailed) || errors.Is(err, database.ErrNotFound)) {
				m.loseLocked(w.lease, "its lease changed under this replica")
			}
			errs = append(errs, fmt.Errorf("renewing %s: %w", ops[i].ID, err))
		} else {
			m.renewedLocked(w, etag, start)
		}
		m.mu.Unlock()
	}
	return errors.Join(errs...)
}

func (m *Manager) op(w write, holder string, now time.Time) database.BatchOperation {
	var body []byte
	var id string
	if w.lease == nil {
		body, id = m.doc(kindMember, 0, holder, now), m.memberID(holder)
	} else {
		body, id = m.doc(kindShard, w.lease.index, holder, now), m.shardID(w.lease.index)
	}
	if w.etag == "" {
		return database.BatchOperation{Kind: database.BatchCreate, ID: id, Body: body}
	}
	return database.BatchOperation{Kind: database.BatchReplace, ID: id, Body: body, IfMatch: w.etag}
}

func (m *Manager) writeOne(ctx context.Context, op database.BatchOperation) (string, error) {
	var (
		item database.Item
		err  error
	)
	if op.Kind == database.BatchCreate {
		item, err = m.cfg.Container.Create(ctx, m.cfg.Group, op.Body)
	} else {
		item, err = m.cfg.Container.Replace(ctx, m.cfg.Group, op.ID, op.Body, op.IfMatch)
	}
	return item.ETag, err
}

func (m *Manager) renewedLocked(w write, etag string, start time.Time) {
	if w.lease == nil {
		m.selfETag = etag
		return
	}
	l := w.lease
	l.seen = observation{etag: etag, at: m.clock.Now(), holder: m.cfg.Identity}
	l.exists = true
	if !l.held {
		return // lapsed meanwhile: taken up again only by acquire
	}
	l.renewedAt = start
	m.armTimerLocked(l)
}

// armTimerLocked ends the shard's context at the renew deadline unless a renewal comes
// first (real clock only; with a test clock, tick's lapse check does it).
func (m *Manager) armTimerLocked(l *lease) {
	if !m.real {
		return
	}
	d := time.Until(l.renewedAt.Add(m.cfg.RenewDeadline))
	if l.timer != nil {
		l.timer.Stop()
	}
	l.timer = time.AfterFunc(d, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if l.held && !m.clock.Now().Before(l.renewedAt.Add(m.cfg.RenewDeadline)) {
			m.loseLocked(l, "not renewed within the renew deadline")
		}
	})
}

// lapseLocked gives up every held shard not renewed within the renew deadline.
func (m *Manager) lapseLocked(now time.Time) {
	for _, l := range m.leases {
		if l.held && !now.Before(l.renewedAt.Add(m.cfg.RenewDeadline)) {
			m.loseLocked(l, "not renewed within the renew deadline")
		}
	}
}

func (m *Manager) loseLocked(l *lease, why string) {
	if !l.held {
		return
	}
	l.held, l.releasing = false, false
	if l.cancel != nil {
		l.cancel()
	}
	if l.timer != nil {
		l.timer.Stop()
	}
	m.logger.Warn("lost a shard; its keys stop here", "shard", l.index, "reason", why)
}

// fairShareLocked is ceil(shards / live replicas). A replica is live when this replica
// has seen its heartbeat change within a lease duration, or it holds a lease that has.
func (m *Manager) fairShareLocked(now time.Time) int {
	live := map[string]bool{m.cfg.Identity: true}
	for id, o := range m.members {
		if now.Sub(o.at) < m.cfg.LeaseDuration {
			live[id] = true
		}
	}
	for _, l := range m.leases {
		if l.exists && l.seen.holder != "" && now.Sub(l.seen.at) < m.cfg.LeaseDuration {
			live[l.seen.holder] = true
		}
	}
	return (m.cfg.Shards + len(live) - 1) / len(live)
}

// balanceLocked marks the held shards above the fair share for hand-back (the highest
// first), picks the shards to take up to it (toAcquireLocked), and writes free the leases
// that still name this replica but that it no longer holds.
func (m *Manager) balanceLocked(now time.Time, fair int) (release []write, acquire []write) {
	var owned []*lease
	for _, l := range m.leases {
		if l.held && !l.releasing {
			owned = append(owned, l)
		}
	}
	for i := len(owned) - 1; i >= fair; i-- {
		// No new claims; the in-flight ones finish their reconcile (the lease is still
		// held, so nobody else starts on the shard) and the lease is written free once
		// they are released.
		l := owned[i]
		l.releasing = true
		m.logger.Info("handing a shard back to balance the replicas", "shard", l.index, "fairShare", fair)
	}
	for _, l := range m.leases {
		if l.held && l.releasing && l.active == 0 {
			release = append(release, write{lease: l, etag: l.seen.etag})
		}
	}
	want := fair - min(len(owned), fair)
	acquire = m.toAcquireLocked(now, want)
	// A lease the store still names this replica for, which it no longer holds (a renewal
	// answered 412 without a change, or a lapse) and does not take up again, is written
	// free: every other replica sees it held, and would wait a lease duration before
	// taking it, while nobody works its keys.
	taking := map[*lease]bool{}
	for _, w := range acquire {
		taking[w.lease] = true
	}
	for _, l := range m.leases {
		if !l.held && l.exists && l.seen.holder == m.cfg.Identity && !taking[l] {
			release = append(release, write{lease: l, etag: l.seen.etag})
		}
	}
	return release, acquire
}

// toAcquireLocked picks, from an offset of this replica's own, up to want shards to take:
// free ones first, then those seen unchanged for a lease duration.
func (m *Manager) toAcquireLocked(now time.Time, want int) []write {
	if want == 0 {
		return nil
	}
	offset := Of(m.cfg.Identity, m.cfg.Shards)
	var free, expired []write
	for k := range m.cfg.Shards {
		l := m.leases[(offset+k)%m.cfg.Shards]
		switch {
		case l.held:
		case !l.exists:
			free = append(free, write{lease: l})
		case l.seen.holder == "" || l.seen.holder == m.cfg.Identity:
			// Free, or this replica's own that lapsed here: the etag guard proves nobody
			// took it since.
			free = append(free, write{lease: l, etag: l.seen.etag})
		case now.Sub(l.seen.at) >= m.cfg.LeaseDuration:
			expired = append(expired, write{lease: l, etag: l.seen.etag})
		}
	}
	acquire := append(free, expired...)
	return acquire[:min(want, len(acquire))]
}

// handBack writes each drained shard's lease free, so a successor takes it at once.
//
// A 412 or a 404 leaves the lease as it was, held and being handed back: it says the
// document changed, not who holds it now, and the next tick's read settles it. Another
// replica's name there ends the lease (observeLocked); this replica's own, still, means
// the write was refused without a change (as the emulator's injected 412s are), and the
// hand-back is written again with the etag just read. Taking a 412 as the end of the
// lease instead left the shard to nobody: every other replica saw it still held and
// waited for it to expire.
func (m *Manager) handBack(ctx context.Context, ws []write) error {
	var errs []error
	for _, w := range ws {
		id := m.shardID(w.lease.index)
		body := m.doc(kindShard, w.lease.index, "", m.clock.Now())
		item, err := m.cfg.Container.Replace(ctx, m.cfg.Group, id, body, w.etag)
		switch {
		case err == nil:
			m.mu.Lock()
			w.lease.held, w.lease.releasing = false, false
			if w.lease.timer != nil {
				w.lease.timer.Stop()
			}
			w.lease.seen = observation{etag: item.ETag, at: m.clock.Now()}
			m.logger.Info("handed a shard back", "shard", w.lease.index)
			m.mu.Unlock()
		case errors.Is(err, database.ErrPreconditionFailed), errors.Is(err, database.ErrNotFound):
			m.logger.Info("handing a shard back was refused; the next read says who holds it", "shard", w.lease.index, "error", err.Error())
		default:
			errs = append(errs, fmt.Errorf("handing back %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// acquire takes each chosen shard with an etag-guarded write (a create for one never
// written); losing the race to another replica is no error.
func (m *Manager) acquire(ctx context.Context, ws []write) (int, error) {
	var (
		errs     []error
		acquired int
	)
	for _, w := range ws {
		start := m.clock.Now()
		op := m.op(w, m.cfg.Identity, start)
		etag, err := m.writeOne(ctx, op)
		if err != nil {
			if !errors.Is(err, database.ErrPreconditionFailed) && !errors.Is(err, database.ErrConflict) && !errors.Is(err, database.ErrNotFound) {
				errs = append(errs, fmt.Errorf("acquiring %s: %w", op.ID, err))
			}
			continue
		}
		m.mu.Lock()
		l := w.lease
		if m.stopped {
			m.mu.Unlock()
			continue // released below by release, which lists the held leases
		}
		l.held, l.releasing, l.renewedAt, l.exists = true, false, start, true
		l.seen = observation{etag: etag, at: m.clock.Now(), holder: m.cfg.Identity}
		l.ctx, l.cancel = context.WithCancel(context.Background())
		m.armTimerLocked(l)
		acquired++
		m.logger.Info("acquired a shard", "shard", l.index)
		m.mu.Unlock()
	}
	return acquired, errors.Join(errs...)
}

// cleanupMembers deletes heartbeats seen unchanged for two lease durations (replicas that
// crashed), etag-guarded so a heartbeat that came back is kept.
func (m *Manager) cleanupMembers(ctx context.Context, now time.Time) {
	m.mu.Lock()
	var dead []observation
	for _, o := range m.members {
		if now.Sub(o.at) >= 2*m.cfg.LeaseDuration {
			dead = append(dead, o)
		}
	}
	m.mu.Unlock()
	for _, o := range dead {
		if err := m.cfg.Container.Delete(ctx, m.cfg.Group, m.memberID(o.holder), o.etag); err == nil {
			m.mu.Lock()
			delete(m.members, o.holder)
			m.mu.Unlock()
		}
	}
}

// release hands every lease back and deletes the heartbeat, after the controllers
// stopped; from then on Claim refuses every key.
func (m *Manager) release(ctx context.Context) error {
	m.mu.Lock()
	m.stopped = true
	var ws []write
	for _, l := range m.leases {
		if l.held {
			l.releasing = true
			l.cancel()
			ws = append(ws, write{lease: l, etag: l.seen.etag})
		}
	}
	self := m.selfETag
	m.updateGaugeLocked()
	m.mu.Unlock()
	err := m.handBack(ctx, ws)
	if self != "" {
		if derr := m.cfg.Container.Delete(ctx, m.cfg.Group, m.memberID(m.cfg.Identity), self); derr != nil &&
			!errors.Is(derr, database.ErrNotFound) && !errors.Is(derr, database.ErrPreconditionFailed) {
			err = errors.Join(err, fmt.Errorf("deleting the heartbeat: %w", derr))
		}
	}
	m.logger.Info("handed every shard back", "shards", len(ws))
	return err
}

func (m *Manager) updateGaugeLocked() {
	if m.owned == nil {
		return
	}
	now := m.clock.Now()
	n := 0
	for _, l := range m.leases {
		if m.ownsLocked(l, now) {
			n++
		}
	}
	m.owned.Set(float64(n))
}
