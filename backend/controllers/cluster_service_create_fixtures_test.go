package controllers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

// csCreatePendingID is the pre-assigned CS ID of every fixture's create: the one the
// constructed pending fixture already carries, so that it needs no change at all.
const csCreatePendingID = "2qvfkb3o8ltm1h6ja0s2r9cdp4e7u5ng"

// csCreateShardPlaceholder stands, in an expected body, for the ID the fake CS gave the
// registered shard (it is random).
const csCreateShardPlaceholder = "<registered shard>"

// csCreatePending is the edit that gives a cluster its pre-assigned CS ID, as
// PendingClusterServiceIDAssign would.
var csCreatePending = controllertest.Set("properties.serviceProviderProperties.pendingClusterServiceID",
	clusterservice.ClustersPath+"/"+csCreatePendingID)

// csCreateSetup is how one fixture is brought to the state just before its Cluster
// Service create: the fewest edits of the stored document, and the desired version the
// SPC holds.
type csCreateSetup struct {
	edits []controllertest.Edit
	// desired is spec.control_plane_version.desired_version as ARO-HCP's
	// ControlPlaneDesiredVersion writes it: a full X.Y.Z from the channel
	// <channelGroup>-<X.Y of customerProperties.version.id>. For a document without a
	// version.id that controller resolves nothing (it fails to parse ""); such a
	// fixture's SPC stands for a version chosen anyway (an SRE's exact-version pin, say),
	// so that the rest of its body is still checked.
	desired string
}

// csCreateSetups has one entry per cluster fixture; a new fixture fails the test until
// it is given one.
var csCreateSetups = map[string]csCreateSetup{
	// As the current frontend writes a new cluster: only the pending ID is missing.
	"constructed/hcpcluster-accepted-fresh-no-clusterserviceid.json": {edits: []controllertest.Edit{csCreatePending}, desired: "4.20.8"},
	// A SWIFT cluster (with a vnet-integration subnet) as the frontend writes it, given
	// the identity URL the frontend takes from the create's header and the pending ID.
	"constructed/hcpcluster-accepted-fresh-swift-vnetintegrationsubnet.json": {edits: []controllertest.Edit{
		controllertest.Set("properties.serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL", frontend.IdentityURL), csCreatePending,
	}, desired: "4.20.8"},
	// Already in the pre-create state: no change.
	"constructed/hcpcluster-accepted-pending-clusterserviceid.json": {desired: "4.20.8"},
	// Created long ago under clusters_mgmt: its clusterServiceID removed, a pending ID set.
	"hcpcluster-accepted-clusters-mgmt-v1-csid.json": {edits: []controllertest.Edit{
		controllertest.Unset("properties.serviceProviderProperties.clusterServiceID"), csCreatePending,
	}, desired: "4.20.8"},
	// The frontend's create with tags: clusterServiceID removed, a pending ID set;
	// version.id 4.20 in stable.
	"hcpcluster-accepted-with-tags.json": {edits: []controllertest.Edit{
		controllertest.Unset("properties.serviceProviderProperties.clusterServiceID"), csCreatePending,
	}, desired: "4.20.8"},
	// The legacy format keeps its CS ID in properties.internalId: removed, and a pending
	// ID set (which gives it a serviceProviderProperties).
	"hcpcluster-legacy-resourcedocument-format.json": {edits: []controllertest.Edit{
		controllertest.Unset("properties.internalId"), csCreatePending,
	}, desired: "4.20.8"},
	// Provisioning: clusterServiceID removed, a pending ID set.
	"hcpcluster-provisioning-lowercase-resourcetype.json": {edits: []controllertest.Edit{
		controllertest.Unset("properties.serviceProviderProperties.clusterServiceID"), csCreatePending,
	}, desired: "4.20.8"},
	// Succeeded before the migration added ingress and KMS visibility: clusterServiceID
	// removed, a pending ID set; its provisioningState stays, ClusterServiceCreate does
	// not read it.
	"hcpcluster-succeeded-before-migration.json": {edits: []controllertest.Edit{
		controllertest.Unset("properties.serviceProviderProperties.clusterServiceID"), csCreatePending,
	}, desired: "4.20.8"},
	// No customerProperties at all: clusterServiceID removed, a pending ID set.
	"hcpcluster-succeeded-minimal.json": {edits: []controllertest.Edit{
		controllertest.Unset("properties.serviceProviderProperties.clusterServiceID"), csCreatePending,
	}, desired: "4.20.8"},
	// Captured while being deleted: clusterServiceID and deletionTimestamp removed,
	// provisioningState back to the frontend's Accepted (Deleting alone stops the
	// create), a pending ID set; version.id 4.21.19 in candidate.
	"realcosmos-hcpcluster-deleting-with-legacy-fields.json": {edits: []controllertest.Edit{
		controllertest.Unset("properties.serviceProviderProperties.clusterServiceID"),
		controllertest.Unset("properties.serviceProviderProperties.deletionTimestamp"),
		controllertest.Set("properties.serviceProviderProperties.provisioningState", "Accepted"),
		csCreatePending,
	}, desired: "4.21.19"},
}

// csCreateExpectation is testdata/cs-create/<fixture>.json, written by hand from the
// table in docs/cluster-service-create.md: the body the fake CS must receive, or why the
// cluster waits.
type csCreateExpectation struct {
	Creates map[string]any `json:"creates"`
	Waits   *struct {
		Reason string `json:"reason"`
		// CosmosPaths must each appear in the wait's log line.
		CosmosPaths []string `json:"cosmosPaths"`
	} `json:"waits"`
}

// Every cluster fixture of the shared set goes through ClusterServiceCreate, placed on a
// registered MC with its Subscription and SPC stored: the body the fake CS receives is
// compared field by field with the hand-written one, or the wait with its reason.
func TestClusterServiceCreateFixtures(t *testing.T) {
	t.Parallel()
	var names []string
	for _, f := range arohcp.All() {
		_, _, typ := api.Identify(f.Data)
		if strings.EqualFold(typ, api.ClusterResourceType) {
			names = append(names, f.Name)
		}
	}
	require.NotEmpty(t, names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			setup, ok := csCreateSetups[name]
			require.True(t, ok, "cluster fixture %s has no entry in csCreateSetups", name)
			want := readCSCreateExpectation(t, name)

			w := newWorld(t)
			waits, err := NewCreationWaits(prometheus.NewRegistry())
			require.NoError(t, err)
			w.env.CreationWaits = waits
			shard := controllertest.RegisterShard(t, w.CSClient, 1)
			mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
			w.Put(t, controllertest.Seed{Container: api.ResourcesContainer, Fixture: name, Edits: setup.edits})
			rid := fixtureResourceID(t, name)
			sub, err := frontend.Subscription(rid.SubscriptionID, frontend.Tenant)
			require.NoError(t, err)
			_, err = database.Create(t.Context(), w.Resources, sub)
			require.NoError(t, err)
			controllertest.StoreSPC(t, w.Resources, rid, withSpec(mc), func(s *api.ServiceProviderCluster) {
				s.Properties.Spec.ControlPlaneVersion = &api.ControlPlaneVersionSpec{DesiredVersion: setup.desired}
			})
			r := w.reconciler(t, clusterServiceCreateDefinition(nil))
			w.Start(t)
			w.CS.ResetRequests()

			res, err := r.Reconcile(rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res)
			posts := csCreatePosts(w)

			if want.Waits != nil {
				assert.Empty(t, posts, "nothing is created")
				assert.Equal(t, want.Waits.Reason, waits.Reason(rid.Key()))
				for _, p := range want.Waits.CosmosPaths {
					assert.Contains(t, w.Logs.String(), p, "the log names the field")
				}
				return
			}
			require.Len(t, posts, 1, "one create")
			assert.Equal(t, http.StatusCreated, posts[0].Status, "the fake CS accepted %s", posts[0].Body)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(posts[0].Body), &got))
			expected := replaceLeaf(want.Creates, csCreateShardPlaceholder, shard)
			for _, d := range diffJSON("", expected, got) {
				t.Errorf("body differs at %s", d)
			}
			assert.Empty(t, waits.Reason(rid.Key()), "no longer waiting")
			sp := controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider()
			assert.Equal(t, clusterservice.ClustersPath+"/"+csCreatePendingID, sp.ClusterServiceID)
			assert.Empty(t, sp.PendingClusterServiceID)
		})
	}
}

func readCSCreateExpectation(t *testing.T, fixture string) csCreateExpectation {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cs-create", fixture))
	require.NoError(t, err, "every cluster fixture has its expected outcome")
	var e csCreateExpectation
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), fixture)
	require.True(t, (e.Creates == nil) != (e.Waits == nil), "%s says either creates or waits", fixture)
	return e
}

func fixtureResourceID(t *testing.T, fixture string) *api.ResourceID {
	t.Helper()
	_, id, _ := api.Identify(arohcp.Get(fixture))
	rid, err := api.ParseResourceID(id)
	require.NoError(t, err)
	return rid
}

// csCreatePost is one cluster create in the fake CS's log.
type csCreatePost struct {
	Status int
	Body   string
}

func csCreatePosts(w *world) []csCreatePost {
	var out []csCreatePost
	for _, r := range w.CS.Requests() {
		if r.Method == http.MethodPost && r.Path == clusterservice.ClustersPath {
			out = append(out, csCreatePost{Status: r.Status, Body: r.Body})
		}
	}
	return out
}

// replaceLeaf returns v with every string leaf equal to from replaced by to.
func replaceLeaf(v map[string]any, from, to string) map[string]any {
	var walk func(any) any
	walk = func(x any) any {
		switch y := x.(type) {
		case map[string]any:
			out := make(map[string]any, len(y))
			for k, c := range y {
				out[k] = walk(c)
			}
			return out
		case []any:
			out := make([]any, len(y))
			for i, c := range y {
				out[i] = walk(c)
			}
			return out
		case string:
			if y == from {
				return to
			}
		}
		return x
	}
	return walk(v).(map[string]any)
}

// diffJSON lists, path by path, where two decoded JSON values differ: a field only one
// has, or a leaf whose values differ. Lists are compared item by item.
func diffJSON(path string, want, got any) []string {
	at := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	wm, wIsMap := want.(map[string]any)
	gm, gIsMap := got.(map[string]any)
	if wIsMap && gIsMap {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		var out []string
		for _, k := range sortedStrings(keys) {
			wv, inW := wm[k]
			gv, inG := gm[k]
			switch {
			case !inG:
				out = append(out, fmt.Sprintf("%s: missing (want %v)", at(k), wv))
			case !inW:
				out = append(out, fmt.Sprintf("%s: not expected (got %v)", at(k), gv))
			default:
				out = append(out, diffJSON(at(k), wv, gv)...)
			}
		}
		return out
	}
	wl, wIsList := want.([]any)
	gl, gIsList := got.([]any)
	if wIsList && gIsList {
		var out []string
		for i := 0; i < len(wl) || i < len(gl); i++ {
			switch {
			case i >= len(gl):
				out = append(out, fmt.Sprintf("%s[%d]: missing (want %v)", path, i, wl[i]))
			case i >= len(wl):
				out = append(out, fmt.Sprintf("%s[%d]: not expected (got %v)", path, i, gl[i]))
			default:
				out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i])...)
			}
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
	}
	return nil
}

func sortedStrings(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// diffJSON names every differing path, so that a body that is wrong in several places
// says where.
func TestDiffJSONNamesEachDifferingPath(t *testing.T) {
	t.Parallel()
	decode := func(s string) any {
		var v any
		require.NoError(t, json.Unmarshal([]byte(s), &v))
		return v
	}
	want := decode(`{"a":{"b":1,"c":"x"},"l":[{"k":1},{"k":2}],"gone":true,"m":{}}`)
	got := decode(`{"a":{"b":2,"c":"x"},"l":[{"k":1},{"k":3},{"k":4}],"extra":"y","m":{}}`)
	assert.Equal(t, []string{
		"a.b: want 1, got 2",
		"extra: not expected (got y)",
		"gone: missing (want true)",
		"l[1].k: want 2, got 3",
		"l[2]: not expected (got map[k:4])",
	}, diffJSON("", want, got))
	assert.Empty(t, diffJSON("", want, want))
}
