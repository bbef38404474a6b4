package process

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	k8stesting "k8s.io/client-go/testing"
)

const testNamespace = "hcpsched"

// electedOptions are test options campaigning on one Lease with the shortest timings
// client-go and the Lease's whole-second duration allow.
func electedOptions(client kubernetes.Interface, identity string) Options {
	opts := testOptions()
	opts.LeaderElect = true
	opts.KubeClient = client
	opts.LeaderElectionNamespace = testNamespace
	opts.LeaderElectionLeaseName = "hcpsched-test"
	opts.LeaderElectionIdentity = identity
	opts.LeaderElectionLeaseDuration = time.Second
	opts.LeaderElectionRenewDeadline = 500 * time.Millisecond
	opts.LeaderElectionRetryPeriod = 100 * time.Millisecond
	return opts
}

// exclusive tracks which replicas run controllers and whether two ever overlapped.
type exclusive struct {
	active  atomic.Int32
	overlap atomic.Bool
	mu      sync.Mutex
	leaders []string
}

// controllers returns a RunControllers for replica id; started receives id each time it
// becomes the active leader.
func (e *exclusive) controllers(id string, started chan<- string) func(context.Context) error {
	return func(ctx context.Context) error {
		if e.active.Add(1) > 1 {
			e.overlap.Store(true)
		}
		e.mu.Lock()
		e.leaders = append(e.leaders, id)
		e.mu.Unlock()
		started <- id
		<-ctx.Done()
		e.active.Add(-1)
		return ctx.Err()
	}
}

func (e *exclusive) history() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.leaders...)
}

func TestLeaderElectionOneLeaderAtATime(t *testing.T) {
	client := newFakeClient()
	var ex exclusive
	started := make(chan string, 2)
	replicas := map[string]*running{}
	for _, id := range []string{"replica-a", "replica-b"} {
		replicas[id] = start(t, electedOptions(client, id), nil, App{RunControllers: ex.controllers(id, started)})
	}

	first := <-started
	second := "replica-a"
	if first == second {
		second = "replica-b"
	}
	lease, err := client.CoordinationV1().Leases(testNamespace).Get(context.Background(), "hcpsched-test", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, first, *lease.Spec.HolderIdentity)
	// The standby is synced and ready, but does not run controllers.
	standby := replicas[second]
	assert.Eventually(t, func() bool { return standby.shell.health.synced.Load() }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{first}, ex.history())

	// The leader shuts down: it releases the Lease and the standby takes over.
	replicas[first].cancel()
	require.NoError(t, replicas[first].wait(t, 10*time.Second))
	select {
	case id := <-started:
		assert.Equal(t, second, id)
	case <-time.After(10 * time.Second):
		t.Fatal("the standby did not take over")
	}
	assert.Equal(t, []string{first, second}, ex.history())

	replicas[second].cancel()
	require.NoError(t, replicas[second].wait(t, 10*time.Second))
	assert.False(t, ex.overlap.Load(), "two replicas ran controllers at once")
}

func TestLeadershipLostStopsControllersAndFails(t *testing.T) {
	client := newFakeClient()
	// Reactors must be installed before the client is shared: the fake does not lock
	// its reaction chain against concurrent changes.
	var partitioned atomic.Bool
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if partitioned.Load() {
			return true, nil, errors.New("apiserver unreachable")
		}
		return false, nil, nil
	})
	started := make(chan struct{})
	stopped := make(chan struct{})
	r := start(t, electedOptions(client, "replica-a"), nil, App{RunControllers: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		close(stopped)
		return ctx.Err()
	}})
	<-started

	// The API server stops accepting renewals, as in a network partition.
	partitioned.Store(true)

	err := r.wait(t, 10*time.Second)
	assert.ErrorIs(t, err, ErrLeadershipLost)
	select {
	case <-stopped:
	default:
		t.Error("Run returned while the controllers still ran")
	}
}

func TestShutdownBeforeLeading(t *testing.T) {
	client := newFakeClient()
	holder := "someone-else"
	duration := int32(3600)
	now := metav1.NowMicro()
	_, err := client.CoordinationV1().Leases(testNamespace).Create(context.Background(), leaseHeldBy(holder, duration, now), metav1.CreateOptions{})
	require.NoError(t, err)

	campaigning := make(chan struct{})
	client.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		select {
		case <-campaigning:
		default:
			close(campaigning)
		}
		return false, nil, nil // let the tracker answer
	})
	r := start(t, electedOptions(client, "replica-a"), nil, App{RunControllers: func(context.Context) error {
		panic("a standby must not run controllers")
	}})
	<-campaigning
	r.cancel()
	require.NoError(t, r.wait(t, 10*time.Second))

	lease, err := client.CoordinationV1().Leases(testNamespace).Get(context.Background(), "hcpsched-test", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, holder, *lease.Spec.HolderIdentity, "a standby leaves the Lease alone")
}

func TestLeaderElectDisabledNeedsNoKubernetes(t *testing.T) {
	opts := testOptions()
	opts.LeaderElect = false
	opts.Kubeconfig = ""
	opts.KubeClient = nil
	started := make(chan struct{})
	r := start(t, opts, nil, App{RunControllers: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return nil
	}})
	<-started
	assert.Nil(t, r.shell.kube)
	r.cancel()
	assert.NoError(t, r.wait(t, 10*time.Second))
}

func leaseHeldBy(holder string, durationSeconds int32, renewed metav1.MicroTime) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "hcpsched-test"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &holder,
			LeaseDurationSeconds: &durationSeconds,
			AcquireTime:          &renewed,
			RenewTime:            &renewed,
		},
	}
}
