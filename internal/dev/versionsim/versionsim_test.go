package versionsim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
	"github.com/hcpsched/hcpsched/internal/dev/versionsim"
	"github.com/hcpsched/hcpsched/internal/informers"
)

const (
	waitFor = 10 * time.Second
	tick    = 10 * time.Millisecond
	// placedSPC is a stored SPC with ARO-HCP's version fields next to hcpsched's.
	placedSPC = "constructed/serviceprovidercluster-placed-spec-and-status-managementcluster.json"
)

// The placed SPC fixture's identity, replaced by cluster n's.
const (
	fixtureSubscription = "e8c5a115-842d-4d7e-98ad-cfb2c50b209e"
	fixtureGroup        = "rg-np-version-upgrade-pckjw8-79qhmc"
	fixtureName         = "np-version-upgrade-cluster-pckjw8"
)

// env is a memory store the simulator runs against, with its logs.
type env struct {
	t     *testing.T
	store database.Store
	logs  *logbuffer.Buffer
}

func newEnv(t *testing.T) *env {
	return &env{t: t, store: memory.New(), logs: &logbuffer.Buffer{}}
}

// run starts a simulator over store until the test ends.
func (e *env) run(store database.Store, cfg versionsim.Config) {
	t := e.t
	cfg.Store = store
	cfg.Logger = slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Informers = informers.Options{PollInterval: 20 * time.Millisecond}
	sim, err := versionsim.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// cluster writes cluster n's Subscription and cluster documents as ARO-HCP's frontend
// does, after edit.
func (e *env) cluster(n int, edit func(*api.Cluster)) *api.Cluster {
	t := e.t
	resources := e.store.Container(api.ResourcesContainer)
	sub, err := frontend.Subscription(frontend.SubscriptionID(n), frontend.Tenant)
	require.NoError(t, err)
	_, err = database.Create(t.Context(), resources, sub)
	require.NoError(t, err)
	doc, err := frontend.Cluster(n, false, time.Now())
	require.NoError(t, err)
	if edit != nil {
		edit(doc)
	}
	stored, err := database.Create(t.Context(), resources, doc)
	require.NoError(t, err)
	return stored
}

// spcTree is cluster n's SPC: the placed fixture's, under cluster n, after edit.
func spcTree(t *testing.T, n int, edit func(tree map[string]any)) map[string]any {
	body := strings.NewReplacer(
		fixtureSubscription, frontend.SubscriptionID(n), fixtureGroup, fmt.Sprintf("rg-local-%d", n), fixtureName, fmt.Sprintf("hcp-local-%d", n),
	).Replace(string(arohcp.Get(placedSPC)))
	var tree map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &tree))
	arohcp.WithoutSystemProperties(tree)
	tree["id"] = api.CosmosID(tree["resourceID"].(string))
	if edit != nil {
		edit(tree)
	}
	return tree
}

// put stores a document tree as it is, the way another writer's document arrives.
func (e *env) put(tree map[string]any) string {
	b, err := json.Marshal(tree)
	require.NoError(e.t, err)
	_, err = e.store.Container(api.ResourcesContainer).Create(e.t.Context(), tree["partitionKey"].(string), b)
	require.NoError(e.t, err)
	return tree["resourceID"].(string)
}

// read is the stored document as a JSON tree, and its decoded form.
func (e *env) read(resourceID string) (map[string]any, *api.ServiceProviderCluster) {
	t := e.t
	rid := api.MustParseResourceID(resourceID)
	pk, err := api.ResourcesPartitionKey(rid)
	require.NoError(t, err)
	item, err := e.store.Container(api.ResourcesContainer).Get(t.Context(), pk, api.CosmosID(resourceID))
	require.NoError(t, err)
	var tree map[string]any
	require.NoError(t, json.Unmarshal(item.Body, &tree))
	doc, err := database.DecodeItem[api.ServiceProviderClusterProperties](item)
	require.NoError(t, err)
	return tree, doc
}

// waitForVersion waits until the SPC has a desired version and returns the document.
func (e *env) waitForVersion(resourceID string) (map[string]any, *api.ServiceProviderCluster) {
	var tree map[string]any
	var doc *api.ServiceProviderCluster
	require.Eventually(e.t, func() bool {
		tree, doc = e.read(resourceID)
		return doc.Properties.DesiredControlPlaneVersion() != ""
	}, waitFor, tick)
	return tree, doc
}

// logged reports whether the simulator logged msg for the SPC resourceID, with every
// one of attrs (JSON fragments such as `"attempts":2`) on the same line.
func (e *env) logged(msg, resourceID string, attrs ...string) bool {
	cluster := strings.ToLower(api.MustParseResourceID(resourceID).Parent().String())
	want := append([]string{fmt.Sprintf(`"msg":%q`, msg), fmt.Sprintf(`"resourceID":%q`, cluster)}, attrs...)
	for line := range strings.SplitSeq(e.logs.String(), "\n") {
		found := true
		for _, w := range want {
			found = found && strings.Contains(line, w)
		}
		if found {
			return true
		}
	}
	return false
}

// waitForLog waits until the simulator has logged msg for the SPC resourceID.
func (e *env) waitForLog(msg, resourceID string) {
	require.Eventually(e.t, func() bool { return e.logged(msg, resourceID) }, waitFor, tick, "no log line %q for %s", msg, resourceID)
}

// withoutWriteStamp drops what every write changes: the Cosmos system properties and
// the envelope metadata each writer stamps (cosmosMetadata.etag, instanceVersion).
func withoutWriteStamp(tree map[string]any) map[string]any {
	arohcp.WithoutSystemProperties(tree)
	if props, ok := tree["properties"].(map[string]any); ok {
		if m, ok := props["cosmosMetadata"].(map[string]any); ok {
			delete(m, "etag")
			delete(m, "instanceVersion")
		}
	}
	return tree
}

func object(tree map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, ok := tree[p].(map[string]any)
		if !ok {
			return nil
		}
		tree = next
	}
	return tree
}

func TestWritesOnlyTheDesiredVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		// cluster edits the cluster document; spc the stored SPC.
		cluster func(*api.Cluster)
		spc     func(tree map[string]any)
		want    string
	}{
		{
			name: "an SPC as hcpsched creates it",
			spc: func(tree map[string]any) {
				tree["properties"] = map[string]any{"cosmosMetadata": object(tree, "properties", "cosmosMetadata")}
			},
			want: "4.20.8",
		},
		{
			name: "a placed SPC with ARO-HCP's other version fields and no control_plane_version",
			spc:  func(tree map[string]any) { delete(object(tree, "properties", "spec"), "control_plane_version") },
			want: "4.20.8",
		},
		{
			name: "a control_plane_version without desired_version keeps its other fields",
			spc: func(tree map[string]any) {
				object(tree, "properties", "spec")["control_plane_version"] = map[string]any{"futureField": "kept"}
			},
			want: "4.20.8",
		},
		{
			name: "X.Y and channel group from the cluster",
			cluster: func(c *api.Cluster) {
				c.Properties.CustomerProperties.Version = &api.ClusterVersion{ID: "4.19", ChannelGroup: "candidate"}
			},
			spc:  func(tree map[string]any) { delete(object(tree, "properties", "spec"), "control_plane_version") },
			want: "4.19.20",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cluster(1, tc.cluster)
			id := e.put(spcTree(t, 1, tc.spc))
			before, stored := e.read(id)
			e.run(e.store, versionsim.Config{})

			after, written := e.waitForVersion(id)
			assert.Equal(t, tc.want, written.Properties.DesiredControlPlaneVersion())
			assert.Equal(t, stored.InstanceVersion()+1, written.InstanceVersion(), "one write")

			// Everything but the one field and the write's stamp is as it was.
			cpv := object(after, "properties", "spec", "control_plane_version")
			delete(cpv, "desired_version")
			if object(before, "properties", "spec", "control_plane_version") == nil && len(cpv) == 0 {
				delete(object(after, "properties", "spec"), "control_plane_version")
			}
			if object(before, "properties", "spec") == nil && len(object(after, "properties", "spec")) == 0 {
				delete(object(after, "properties"), "spec")
			}
			assert.Equal(t, withoutWriteStamp(before), withoutWriteStamp(after))
		})
	}
}

func TestSkipsSPCsThatNeedNoVersion(t *testing.T) {
	tests := []struct {
		name string
		// setup stores what the simulator must leave alone and returns the SPC's ID and
		// the log line that shows it was looked at.
		setup func(e *env) (id, logged string)
	}{
		{"an SPC with a desired version", func(e *env) (string, string) {
			e.cluster(1, nil)
			return e.put(spcTree(e.t, 1, nil)), "the SPC has a desired control plane version"
		}},
		{"an SPC whose cluster does not exist", func(e *env) (string, string) {
			return e.put(spcTree(e.t, 1, func(tree map[string]any) { delete(object(tree, "properties", "spec"), "control_plane_version") })),
				"no cluster document for the SPC"
		}},
		{"a cluster on the nightly channel group", func(e *env) (string, string) {
			e.cluster(1, func(c *api.Cluster) { c.Properties.CustomerProperties.Version.ChannelGroup = "nightly" })
			return e.put(spcTree(e.t, 1, func(tree map[string]any) { delete(object(tree, "properties", "spec"), "control_plane_version") })),
				"no desired control plane version for the cluster"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id, logged := tc.setup(e)
			_, before := e.read(id)
			e.run(e.store, versionsim.Config{})

			e.waitForLog(logged, id)
			_, after := e.read(id)
			assert.Equal(t, before.ETag, after.ETag, "not written")
		})
	}
}

func TestWritesOnceTheClusterAppears(t *testing.T) {
	e := newEnv(t)
	id := e.put(spcTree(t, 1, func(tree map[string]any) { delete(object(tree, "properties", "spec"), "control_plane_version") }))
	e.run(e.store, versionsim.Config{})
	e.waitForLog("no cluster document for the SPC", id)

	e.cluster(1, nil)
	_, doc := e.waitForVersion(id)
	assert.Equal(t, "4.20.8", doc.Properties.DesiredControlPlaneVersion())
}

// racingStore makes another writer replace the SPC between the simulator's read and its
// write, the first times the simulator writes it: its write then gets a 412.
type racingStore struct {
	database.Store
	races int
	// change is what the other writer does to the SPC's tree.
	change func(tree map[string]any)

	mu       sync.Mutex
	replaces int
}

func (s *racingStore) Container(name string) database.Container {
	return &racingContainer{Container: s.Store.Container(name), s: s}
}

type racingContainer struct {
	database.Container
	s *racingStore
}

func (c *racingContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	c.s.mu.Lock()
	c.s.replaces++
	race := c.s.replaces <= c.s.races
	c.s.mu.Unlock()
	if race {
		current, err := c.Container.Get(ctx, pk, id)
		if err != nil {
			return database.Item{}, err
		}
		var tree map[string]any
		if err := json.Unmarshal(current.Body, &tree); err != nil {
			return database.Item{}, err
		}
		c.s.change(tree)
		b, err := json.Marshal(tree)
		if err != nil {
			return database.Item{}, err
		}
		if _, err := c.Container.Replace(ctx, pk, id, b, current.ETag); err != nil {
			return database.Item{}, fmt.Errorf("the other writer: %w", err)
		}
	}
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}

func TestRetriesAfterAConflictWithoutLosingTheOtherWrite(t *testing.T) {
	for _, tc := range []struct {
		name        string
		races       int
		change      func(tree map[string]any)
		wantVersion string
		wantAfter   func(t *testing.T, tree map[string]any)
	}{
		{
			name:  "placement writes the SPC's spec meanwhile, twice",
			races: 2,
			change: func(tree map[string]any) {
				spec := object(tree, "properties", "spec")
				spec["managementClusterResourceID"] = "/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default"
				spec["managementClusterPlacementTime"] = "2026-11-30T05:00:00Z"
			},
			wantVersion: "4.20.8",
			wantAfter: func(t *testing.T, tree map[string]any) {
				spec := object(tree, "properties", "spec")
				assert.Equal(t, "/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default", spec["managementClusterResourceID"])
				assert.Equal(t, "2026-11-30T05:00:00Z", spec["managementClusterPlacementTime"])
			},
		},
		{
			name:  "another component adds a field the simulator does not know",
			races: 1,
			change: func(tree map[string]any) {
				object(tree, "properties", "status")["addedMeanwhile"] = map[string]any{"by": "someone else"}
			},
			wantVersion: "4.20.8",
			wantAfter: func(t *testing.T, tree map[string]any) {
				assert.Equal(t, map[string]any{"by": "someone else"}, object(tree, "properties", "status")["addedMeanwhile"])
			},
		},
		{
			name:  "another writer chooses the version first",
			races: 1,
			change: func(tree map[string]any) {
				object(tree, "properties", "spec")["control_plane_version"] = map[string]any{"desired_version": "4.20.11"}
			},
			wantVersion: "4.20.11",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cluster(1, nil)
			id := e.put(spcTree(t, 1, func(tree map[string]any) {
				delete(object(tree, "properties", "spec"), "control_plane_version")
				delete(object(tree, "properties", "spec"), "managementClusterResourceID")
			}))
			racing := &racingStore{Store: e.store, races: tc.races, change: tc.change}
			e.run(racing, versionsim.Config{})

			after, doc := e.waitForVersion(id)
			if tc.wantAfter == nil {
				// The other writer's version needs no write of the simulator's: wait until
				// it has looked again.
				e.waitForLog("another writer set the desired control plane version first", id)
			} else {
				e.waitForLog("desired control plane version written", id)
				after, doc = e.read(id)
				tc.wantAfter(t, after)
			}
			assert.Equal(t, tc.wantVersion, doc.Properties.DesiredControlPlaneVersion())
			assert.Equal(t, map[string]any{"active_versions": []any{map[string]any{"version": "4.21.19", "state": "Completed"}}},
				object(after, "properties", "status", "control_plane_version"), "ARO-HCP's fields are kept")
			written := e.logged("desired control plane version written", id,
				fmt.Sprintf(`"desiredVersion":%q`, tc.wantVersion), fmt.Sprintf(`"attempts":%d`, tc.races+1))
			assert.Equal(t, tc.wantAfter != nil, written, "each conflict is retried from the document as re-read, and nothing is written over another writer's version:\n%s", e.logs)
		})
	}
}

func TestLatencyDelaysTheWrite(t *testing.T) {
	e := newEnv(t)
	e.cluster(1, nil)
	id := e.put(spcTree(t, 1, func(tree map[string]any) { delete(object(tree, "properties", "spec"), "control_plane_version") }))
	const latency = 300 * time.Millisecond
	start := time.Now()
	e.run(e.store, versionsim.Config{Latency: latency})
	e.waitForVersion(id)
	assert.GreaterOrEqual(t, time.Since(start), latency)
}

func TestNewRejectsUnusableConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  versionsim.Config
	}{
		{"no store", versionsim.Config{}},
		{"a default version that is not X.Y", versionsim.Config{Store: memory.New(), DefaultMinor: "four"}},
		{"a negative latency", versionsim.Config{Store: memory.New(), Latency: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := versionsim.New(tc.cfg)
			assert.Error(t, err)
		})
	}
}
