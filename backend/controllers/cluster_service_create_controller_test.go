package controllers

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	arohcpsdk "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// Clusters with nothing to create yet, or nothing left to create, are left as they are
// without a reason to wait for: no write, no POST, no requeue.
func TestClusterServiceCreateLeavesAlone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cluster func(*testing.T) *api.Cluster
		spc     bool
		// log is a message the reconcile must log.
		log string
		// searched says whether CS was asked about the cluster.
		searched bool
	}{
		{name: "placement not resolved", cluster: func(t *testing.T) *api.Cluster { return newCluster(t, clusterID("c1"), withPending(fixedHREF)) }, spc: true, log: deferralMessage, searched: true},
		{name: "no SPC yet", cluster: func(t *testing.T) *api.Cluster { return newCluster(t, clusterID("c1"), withPending(fixedHREF)) }, log: "until the cluster has its ServiceProviderCluster"},
		{name: "already created", cluster: func(t *testing.T) *api.Cluster {
			return newCluster(t, clusterID("c1"), withClusterServiceID("/api/aro_hcp/v1alpha1/clusters/abcdefghijklmnopqrstuvwxyz012345"))
		}, spc: true},
		{name: "no pending ID yet", cluster: func(t *testing.T) *api.Cluster { return newCluster(t, clusterID("c1")) }, spc: true},
		// A cluster that failed is not created, placed or not: make chaos saw 55-73 POSTs
		// for one such cluster.
		{name: "failed", cluster: func(t *testing.T) *api.Cluster {
			return newCluster(t, clusterID("c1"), withPending(fixedHREF), func(c *api.Cluster) {
				c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateFailed
			})
		}, spc: true},
		{name: "canceled", cluster: func(t *testing.T) *api.Cluster {
			return newCluster(t, clusterID("c1"), withPending(fixedHREF), func(c *api.Cluster) {
				c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateCanceled
			})
		}, spc: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.storeSubscription(t, controllertest.Tenant)
			rid := controllertest.StoreCluster(t, w.Resources, tt.cluster(t))
			if tt.spc {
				controllertest.StoreSPC(t, w.Resources, rid)
			}
			r := w.reconciler(t, clusterServiceCreateDefinition(nil))
			w.Start(t)
			before := resourcesSnapshot(t, w.Resources)

			res, err := r.Reconcile(rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res, "the wait ends with an event, not a timer")
			assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
			assert.Zero(t, w.csRequests(http.MethodPost, clusterservice.ClustersPath), "nothing was created")
			if tt.searched {
				assert.Equal(t, 1, w.csRequests(http.MethodGet, clusterservice.ClustersPath))
			} else {
				assert.Empty(t, w.CS.Requests())
			}
			if tt.log != "" {
				assert.Contains(t, w.Logs.String(), tt.log)
			}
			assert.Empty(t, w.env.CreationWaits.Reason(rid.Key()), "not a wait operators are told about")
			assert.Equal(t, noWaits, waitingClusters(t, w))
		})
	}
}

// noWaits is the waiting-clusters gauge when no cluster waits: every reason at zero.
var noWaits = map[string]float64{
	WaitDesiredVersion: 0, WaitSubscription: 0, WaitSubscriptionTenant: 0, WaitManagedResourceGroup: 0, WaitInvalidDocument: 0,
}

// waitingClusters is backend_cluster_service_create_waiting_clusters by reason, as
// scraped.
func waitingClusters(t *testing.T, w *world) map[string]float64 {
	t.Helper()
	families, err := w.Registry.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, fam := range families {
		if fam.GetName() != "backend_cluster_service_create_waiting_clusters" {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// logged returns the controller's log records whose message contains msg.
func logged(t *testing.T, w *world, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(w.Logs.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "log line %q", line)
		if m, _ := rec["msg"].(string); strings.Contains(m, msg) {
			out = append(out, rec)
		}
	}
	return out
}

// A placed cluster that cannot be created until another component writes what is
// missing waits: no POST, no write, no requeue (the missing write is an event), a log
// line (at Info when the wait starts, then at Debug) and the reason, for operators in the gauge. Once the missing field arrives, the
// next reconcile creates the cluster and the reason clears.
func TestClusterServiceCreateWaits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// subscription: "-" stores none, else the tenant to store ("" stores
		// properties: null).
		subscription string
		cluster      []func(*api.Cluster)
		spc          []func(*api.ServiceProviderCluster)
		reason       string
		log          string
		// fix writes what was missing, as the component that owns it would.
		fix func(t *testing.T, w *world, cluster, subscription *api.ResourceID)
	}{
		{
			name: "no Subscription cached", subscription: "-",
			reason: WaitSubscription, log: "waiting for the subscription's tenant",
			fix: func(t *testing.T, w *world, _, _ *api.ResourceID) { w.storeSubscription(t, controllertest.Tenant) },
		},
		{
			name: "Subscription with properties null", subscription: "",
			reason: WaitSubscriptionTenant, log: "waiting for the subscription's tenant",
			fix: func(t *testing.T, w *world, _, sub *api.ResourceID) {
				w.ReplaceStored(t, api.ResourcesContainer, sub, controllertest.Set("properties.properties", map[string]string{"tenantId": controllertest.Tenant}))
			},
		},
		{
			name: "desired version missing", subscription: controllertest.Tenant, spc: []func(*api.ServiceProviderCluster){withoutDesiredVersion},
			reason: WaitDesiredVersion, log: "waiting for ARO-HCP to choose the control plane version",
			fix: func(t *testing.T, w *world, cluster, _ *api.ResourceID) {
				controllertest.ChooseVersion(t, w.Resources, cluster, waitFor)
			},
		},
		{
			name: "managed resource group missing", subscription: controllertest.Tenant,
			cluster: []func(*api.Cluster){func(c *api.Cluster) { c.Properties.CustomerProperties.Platform.ManagedResourceGroup = "" }},
			reason:  WaitManagedResourceGroup, log: "waiting for the cluster's managed resource group",
			fix: func(t *testing.T, w *world, cluster, _ *api.ResourceID) {
				w.ReplaceStored(t, api.ResourcesContainer, cluster, controllertest.Set("properties.customerProperties.platform.managedResourceGroup", "mrg-c1"))
			},
		},
		{
			name: "a pending ID that is not an aro_hcp cluster", subscription: controllertest.Tenant,
			cluster: []func(*api.Cluster){withPending(clusterservice.ClustersPath + "/cs-create-current")},
			reason:  WaitInvalidDocument, log: "cannot be created in Cluster Service until it is corrected",
			fix: func(t *testing.T, w *world, cluster, _ *api.ResourceID) {
				w.ReplaceStored(t, api.ResourcesContainer, cluster, controllertest.Set("properties.serviceProviderProperties.pendingClusterServiceID", fixedHREF))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			shard := controllertest.RegisterShard(t, w.CSClient, 1)
			mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
			w.CS.ResetRequests()
			var sub *api.ResourceID
			if tt.subscription != "-" {
				sub = w.storeSubscription(t, tt.subscription)
			}
			rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), append([]func(*api.Cluster){withPending(fixedHREF)}, tt.cluster...)...))
			controllertest.StoreSPC(t, w.Resources, rid, append([]func(*api.ServiceProviderCluster){withSpec(mc)}, tt.spc...)...)
			r := w.reconciler(t, clusterServiceCreateDefinition(nil))
			w.Start(t)
			before := resourcesSnapshot(t, w.Resources)

			res, err := r.Reconcile(rid.Key())
			require.NoError(t, err, "a wait is not an error")
			assert.Equal(t, controller.Result{}, res, "no requeue: the missing write is an event")
			assert.Equal(t, before, resourcesSnapshot(t, w.Resources), "nothing written")
			assert.Zero(t, w.csRequests(http.MethodPost, clusterservice.ClustersPath), "nothing created")
			res, err = r.Reconcile(rid.Key())
			require.NoError(t, err, "waiting again is not an error")
			assert.Equal(t, controller.Result{}, res)
			recs := logged(t, w, tt.log)
			require.Len(t, recs, 2, "one log line per reconcile")
			assert.Equal(t, tt.reason, recs[0]["reason"])
			assert.Equal(t, []any{"INFO", "DEBUG"}, []any{recs[0]["level"], recs[1]["level"]},
				"the wait is news when it starts; every event of the waiting cluster reconciles it again")
			assert.Equal(t, tt.reason, w.env.CreationWaits.Reason(rid.Key()))
			want := maps.Clone(noWaits)
			want[tt.reason] = 1
			assert.Equal(t, want, waitingClusters(t, w))

			tt.fix(t, w, rid, sub)
			caches := []controllertest.CachedType{
				controllertest.Cached(w.Caches.Clusters(), api.ResourcesContainer, api.ClusterResourceType),
				controllertest.Cached(w.Caches.ServiceProviderClusters(), api.ResourcesContainer, api.ServiceProviderClusterResourceType),
				controllertest.Cached(w.Caches.Subscriptions(), api.ResourcesContainer, api.SubscriptionResourceType),
			}
			w.WaitForCaches(t, caches...)
			res, err = r.Reconcile(rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res)
			assert.Equal(t, fixedHREF, controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider().ClusterServiceID, "created once the field arrived")
			created := controllertest.CreatedClusters(t, w.CS)
			require.Len(t, created, 1)
			assert.Equal(t, controllertest.Tenant, created[0].Azure.TenantID)
			assert.Equal(t, shard, created[0].Shard)
			assert.Empty(t, w.env.CreationWaits.Reason(rid.Key()), "the reason clears")
			assert.Equal(t, noWaits, waitingClusters(t, w))
		})
	}
}

// A cluster waiting for its subscription's tenant is woken by the Subscription's change
// alone: resync is off and the wait has no requeue, so only the Subscription informer's
// event, mapped to the clusters of that subscription, brings it back.
func TestClusterServiceCreateWakesOnSubscriptionChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shard := controllertest.RegisterShard(t, w.CSClient, 1)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
	sub := w.storeSubscription(t, "")
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), withPending(fixedHREF)))
	controllertest.StoreSPC(t, w.Resources, rid, withSpec(mc))
	w.run(t, only(ClusterServiceCreateName))
	require.Eventually(t, func() bool { return w.env.CreationWaits.Reason(rid.Key()) == WaitSubscriptionTenant }, waitFor, tick)

	w.ReplaceStored(t, api.ResourcesContainer, sub, controllertest.Set("properties.properties", map[string]string{"tenantId": controllertest.Tenant}))

	// The kit polls the feed every 5 ms; a second is some 200 polls, room for a loaded
	// machine, and without the trigger the create never comes at all.
	require.Eventually(t, func() bool { return len(controllertest.CreatedClusters(t, w.CS)) == 1 }, time.Second, tick,
		"the Subscription's change woke the waiting cluster")
	created := controllertest.CreatedClusters(t, w.CS)[0]
	assert.Equal(t, controllertest.Tenant, created.Azure.TenantID)
	assert.Equal(t, shard, created.Shard)
	controllertest.WaitForCluster(t, w.Resources, rid, waitFor, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID == fixedHREF })
	assert.Empty(t, w.env.CreationWaits.Reason(rid.Key()))
}

// A waiting cluster that starts deleting stops counting as waiting at its own event:
// resync is off, so only the event can clear the wait, and the controller's event filter
// must not call a cluster with nothing left to create settled while its wait is recorded.
func TestClusterServiceCreateDeletingClearsItsWait(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shard := controllertest.RegisterShard(t, w.CSClient, 1)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
	w.storeSubscription(t, "")
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), withPending(fixedHREF)))
	controllertest.StoreSPC(t, w.Resources, rid, withSpec(mc))
	w.run(t, only(ClusterServiceCreateName))
	require.Eventually(t, func() bool { return w.env.CreationWaits.Reason(rid.Key()) == WaitSubscriptionTenant }, waitFor, tick)

	w.ReplaceStored(t, api.ResourcesContainer, rid, controllertest.Set("properties.serviceProviderProperties.provisioningState", api.ProvisioningStateDeleting))

	require.Eventually(t, func() bool { return w.env.CreationWaits.Reason(rid.Key()) == "" }, waitFor, tick,
		"the deleting cluster's event cleared its wait")
	assert.Equal(t, noWaits, waitingClusters(t, w))
	assert.Empty(t, controllertest.CreatedClusters(t, w.CS), "nothing created")
}

// Cluster Service answering a create with another ID than the pre-assigned one is an
// error, retried with back-off, and nothing is recorded: a cluster bound to an ID it was
// not created under would never be found again by a retry.
func TestClusterServiceCreateRefusesAnotherID(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shard := controllertest.RegisterShard(t, w.CSClient, 1)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
	w.storeSubscription(t, controllertest.Tenant)
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), withPending(fixedHREF)))
	controllertest.StoreSPC(t, w.Resources, rid, withSpec(mc))
	const otherID = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	answer := `{"kind":"Cluster","id":"` + otherID + `","href":"` + clusterservice.ClustersPath + "/" + otherID + `"}`
	_, err := w.CS.InjectFault(fakeclusterservice.Fault{Method: http.MethodPost, PathPrefix: clusterservice.ClustersPath, Status: http.StatusCreated, Body: &answer})
	require.NoError(t, err)
	r := w.reconciler(t, clusterServiceCreateDefinition(nil))
	w.Start(t)
	w.CS.ResetRequests()
	before := resourcesSnapshot(t, w.Resources)

	_, err = r.Reconcile(rid.Key())
	require.Error(t, err)
	assert.Contains(t, err.Error(), otherID)
	assert.Contains(t, err.Error(), "pre-assigned ID")
	assert.Equal(t, 1, w.csRequests(http.MethodPost, clusterservice.ClustersPath), "CS was asked once")
	assert.Equal(t, before, resourcesSnapshot(t, w.Resources), "nothing recorded")
	sp := controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider()
	assert.Equal(t, fixedHREF, sp.PendingClusterServiceID)
	assert.Empty(t, sp.ClusterServiceID)
}

func TestClusterServiceCreateFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pending string
		// mcShard is the MC's registered shard: "" registers none, "-" stores no MC.
		mcShard string
		wantErr string
	}{
		{name: "placed on an MC the cache does not hold", pending: fixedCSID, mcShard: "-", wantErr: "not in the cache"},
		{name: "placed on an MC without a provision shard", pending: fixedCSID, mcShard: "", wantErr: "no status.clusterServiceProvisionShardID"},
		{name: "placed on an MC whose shard CS does not know", pending: fixedCSID, mcShard: "unknown-shard", wantErr: "400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			mc := api.ManagementClusterResourceID("1")
			switch tt.mcShard {
			case "-":
			default:
				controllertest.CreateManagementCluster(t, w.Fleet, "1", tt.mcShard)
			}
			w.CS.ResetRequests()
			w.storeSubscription(t, controllertest.Tenant)
			rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), withPending(clusterservice.ClustersPath+"/"+tt.pending)))
			controllertest.StoreSPC(t, w.Resources, rid, withSpec(mc))
			r := w.reconciler(t, clusterServiceCreateDefinition(nil))
			w.Start(t)
			before := resourcesSnapshot(t, w.Resources)

			_, err := r.Reconcile(rid.Key())
			require.Error(t, err, "retried with back-off")
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
		})
	}
}

// A placed cluster that Cluster Service already has under its pending ID (ARO-HCP's own
// create, or one before placement, crashed before recording it) is adopted by the search,
// not created a second time, whatever MC placement chose: ManagementClusterPlacementSync
// then records where it really is. Placement relies on this for a pending ID
// (docs/placement.md).
func TestClusterServiceCreateAdoptsAPlacedClusterClusterServiceHas(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	owner := controllertest.RegisterShard(t, w.CSClient, 1)
	controllertest.CreateManagementCluster(t, w.Fleet, "1", owner)
	chosen := controllertest.CreateManagementCluster(t, w.Fleet, "2", controllertest.RegisterShard(t, w.CSClient, 2))
	w.storeSubscription(t, controllertest.Tenant)
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), withPending(fixedHREF)))
	createInClusterService(t, w, rid, owner)
	controllertest.StoreSPC(t, w.Resources, rid, withSpec(chosen))
	w.CS.ResetRequests()
	r := w.reconciler(t, clusterServiceCreateDefinition(nil))
	w.Start(t)

	res, err := r.Reconcile(rid.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, res)
	sp := controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider()
	assert.Equal(t, fixedHREF, sp.ClusterServiceID, "the cluster CS has is recorded")
	assert.Empty(t, sp.PendingClusterServiceID)
	assert.Zero(t, w.csRequests(http.MethodPost, clusterservice.ClustersPath), "not created a second time")
	onShard, err := w.CS.ClustersOnShard(owner)
	require.NoError(t, err)
	assert.Len(t, onShard, 1, "it stays where CS put it")
}

func TestClusterServiceCreateLeavesDeletingClustersAlone(t *testing.T) {
	t.Parallel()
	leavesDeletingClustersAlone(t, clusterServiceCreateDefinition(nil))
}

func TestAdoptable(t *testing.T) {
	t.Parallel()
	cluster := func(id string) *arohcpsdk.Cluster {
		c, err := arohcpsdk.NewCluster().ID(id).Build()
		require.NoError(t, err)
		return c
	}
	pending := fixedHREF
	other1, other2 := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	tests := []struct {
		name    string
		matches []*arohcpsdk.Cluster
		want    string
		wantErr bool
	}{
		{name: "the one created under the pending ID", matches: []*arohcpsdk.Cluster{cluster(fixedCSID)}, want: fixedCSID},
		{name: "the pending ID among others", matches: []*arohcpsdk.Cluster{cluster(other1), cluster(fixedCSID), cluster(other2)}, want: fixedCSID},
		{name: "the only match", matches: []*arohcpsdk.Cluster{cluster(other1)}, want: other1},
		{name: "several foreign matches", matches: []*arohcpsdk.Cluster{cluster(other1), cluster(other2)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := adoptable(tt.matches, pending)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.ID())
		})
	}
}
