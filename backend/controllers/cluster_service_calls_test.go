package controllers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	arohcpsdk "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// The Cluster Service calls a cluster costs (docs/cosmos-data-flow.md, "Cluster Service
// calls per cluster"): the POST and the observation GET in the common path; the adoption
// search only where a create may already have reached Cluster Service.

// csCalls are the fake's logged cluster requests by kind.
type csCalls struct{ posts, searches, observations, other int }

func (w *world) csCalls() csCalls {
	var c csCalls
	for _, r := range w.CS.Requests() {
		switch {
		case !strings.HasPrefix(r.Path, clusterservice.ClustersPath):
		case r.Method == http.MethodPost && r.Path == clusterservice.ClustersPath:
			c.posts++
		case r.Method == http.MethodGet && r.Path == clusterservice.ClustersPath && strings.Contains(r.Query, "search="):
			c.searches++
		case r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/provision_shard"):
			c.observations++
		default:
			c.other++
		}
	}
	return c
}

// identityMatches is how many clusters Cluster Service holds on shard under the Azure
// name of the cluster rid (every create of these tests is pinned to one shard).
func identityMatches(t *testing.T, w *world, shard string, rid *api.ResourceID) int {
	t.Helper()
	onShard, err := w.CS.ClustersOnShard(shard)
	require.NoError(t, err)
	n := 0
	for _, c := range onShard {
		if strings.EqualFold(c.Azure().ResourceName(), rid.Name()) {
			n++
		}
	}
	return n
}

// createWorld is a placed cluster with its SPC, a tenant and a registered MC, CS
// accepting a second create under the same Azure name (as the chaos run does) so that a
// duplicate would show as a second cluster, and the pending-ID and create controllers of
// one process sharing ids.
type createWorld struct {
	*world
	rid            *api.ResourceID
	shard          string
	assign, create *controllertest.Reconciler
}

func newCreateWorld(t *testing.T, ids *unsentIDs, cs func(clusterservice.Clusters) clusterservice.Clusters, mutate ...func(*api.Cluster)) *createWorld {
	t.Helper()
	w := newWorld(t)
	shard := controllertest.RegisterShard(t, w.CSClient, 1)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
	w.CS.AcceptDuplicateNames(true)
	w.storeSubscription(t, controllertest.Tenant)
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), mutate...))
	controllertest.StoreSPC(t, w.Resources, rid, withSpec(mc))
	if cs != nil {
		w.env.ClusterService = cs(w.CSClient)
	}
	cw := &createWorld{world: w, rid: rid, shard: shard,
		assign: w.reconciler(t, pendingClusterServiceIDAssignDefinition(ids)),
		create: w.reconciler(t, clusterServiceCreateDefinition(ids)),
	}
	w.Start(t)
	w.CS.ResetRequests()
	return cw
}

// recorded is the stored cluster's clusterServiceID.
func (cw *createWorld) recorded(t *testing.T) string {
	t.Helper()
	return controllertest.GetCluster(t, cw.Resources, cw.rid).Properties.ServiceProvider().ClusterServiceID
}

// awaitCache waits until the cluster cache holds the stored cluster document.
func (cw *createWorld) awaitCache(t *testing.T) {
	t.Helper()
	stored := controllertest.GetCluster(t, cw.Resources, cw.rid)
	require.Eventually(t, func() bool {
		cached, err := cw.Caches.Clusters().Lister().Get(cw.rid.String())
		return err == nil && cached.ETag == stored.ETag
	}, waitFor, tick, "the cache catches up with the stored cluster")
}

// A cluster whose pending ID this process minted is created with one POST and no
// search: nothing can have created it under an ID nobody else has seen sent.
func TestClusterServiceCreateSkipsTheSearchForAnIDItMinted(t *testing.T) {
	t.Parallel()
	ids := newUnsentIDs()
	cw := newCreateWorld(t, ids, nil)

	_, err := cw.assign.Reconcile(cw.rid.Key())
	require.NoError(t, err)
	pending := controllertest.GetCluster(t, cw.Resources, cw.rid).Properties.ServiceProvider().PendingClusterServiceID
	require.NotEmpty(t, pending)
	assert.True(t, ids.unsent(cw.rid.Key(), pending), "the minted ID is known unsent")

	_, err = cw.create.Reconcile(cw.rid.Key())
	require.NoError(t, err)
	assert.Equal(t, pending, cw.recorded(t))
	assert.Equal(t, csCalls{posts: 1}, cw.csCalls(), "one POST, no search")
	assert.Zero(t, ids.len(), "nothing left unsent")
}

// loseOnce is Cluster Service as the create controller sees it when something goes
// wrong after CS accepted a create: after the first accepted create, then runs, and its
// error, if any, is the answer the controller gets.
type loseOnce struct {
	clusterservice.Clusters
	mu   sync.Mutex
	then func() error
}

func (l *loseOnce) CreatePinnedCluster(ctx context.Context, c *arohcpsdk.Cluster, shard string) (*arohcpsdk.Cluster, error) {
	created, err := l.Clusters.CreatePinnedCluster(ctx, c, shard)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	then := l.then
	l.then = nil
	l.mu.Unlock()
	if then != nil {
		if err := then(); err != nil {
			return nil, err
		}
	}
	return created, nil
}

// Whenever a create may have reached Cluster Service without being recorded (its answer
// lost to a timeout, its record lost to a 412, or an error answer), the next attempt
// searches first and adopts what CS has: the cluster is created once. Without that
// search the retry POSTs again (the fake refuses the taken ID with 409, and the cluster
// is never recorded).
func TestClusterServiceCreateSearchesAfterACreateOfUnknownOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// lose is what goes wrong after CS accepted the first create; nil: nothing.
		lose func(t *testing.T, cw *createWorld) error
		// fail is a fault CS answers the first create with, creating nothing.
		fail      *fakeclusterservice.Fault
		wantPosts int
	}{
		{
			name: "the answer to the POST is lost to a timeout",
			lose: func(*testing.T, *createWorld) error {
				return fmt.Errorf("creating the cluster: %w", context.DeadlineExceeded)
			},
			wantPosts: 1,
		},
		{
			name: "the record loses an etag race",
			lose: func(t *testing.T, cw *createWorld) error {
				cw.ReplaceStored(t, api.ResourcesContainer, cw.rid, controllertest.Set(foreignWritesKey, "written between the POST and the record"))
				return nil
			},
			wantPosts: 1,
		},
		{
			name:      "CS answers the POST with 500",
			fail:      &fakeclusterservice.Fault{Method: http.MethodPost, PathPrefix: clusterservice.ClustersPath, Status: http.StatusInternalServerError, Count: 1},
			wantPosts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ids := newUnsentIDs()
			lose := &loseOnce{}
			cw := newCreateWorld(t, ids, func(c clusterservice.Clusters) clusterservice.Clusters { lose.Clusters = c; return lose })
			if tt.lose != nil {
				lose.then = func() error { return tt.lose(t, cw) }
			}
			if tt.fail != nil {
				_, err := cw.CS.InjectFault(*tt.fail)
				require.NoError(t, err)
			}
			_, err := cw.assign.Reconcile(cw.rid.Key())
			require.NoError(t, err)
			pending := controllertest.GetCluster(t, cw.Resources, cw.rid).Properties.ServiceProvider().PendingClusterServiceID

			_, _ = cw.create.Reconcile(cw.rid.Key())
			assert.Empty(t, cw.recorded(t), "the first attempt recorded nothing")
			assert.Equal(t, 0, cw.csCalls().searches, "the first create of a minted ID does not search")
			assert.False(t, ids.unsent(cw.rid.Key(), pending), "once sent, the ID's outcome is unknown")
			cw.awaitCache(t)

			_, err = cw.create.Reconcile(cw.rid.Key())
			require.NoError(t, err)
			calls := cw.csCalls()
			assert.Equal(t, 1, calls.searches, "the retry searched")
			assert.Equal(t, tt.wantPosts, calls.posts)
			assert.Equal(t, pending, cw.recorded(t), "the cluster CS has is recorded")
			assert.Equal(t, 1, identityMatches(t, cw.world, cw.shard, cw.rid), "Cluster Service holds the cluster once")
		})
	}
}

// A process knows no ID it did not mint: after a restart (an earlier process POSTed and
// crashed before recording), or with a pending ID another writer assigned, the create
// searches and adopts what Cluster Service has, whatever ID it is under. Without the
// search, the POST under the pending ID creates a second cluster where CS holds the first
// under another ID.
func TestClusterServiceCreateSearchesForAnIDItDidNotMint(t *testing.T) {
	t.Parallel()
	const otherID = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	otherHREF := clusterservice.ClustersPath + "/" + otherID
	tests := []struct {
		name string
		// csHas is the ID CS holds the cluster under ("" nothing).
		csHas string
		// minted is an ID this process minted for the cluster that never got written.
		minted     string
		wantRecord string
		wantPosts  int
	}{
		{name: "an earlier process created it under the pending ID", csHas: fixedCSID, wantRecord: fixedHREF},
		{name: "an earlier create put it under another ID", csHas: otherID, wantRecord: otherHREF},
		{name: "this process minted another ID, whose write lost", csHas: fixedCSID, minted: otherHREF, wantRecord: fixedHREF},
		{name: "Cluster Service does not have it", wantRecord: fixedHREF, wantPosts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ids := newUnsentIDs()
			cw := newCreateWorld(t, ids, nil, withPending(fixedHREF))
			if tt.minted != "" {
				ids.minting(cw.rid.Key(), tt.minted)
			}
			if tt.csHas != "" {
				postCluster(t, cw.world, controllertest.GetCluster(t, cw.Resources, cw.rid), tt.csHas, cw.shard)
				cw.CS.ResetRequests()
			}

			_, err := cw.create.Reconcile(cw.rid.Key())
			require.NoError(t, err)
			assert.Equal(t, csCalls{searches: 1, posts: tt.wantPosts}, cw.csCalls())
			assert.Equal(t, tt.wantRecord, cw.recorded(t))
			assert.Equal(t, 1, identityMatches(t, cw.world, cw.shard, cw.rid), "Cluster Service holds the cluster once")
		})
	}
}

// The whole flow, placement included: each cluster costs Cluster Service two calls, the
// pinned POST and the GET that observes where CS put it.
// Where keys may move between replicas (leaderless replicas splitting them), no process
// can know that an ID it minted was never sent by another: every create searches.
func TestClusterServiceCallsPerCluster(t *testing.T) {
	const clusters = 3
	for _, tt := range []struct {
		name     string
		keysMove bool
		want     csCalls // searches -1: at least one per cluster
	}{
		{"one process owns every key", false, csCalls{posts: clusters, observations: clusters}},
		// Every create attempt searches, the deferred ones before placement too.
		{"keys move between replicas", true, csCalls{searches: -1, posts: clusters, observations: clusters}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.env.KeysMove = tt.keysMove
			mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
			controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
			w.storeSubscription(t, controllertest.Tenant)
			w.CS.ResetRequests()
			w.run(t, Definitions())

			var rids []*api.ResourceID
			for i := range clusters {
				rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID(fmt.Sprintf("Counted%d", i))))
				controllertest.ChooseVersion(t, w.Resources, rid, waitFor)
				rids = append(rids, rid)
			}
			for _, rid := range rids {
				controllertest.WaitForSPC(t, w.Resources, rid, waitFor, "observed", func(s *api.ServiceProviderCluster) bool {
					return s.Properties.ObservedManagementCluster() != ""
				})
			}
			w.WaitQuiet(t, waitFor)
			got := w.csCalls()
			if tt.want.searches < 0 {
				assert.GreaterOrEqual(t, got.searches, clusters, "a search before every create")
				got.searches, tt.want.searches = 0, 0
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestUnsentIDs(t *testing.T) {
	t.Parallel()
	const key, a, b = "k", "/api/aro_hcp/v1alpha1/clusters/a", "/api/aro_hcp/v1alpha1/clusters/b"
	tests := []struct {
		name  string
		steps func(u *unsentIDs)
		// want is whether a is unsent for key afterwards.
		want bool
	}{
		{name: "nothing minted", steps: func(*unsentIDs) {}},
		{name: "minted", steps: func(u *unsentIDs) { u.minting(key, a) }, want: true},
		{name: "minted for another cluster", steps: func(u *unsentIDs) { u.minting("other", a) }},
		{name: "another ID minted", steps: func(u *unsentIDs) { u.minting(key, b) }},
		{name: "minted, then a create sent", steps: func(u *unsentIDs) { u.minting(key, a); u.sending(key) }},
		{name: "minted, then its write failed", steps: func(u *unsentIDs) { u.minting(key, a); u.notWritten(key, a) }},
		{name: "an older mint's failure does not drop a newer one", steps: func(u *unsentIDs) { u.minting(key, b); u.minting(key, a); u.notWritten(key, b) }, want: true},
		{name: "forgotten", steps: func(u *unsentIDs) { u.minting(key, a); u.forget(key) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := newUnsentIDs()
			tt.steps(u)
			assert.Equal(t, tt.want, u.unsent(key, a))
		})
	}
	t.Run("nil knows no ID", func(t *testing.T) {
		t.Parallel()
		var u *unsentIDs
		u.minting(key, a)
		assert.False(t, u.unsent(key, a))
		u.sending(key)
		u.notWritten(key, a)
		assert.Zero(t, u.len())
	})
}

// A pending ID whose write did not go through is not known unsent: the ID that ends up
// in the document may be another writer's. The one that is written is.
func TestPendingClusterServiceIDAssignEntersOnlyWrittenIDs(t *testing.T) {
	t.Parallel()
	ids := newUnsentIDs()
	w := newWorld(t)
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1")))
	contended := w.contend()
	assign := w.reconciler(t, pendingClusterServiceIDAssignDefinition(ids))
	w.Start(t)

	_, err := assign.Reconcile(rid.Key())
	require.NoError(t, err)
	replaced, _ := contended.conflicts(api.CosmosID(rid.String()))
	require.Equal(t, 1, replaced, "the write lost a race")
	assert.Empty(t, controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider().PendingClusterServiceID)
	assert.Zero(t, ids.len(), "the ID whose write lost is not known unsent")

	require.Eventually(t, func() bool {
		_, err := assign.Reconcile(rid.Key())
		require.NoError(t, err)
		return controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider().PendingClusterServiceID != ""
	}, waitFor, tick, "a later attempt writes an ID")
	pending := controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider().PendingClusterServiceID
	assert.True(t, ids.unsent(rid.Key(), pending))
	assert.Equal(t, 1, ids.len())
}
