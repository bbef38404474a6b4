package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
)

// testClock is a clock the test steps by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newManager(t *testing.T, leases database.Container, clock Clock, identity string) *Manager {
	t.Helper()
	m, err := New(Config{
		Container: leases, Group: "backend", Identity: identity, Shards: DefaultShards,
		LeaseDuration: DefaultLeaseDuration, RenewDeadline: DefaultRenewDeadline, RetryPeriod: DefaultRetryPeriod,
		Clock: clock,
	})
	require.NoError(t, err)
	return m
}

// assertExclusive fails if any shard is owned by two managers at this instant.
func assertExclusive(t *testing.T, step string, ms ...*Manager) {
	t.Helper()
	owners := map[int][]string{}
	for _, m := range ms {
		for _, s := range m.Owned() {
			owners[s] = append(owners[s], m.cfg.Identity)
		}
	}
	for s, ids := range owners {
		assert.Len(t, ids, 1, "%s: shard %d is owned by %v at once", step, s, ids)
	}
}

// round ticks each manager once, checking exclusivity after every tick, then advances
// the clock by the retry period.
func round(t *testing.T, clock *testClock, step string, ms ...*Manager) {
	t.Helper()
	for _, m := range ms {
		_ = m.tick(t.Context())
		assertExclusive(t, step, ms...)
	}
	clock.Advance(DefaultRetryPeriod)
	assertExclusive(t, step+" (clock advanced)", ms...)
}

func TestTwoReplicasSplitTheShardsEvenlyAndNeverOverlap(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	a, b := newManager(t, leases, clock, "a"), newManager(t, leases, clock, "b")

	assert.ErrorContains(t, a.Check(t.Context()), "not been read yet", "unready before its first round")
	round(t, clock, "a alone", a)
	require.Len(t, a.Owned(), DefaultShards, "a lone replica owns every shard")
	assert.NoError(t, a.Check(t.Context()))

	for i := range 4 {
		round(t, clock, fmt.Sprintf("b joins, round %d", i), a, b)
	}
	assert.Len(t, a.Owned(), DefaultShards/2)
	assert.Len(t, b.Owned(), DefaultShards/2)
	assert.ElementsMatch(t, seq(DefaultShards), append(a.Owned(), b.Owned()...), "together they own every shard")

	// Renewals keep the split as it is for many lease durations.
	before := slices.Clone(a.Owned())
	for i := range 30 {
		round(t, clock, fmt.Sprintf("steady, round %d", i), a, b)
	}
	assert.Equal(t, before, a.Owned())
	assert.Len(t, b.Owned(), DefaultShards/2)
}

func TestAReplicaThatStopsIsTakenOverOnlyAfterTheLeaseExpires(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	a, b := newManager(t, leases, clock, "a"), newManager(t, leases, clock, "b")
	for i := range 5 {
		round(t, clock, fmt.Sprintf("split, round %d", i), a, b)
	}
	require.Len(t, b.Owned(), DefaultShards/2)
	bShards := b.Owned()

	// b stops renewing (a crash: nothing handed back). It keeps answering Claim from its
	// clock alone, which is what would let its in-flight workers carry on.
	stoppedAt := clock.Now()
	for i := 0; len(a.Owned()) < DefaultShards; i++ {
		require.Less(t, i, 20, "a never took b's shards over")
		step := fmt.Sprintf("b gone for %s", clock.Now().Sub(stoppedAt))
		_ = a.tick(t.Context())
		assertExclusive(t, step, a, b)
		for _, s := range bShards {
			if slices.Contains(a.Owned(), s) {
				assert.GreaterOrEqual(t, clock.Now().Sub(stoppedAt), DefaultLeaseDuration-DefaultRetryPeriod,
					"%s: a took shard %d before b's lease could have expired", step, s)
			}
		}
		clock.Advance(DefaultRetryPeriod)
		assertExclusive(t, step+" (clock advanced)", a, b)
	}
	assert.Empty(t, b.Owned(), "b's own view lapsed at its renew deadline")
	assert.LessOrEqual(t, clock.Now().Sub(stoppedAt), DefaultLeaseDuration+3*DefaultRetryPeriod, "the takeover came within a lease duration and a few rounds")
}

func TestAReplicaThatShutsDownHandsItsShardsOverAtOnce(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	a, b := newManager(t, leases, clock, "a"), newManager(t, leases, clock, "b")
	for i := range 5 {
		round(t, clock, fmt.Sprintf("split, round %d", i), a, b)
	}
	require.Len(t, b.Owned(), DefaultShards/2)

	require.NoError(t, b.release(t.Context()))
	assert.Empty(t, b.Owned(), "a released replica owns nothing")
	round(t, clock, "after b's release", a, b)
	assert.Len(t, a.Owned(), DefaultShards, "a takes the handed-back shards at its next round, without waiting for expiry")
}

func TestAShardIsHandedBackOnlyOnceItsClaimsAreReleased(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	a, b := newManager(t, leases, clock, "a"), newManager(t, leases, clock, "b")
	round(t, clock, "a alone", a)

	// Claim one key of every shard on a, as in-flight reconciles would.
	keys := keysPerShard(DefaultShards)
	releases := map[int]func(){}
	ctxs := map[int]context.Context{}
	for s, key := range keys {
		ctx, release, ok := a.Claim(key)
		require.True(t, ok)
		releases[s], ctxs[s] = release, ctx
	}
	for i := range 4 {
		round(t, clock, fmt.Sprintf("b joins while a works, round %d", i), a, b)
	}
	assert.Len(t, a.Owned(), DefaultShards/2, "a stopped owning the shards it is handing back")
	assert.Empty(t, b.Owned(), "b gets nothing while a's claims are in flight")
	handing := 0
	for s, ctx := range ctxs {
		assert.NoError(t, ctx.Err(), "an in-flight claim on a shard being handed back finishes its work")
		if _, _, ok := a.Claim(keys[s]); !ok {
			handing++
		}
	}
	assert.Equal(t, DefaultShards/2, handing, "the shards being handed back take no new claims")

	for _, release := range releases {
		release()
	}
	for i := range 3 {
		round(t, clock, fmt.Sprintf("claims released, round %d", i), a, b)
	}
	assert.Len(t, b.Owned(), DefaultShards/2)
}

// A 412 on a hand-back is no proof that another replica took the shard: the emulator's
// injected 412s change nothing, and a replica that took the 412 as the end of its lease
// left the shard to nobody, since every other replica saw the lease still held and waited
// for it to expire (in a chaos run, with a kill on top, 30 s without placement or create
// for a cluster of that shard). The next read says who holds it, and the hand-back is
// written again.
func TestAHandBackRefusedWithoutAChangeIsWrittenAgain(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	// Hand-backs: a shard's lease written free.
	refusing := newRefusingLeases(leases, false, func(_ string, d leaseDoc) bool { return d.Kind == kindShard && d.HolderIdentity == "" })
	refusing.arm()
	a, b := newManager(t, refusing, clock, "a"), newManager(t, leases, clock, "b")
	round(t, clock, "a alone", a)
	require.Len(t, a.Owned(), DefaultShards)

	// Well within a lease duration: b must not have to wait for a's leases to expire.
	for i := range 4 {
		round(t, clock, fmt.Sprintf("b joins, round %d", i), a, b)
	}
	assert.Len(t, refusing.refusedIDs(), DefaultShards/2, "every hand-back was refused once")
	assert.Len(t, a.Owned(), DefaultShards/2)
	assert.Len(t, b.Owned(), DefaultShards/2, "b took the handed-back shards without waiting for their leases to expire")
}

// A renewal refused without a change ends the lease here (another replica may have taken
// it), but the document still names this replica: unless the replica takes it up again or
// writes it free, every other replica waits a lease duration before taking it, and its
// keys are worked by nobody meanwhile.
func TestALeaseLostWithoutAChangeIsNotLeftToNobody(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	// A renewal of shard 14 by a, written alone.
	refusing := newRefusingLeases(leases, true, func(id string, d leaseDoc) bool { return id == "shard-014" && d.HolderIdentity == "a" })
	a, b := newManager(t, refusing, clock, "a"), newManager(t, leases, clock, "b")
	round(t, clock, "a alone", a)
	require.Len(t, a.Owned(), DefaultShards)

	// b's heartbeat is written, and a hears of it on the round where its renewal fails:
	// it is then at its fair share without the lost lease.
	round(t, clock, "b joins", a, b)
	refusing.arm()
	for i := range 4 {
		round(t, clock, fmt.Sprintf("a renews with b there, round %d", i), a, b)
	}
	require.Contains(t, refusing.refusedIDs(), "shard-014", "a renewal of shard-014 was refused")
	assert.Len(t, a.Owned(), DefaultShards/2)
	assert.Len(t, b.Owned(), DefaultShards/2, "b did not have to wait for the lease a lost to expire")
}

// refusingLeases answers 412, without writing it, the first Replace of each lease
// document that refuse matches, as the emulator's injected 412s do. With splitBatches it
// fails every renewal batch until it has refused one, so that each lease is written alone.
type refusingLeases struct {
	database.Container
	refuse       func(id string, d leaseDoc) bool
	splitBatches bool
	mu           sync.Mutex
	armed        bool
	refused      map[string]bool
}

func newRefusingLeases(c database.Container, splitBatches bool, refuse func(id string, d leaseDoc) bool) *refusingLeases {
	return &refusingLeases{Container: c, refuse: refuse, splitBatches: splitBatches, refused: map[string]bool{}}
}

func (c *refusingLeases) arm() { c.mu.Lock(); c.armed = true; c.mu.Unlock() }

func (c *refusingLeases) Batch(ctx context.Context, pk string, ops []database.BatchOperation) ([]database.BatchResult, error) {
	c.mu.Lock()
	fail := c.splitBatches && c.armed && len(c.refused) == 0
	c.mu.Unlock()
	if fail {
		return nil, errUnreachable
	}
	return c.Container.Batch(ctx, pk, ops)
}

func (c *refusingLeases) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	var d leaseDoc
	c.mu.Lock()
	refuse := c.armed && !c.refused[id] && json.Unmarshal(body, &d) == nil && c.refuse(id, d)
	if refuse {
		c.refused[id] = true
	}
	c.mu.Unlock()
	if refuse {
		return database.Item{}, fmt.Errorf("replace %s: %w", id, database.ErrPreconditionFailed)
	}
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}

func (c *refusingLeases) refusedIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.refused))
}

func TestAReplicaThatCannotRenewStopsBeforeAnotherTakesOver(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	failing := &failingContainer{Container: leases}
	a, b := newManager(t, failing, clock, "a"), newManager(t, leases, clock, "b")
	for i := range 5 {
		round(t, clock, fmt.Sprintf("split, round %d", i), a, b)
	}
	require.Len(t, a.Owned(), DefaultShards/2)

	claimed, release, ok := a.Claim(keysPerShard(DefaultShards)[a.Owned()[0]])
	require.True(t, ok)
	defer release()
	failing.fail(true)
	cutAt := clock.Now()
	for i := 0; len(b.Owned()) < DefaultShards; i++ {
		require.Less(t, i, 20, "b never took a's shards over")
		round(t, clock, fmt.Sprintf("a cut off for %s", clock.Now().Sub(cutAt)), a, b)
		if clock.Now().Sub(cutAt) > DefaultRenewDeadline {
			assert.Empty(t, a.Owned(), "a owns nothing past its renew deadline")
			assert.Error(t, claimed.Err(), "an in-flight claim's context ends once its shard lapsed")
		}
	}

	assert.ErrorContains(t, a.Check(t.Context()), "have not been read for", "a replica cut off from the leases is unready")
	assert.NoError(t, b.Check(t.Context()))

	failing.fail(false)
	for i := range 5 {
		round(t, clock, fmt.Sprintf("a back, round %d", i), a, b)
	}
	assert.Len(t, a.Owned(), DefaultShards/2, "a rejoins and gets its fair share back")
	assert.Len(t, b.Owned(), DefaultShards/2)
}

func TestThreeReplicasShareByCeiling(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	ms := []*Manager{newManager(t, leases, clock, "a"), newManager(t, leases, clock, "b"), newManager(t, leases, clock, "c")}
	for i := range 8 {
		round(t, clock, fmt.Sprintf("round %d", i), ms...)
	}
	var all []int
	for _, m := range ms {
		assert.LessOrEqual(t, len(m.Owned()), 6, "no replica holds more than ceil(16/3)")
		all = append(all, m.Owned()...)
	}
	assert.ElementsMatch(t, seq(DefaultShards), all)
}

func TestReplicasThatDisagreeOnTheShardCountTakeNothing(t *testing.T) {
	clock := newTestClock()
	leases := memory.New().Container(DefaultLeaseContainer)
	a := newManager(t, leases, clock, "a")
	round(t, clock, "a alone", a)
	other, err := New(Config{Container: leases, Group: "backend", Identity: "b", Shards: 8,
		LeaseDuration: DefaultLeaseDuration, RenewDeadline: DefaultRenewDeadline, RetryPeriod: DefaultRetryPeriod, Clock: clock})
	require.NoError(t, err)
	err = other.tick(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "every replica must run with the same --shards")
	assert.Empty(t, other.Owned())
}

func TestOfIsStableAndIgnoresCase(t *testing.T) {
	tests := map[string]struct {
		key  string
		want int
	}{
		"a cluster":     {"/subscriptions/00000000-0000-0000-0000-000000000001/resourcegroups/rg/providers/microsoft.redhatopenshift/hcpopenshiftclusters/c1", Of("/SUBSCRIPTIONS/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1", 16)},
		"one shard":     {"anything", 0},
		"fixed for FNV": {"abc", 0x1a47e90b % 16},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			shards := 16
			if name == "one shard" {
				shards = 1
			}
			assert.Equal(t, tc.want, Of(tc.key, shards))
		})
	}
	counts := make([]int, 16)
	for i := range 1600 {
		counts[Of(fmt.Sprintf("/subscriptions/%d/clusters/c", i), 16)]++
	}
	for s, n := range counts {
		assert.InDelta(t, 100, n, 40, "shard %d gets about its share of keys", s)
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// keysPerShard finds one key per shard.
func keysPerShard(shards int) map[int]string {
	out := map[int]string{}
	for i := 0; len(out) < shards; i++ {
		k := fmt.Sprintf("key-%d", i)
		if _, ok := out[Of(k, shards)]; !ok {
			out[Of(k, shards)] = k
		}
	}
	return out
}

// failingContainer fails every call while switched on, as a store this replica cannot
// reach would.
type failingContainer struct {
	database.Container
	mu  sync.Mutex
	off bool
}

var errUnreachable = errors.New("unreachable")

func (c *failingContainer) fail(on bool) { c.mu.Lock(); c.off = on; c.mu.Unlock() }
func (c *failingContainer) down() bool   { c.mu.Lock(); defer c.mu.Unlock(); return c.off }

func (c *failingContainer) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	if c.down() {
		return func(yield func(database.Item, error) bool) { yield(database.Item{}, errUnreachable) }
	}
	return c.Container.List(ctx, opts)
}

func (c *failingContainer) Batch(ctx context.Context, pk string, ops []database.BatchOperation) ([]database.BatchResult, error) {
	if c.down() {
		return nil, errUnreachable
	}
	return c.Container.Batch(ctx, pk, ops)
}

func (c *failingContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	if c.down() {
		return database.Item{}, errUnreachable
	}
	return c.Container.Create(ctx, pk, body)
}

func (c *failingContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	if c.down() {
		return database.Item{}, errUnreachable
	}
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}
