package candidates_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// store is a memory store the tests fill before the caches start.
type store struct {
	database.Store
	t *testing.T
}

func (s store) mc(rid *api.ResourceID) {
	pk, err := api.FleetPartitionKey(rid)
	require.NoError(s.t, err)
	_, err = database.Create(s.t.Context(), s.Container(api.FleetContainer), api.NewDocument(rid, pk, api.ManagementClusterProperties{
		Spec: &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
	}))
	require.NoError(s.t, err)
}

func (s store) scheduling(mc *api.ResourceID, pending ...string) {
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(s.t, err)
	_, err = database.Create(s.t.Context(), s.Container(api.FleetContainer), api.NewDocument(api.SchedulingResourceID(mc), pk, api.ManagementClusterSchedulingProperties{
		Status: &api.SchedulingStatus{PendingAssignedClusters: pending},
	}))
	require.NoError(s.t, err)
}

func (s store) cluster(rid *api.ResourceID, singleReplica string) {
	pk, err := api.ResourcesPartitionKey(rid)
	require.NoError(s.t, err)
	sp := &api.ClusterServiceProviderProperties{ProvisioningState: "Accepted"}
	if singleReplica != "" {
		sp.ExperimentalFeatures = &api.ExperimentalFeatures{SingleReplica: singleReplica}
	}
	_, err = database.Create(s.t.Context(), s.Container(api.ResourcesContainer), api.NewDocument(rid, pk, api.ClusterProperties{ServiceProviderProperties: sp}))
	require.NoError(s.t, err)
}

// source starts the caches over what the store holds, through a Source taken before
// Start, as the backend takes it, and fails the test if anything changes a cached
// document in place.
func (s store) source() candidates.Source {
	s.t.Helper()
	f, err := informers.NewFactory(s.Store, informers.Options{PollInterval: 5 * time.Millisecond, Registerer: prometheus.NewRegistry()})
	require.NoError(s.t, err)
	caches := informers.NewCaches(f)
	src := candidates.FromCaches(caches)
	ctx, cancel := context.WithCancel(context.Background())
	s.t.Cleanup(cancel)
	f.Start(ctx)
	require.True(s.t, f.WaitForCacheSync(s.t.Context()))
	informertest.DetectMutations(s.t, caches.Registered()...)
	return src
}

func clusterID(name string) *api.ResourceID {
	return api.MustParseResourceID("/subscriptions/0000000A-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name)
}

func TestSnapshotPairsEveryMCWithItsSchedulingDocument(t *testing.T) {
	s := store{Store: memory.New(), t: t}
	withDoc, withoutDoc := api.ManagementClusterResourceID("1"), api.ManagementClusterResourceID("2")
	// ARO-HCP's casing: the scheduling document's ID is built lowercased from it.
	otherCasing := api.MustParseResourceID("/providers/Microsoft.RedHatOpenShift/stamps/Three/managementClusters/default")
	s.mc(withDoc)
	s.scheduling(withDoc, clusterID("a").Key())
	s.mc(withoutDoc)
	s.mc(otherCasing)
	s.scheduling(otherCasing)
	s.scheduling(api.ManagementClusterResourceID("orphan"))

	got := map[string]string{}
	for _, c := range s.source().Snapshot() {
		sched := ""
		if c.Scheduling != nil {
			sched = c.Scheduling.ResourceID
		}
		got[c.ManagementCluster.ResourceID] = sched
	}
	assert.Equal(t, map[string]string{
		withDoc.String():     api.SchedulingResourceID(withDoc).String(),
		withoutDoc.String():  "",
		otherCasing.String(): api.SchedulingResourceID(otherCasing).String(),
	}, got, "every MC once, with its scheduling document or none; a scheduling document without an MC is no candidate")
}

func TestSnapshotOfNoMCs(t *testing.T) {
	s := store{Store: memory.New(), t: t}
	s.scheduling(api.ManagementClusterResourceID("orphan"))
	got := s.source().Snapshot()
	assert.NotNil(t, got)
	assert.Empty(t, got)
}

func TestSingleReplicaLookup(t *testing.T) {
	s := store{Store: memory.New(), t: t}
	single, ha, other := clusterID("single"), clusterID("ha"), clusterID("other-feature")
	s.cluster(single, api.SingleReplica)
	s.cluster(ha, "")
	s.cluster(other, "Something")
	lookup := s.source().SingleReplicaLookup()
	tests := []struct {
		name              string
		id                string
		wantSingle, known bool
	}{
		{"single-replica", single.String(), true, true},
		{"any casing", strings.ToUpper(single.String()), true, true},
		{"HA", ha.String(), false, true},
		{"another value of the feature is HA", other.String(), false, true},
		{"not in the cache", clusterID("unknown").String(), false, false},
		{"not a resource ID", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotSingle, known := lookup(tt.id)
			assert.Equal(t, tt.wantSingle, gotSingle)
			assert.Equal(t, tt.known, known)
		})
	}
}

func TestSingleReplica(t *testing.T) {
	tests := []struct {
		name string
		sp   *api.ClusterServiceProviderProperties
		want bool
	}{
		{"no service-provider properties", nil, false},
		{"no experimental features", &api.ClusterServiceProviderProperties{}, false},
		{"single replica", &api.ClusterServiceProviderProperties{ExperimentalFeatures: &api.ExperimentalFeatures{SingleReplica: api.SingleReplica}}, true},
		{"the value is compared as ARO-HCP spells it", &api.ClusterServiceProviderProperties{ExperimentalFeatures: &api.ExperimentalFeatures{SingleReplica: "singlereplica"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := api.NewDocument(clusterID("c"), "s", api.ClusterProperties{ServiceProviderProperties: tt.sp})
			assert.Equal(t, tt.want, candidates.SingleReplica(c))
		})
	}
}
