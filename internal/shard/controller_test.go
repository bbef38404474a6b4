package shard_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/shard"
)

// keyInformer is a cache of keys that never sends events: the controllers learn of its
// keys only from the resync that follows each acquisition, and from their own resync.
type keyInformer struct{ store cache.Store }

func (i keyInformer) AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return nil, nil
}
func (i keyInformer) GetStore() cache.Store { return i.store }

// ledger records which replica reconciles which key, and any key reconciled by two at
// once.
type ledger struct {
	mu        sync.Mutex
	active    map[string]string
	overlaps  []string
	worked    map[string]map[string]int // replica -> key -> reconciles
	lastOwner map[string]string
}

func newLedger() *ledger {
	return &ledger{active: map[string]string{}, worked: map[string]map[string]int{}, lastOwner: map[string]string{}}
}

func (l *ledger) reconcile(replica string) controller.ReconcileFunc {
	return func(ctx context.Context, key string) (controller.Result, error) {
		l.mu.Lock()
		if other, ok := l.active[key]; ok {
			l.overlaps = append(l.overlaps, fmt.Sprintf("%s by %s and %s", key, other, replica))
		}
		l.active[key] = replica
		if l.worked[replica] == nil {
			l.worked[replica] = map[string]int{}
		}
		l.worked[replica][key]++
		l.lastOwner[key] = replica
		l.mu.Unlock()
		// Some work, so that reconciles of one key on two replicas would overlap.
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Millisecond):
		}
		l.mu.Lock()
		delete(l.active, key)
		l.mu.Unlock()
		return controller.Result{RequeueAfter: 20 * time.Millisecond}, nil
	}
}

func (l *ledger) ownersOfAll(keys []string, replica string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if l.lastOwner[k] != replica {
			return false
		}
	}
	return true
}

func (l *ledger) everyKeyWorked(keys []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if l.lastOwner[k] == "" {
			return false
		}
	}
	return true
}

type replica struct {
	name    string
	manager *shard.Manager
	cancel  context.CancelFunc
	done    chan error
}

func startReplica(t *testing.T, name string, leases database.Container, keys cache.Store, l *ledger) *replica {
	t.Helper()
	m, err := shard.New(shard.Config{
		Container: leases, Group: "backend", Identity: name, Shards: shard.DefaultShards,
		LeaseDuration: 600 * time.Millisecond, RenewDeadline: 400 * time.Millisecond, RetryPeriod: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	metrics, err := controller.NewMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	c, err := controller.New(controller.Options{
		Name: "test", Workers: 4, Metrics: metrics, Logger: slog.New(slog.DiscardHandler), Ownership: m,
	}, l.reconcile(name))
	require.NoError(t, err)
	require.NoError(t, c.Watch(keyInformer{store: keys}, func(obj any) []string { return []string{obj.(string)} }))
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{name: name, manager: m, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- m.RunAround(ctx, c.Run) }()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	r.cancel = nil
}

// Two leaderless replicas running the controller framework split the keys, never
// reconcile one key at the same time, and the survivor takes every key over both when
// the other shuts down and when it is cut off from the lease store.
func TestTwoLeaderlessReplicasNeverReconcileOneKeyAtOnce(t *testing.T) {
	keys := cache.NewStore(func(obj any) (string, error) { return obj.(string), nil })
	var all []string
	for i := range 200 {
		k := fmt.Sprintf("/subscriptions/s%d/resourcegroups/rg/providers/microsoft.redhatopenshift/hcpopenshiftclusters/c%d", i, i)
		all = append(all, k)
		require.NoError(t, keys.Add(k))
	}
	store := memory.New()
	leases := store.Container(shard.DefaultLeaseContainer)
	l := newLedger()

	t.Run("a graceful shutdown hands over", func(t *testing.T) {
		a := startReplica(t, "a", leases, keys, l)
		b := startReplica(t, "b", leases, keys, l)
		require.Eventually(t, func() bool {
			return len(a.manager.Owned()) == shard.DefaultShards/2 && len(b.manager.Owned()) == shard.DefaultShards/2
		}, 10*time.Second, 10*time.Millisecond, "the replicas split the shards")
		require.Eventually(t, func() bool { return l.everyKeyWorked(all) }, 10*time.Second, 10*time.Millisecond)

		b.stop()
		require.Eventually(t, func() bool { return l.ownersOfAll(all, "a") }, 10*time.Second, 10*time.Millisecond,
			"a works every key once b is gone")
		a.stop()
	})

	t.Run("a replica cut off from the leases stops before the other takes over", func(t *testing.T) {
		cut := &cutContainer{Container: leases}
		c := startReplica(t, "c", cut, keys, l)
		d := startReplica(t, "d", leases, keys, l)
		require.Eventually(t, func() bool {
			return len(c.manager.Owned()) == shard.DefaultShards/2 && len(d.manager.Owned()) == shard.DefaultShards/2
		}, 10*time.Second, 10*time.Millisecond, "the replicas split the shards")

		cut.cut.Store(true)
		require.Eventually(t, func() bool { return len(c.manager.Owned()) == 0 }, 10*time.Second, 10*time.Millisecond)
		require.Eventually(t, func() bool { return l.ownersOfAll(all, "d") }, 10*time.Second, 10*time.Millisecond,
			"d works every key once c's leases expired")
	})

	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Empty(t, l.overlaps, "no key was reconciled by two replicas at once")
	for _, r := range []string{"a", "b", "c", "d"} {
		assert.NotEmpty(t, l.worked[r], "replica %s worked keys", r)
	}
}

// cutContainer fails every lease call once cut, as a store the replica cannot reach.
type cutContainer struct {
	database.Container
	cut atomic.Bool
}

var errCut = errors.New("cut off")

func (c *cutContainer) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	if c.cut.Load() {
		return func(yield func(database.Item, error) bool) { yield(database.Item{}, errCut) }
	}
	return c.Container.List(ctx, opts)
}

func (c *cutContainer) Batch(ctx context.Context, pk string, ops []database.BatchOperation) ([]database.BatchResult, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.Container.Batch(ctx, pk, ops)
}

func (c *cutContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	if c.cut.Load() {
		return database.Item{}, errCut
	}
	return c.Container.Create(ctx, pk, body)
}

func (c *cutContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	if c.cut.Load() {
		return database.Item{}, errCut
	}
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}
