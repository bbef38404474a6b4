package localregion

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

// TestRegionSettles runs the whole stack once, small, and expects it to settle.
func TestRegionSettles(t *testing.T) {
	o := DefaultOptions()
	o.ManagementClusters, o.Clusters, o.SingleReplicaEvery = 3, 6, 3
	o.ExitWhenSettled, o.Timeout, o.ProgressEvery = true, 50*time.Second, 500*time.Millisecond
	if raceEnabled {
		// Shares the compiled dependencies with this test's own build (a cold non-race
		// build of the binaries takes minutes) and runs the whole stack under the race
		// detector.
		o.GoBuildFlags = []string{"-race"}
	}
	o.OutputDir = t.TempDir()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	err := Run(ctx, o, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	assert.Regexp(t, `(?m)^settled: 6 clusters in `, text)
	for _, name := range []string{"fleet", "mc-simulator", "backend"} {
		assert.Regexp(t, name+` +http://127\.0\.0\.1:\d+/metrics`, text)
	}
	// A line as each step of the start-up begins and one as it ends, with its duration.
	d := `\d+(\.\d+)?m?s`
	steps := []string{}
	for _, b := range []string{"backend", "fleet", "fake-cluster-service", "mc-simulator"} {
		steps = append(steps, "building "+b+" \\.\\.\\.", "built "+b+" in "+d)
	}
	steps = append(steps,
		`starting the Cosmos emulator \.\.\.`, `started the Cosmos emulator in `+d+`: http://127\.0\.0\.1:\d+`,
		`starting the fake Cluster Service \.\.\.`, `started the fake Cluster Service in `+d+`: http://127\.0\.0\.1:\d+`,
		`registering stamp 1 \(fleet register\) \.\.\.`, `registered stamp 1 in `+d,
		`registering stamp 3 \(fleet register\) \.\.\.`, `registered stamp 3 in `+d,
		`starting fleet controller \.\.\.`, `fleet controller ready in `+d,
		`starting the MC simulator \.\.\.`, `the MC simulator ready in `+d,
		`starting backend \.\.\.`, `backend ready in `+d,
		`starting the version simulator \(in this process\) \.\.\.`, `started the version simulator in `+d)
	for _, step := range steps {
		assert.Regexp(t, `(?m)^`+step, text)
	}
	if _, err := os.Stat("../../../hcpsched"); err == nil {
		assert.Regexp(t, `(?m)^  \S+/bin/hcpsched --cosmos-endpoint=http://127\.0\.0\.1:\d+ --cosmos-key=\S+ --cosmos-database=\S+ capacity$`, text)
	} else {
		assert.Contains(t, text, "operator command: not built, this checkout has no ./hcpsched")
	}
	assert.Regexp(t, `(?m)^all +6 `, text, "the placement table counts every cluster")
	assert.Contains(t, text, "desired version 6  pinned in CS 6", "the version simulator chose every cluster's version")
	versions, err := os.ReadFile(filepath.Join(o.OutputDir, "localregion", versionSimulatorLog))
	require.NoError(t, err)
	assert.Equal(t, 6, strings.Count(string(versions), "desired control plane version written"), "one write per SPC, in its own log")
	assert.Regexp(t, `(?m)^3 +Unschedulable +0 `, text, "nothing lands on the Unschedulable MC")

	logs, err := filepath.Glob(filepath.Join(o.OutputDir, "localregion", "*.log"))
	require.NoError(t, err)
	assert.NotEmpty(t, logs)
	for _, l := range logs {
		b, err := os.ReadFile(l)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "DATA RACE", l)
	}
}

// make run creates the same kinds every time, most of them SWIFT (README, DefaultNonSwiftEvery).
func TestDefaultMix(t *testing.T) {
	counts := map[frontend.Kind]int{}
	o := DefaultOptions()
	for n := 1; n <= o.Clusters; n++ {
		counts[o.Mix().Kind(n)]++
	}
	assert.Equal(t, map[frontend.Kind]int{
		{Swift: true}: 28, {Swift: true, SingleReplica: true}: 4, {}: 7, {SingleReplica: true}: 1,
	}, counts)
	doc, err := frontend.ClusterOfKind(5, o.Mix().Kind(5), time.Now())
	require.NoError(t, err)
	assert.Empty(t, doc.Properties.CustomerProperties.Platform.VnetIntegrationSubnetID, "cluster 5 is non-SWIFT")
	doc, err = frontend.ClusterOfKind(1, o.Mix().Kind(1), time.Now())
	require.NoError(t, err)
	assert.NotEmpty(t, doc.Properties.CustomerProperties.Platform.VnetIntegrationSubnetID, "cluster 1 is SWIFT")
}

func TestWriteAgentPools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pools.json")
	o := DefaultOptions()
	require.NoError(t, writeAgentPools(path, o))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pools, err := agentpools.ParseStatic(b)
	require.NoError(t, err)
	tight, err := pools.List(t.Context(), AKSResourceID(1))
	require.NoError(t, err)
	require.Len(t, tight, 1)
	other, err := pools.List(t.Context(), AKSResourceID(2))
	require.NoError(t, err)
	require.Len(t, other, 1)
	assert.NotEqual(t, tight[0], other[0], "the tight MC cannot scale out like the others")
}

func TestProgressRendering(t *testing.T) {
	assert.Equal(t, "["+strings.Repeat("#", 10)+strings.Repeat("+", 5)+strings.Repeat(".", 25)+"]", bar(12, 6, 48))
	assert.Equal(t, "["+strings.Repeat("#", barWidth)+"]", bar(60, 3, 48), "an over-full MC fills the bar")
	assert.Equal(t, "["+strings.Repeat(" ", barWidth)+"]", bar(0, 0, 0), "no report yet")

	d := []time.Duration{4 * time.Second, time.Second, 2 * time.Second, 3 * time.Second}
	assert.Equal(t, "2s", percentile(d, 50))
	assert.Equal(t, "4s", percentile(d, 90))
	assert.Equal(t, "4s", percentile(d, 100))
	assert.Equal(t, "-", percentile(nil, 50))

	for _, tc := range []struct {
		name string
		s    snapshot
		want bool
	}{
		{"all through", snapshot{created: 2, placed: 2, inCS: 2, observed: 2}, true},
		{"reservation left", snapshot{created: 2, placed: 2, inCS: 2, observed: 2, pending: 1}, false},
		{"not observed", snapshot{created: 2, placed: 2, inCS: 2, observed: 1}, false},
		{"not all created", snapshot{created: 1, placed: 1, inCS: 1, observed: 1}, false},
	} {
		assert.Equal(t, tc.want, tc.s.settled(2), tc.name)
	}
}

func TestSupervisorReportsADeadChildAndStopsTheRest(t *testing.T) {
	sup := newSupervisor(t.TempDir())
	defer sup.stopAll()
	sleeper, _, err := sup.start("sleeper", "/bin/sh", false, "-c", "exec sleep 60")
	require.NoError(t, err)
	_, _, err = sup.start("crasher", "/bin/sh", false, "-c", "echo boom >&2; exit 3")
	require.NoError(t, err)
	select {
	case c := <-sup.died:
		err := deathError(c)
		assert.ErrorContains(t, err, "crasher exited unexpectedly (exit status 3)")
		assert.ErrorContains(t, err, "boom")
	case <-time.After(10 * time.Second):
		t.Fatal("the dead child was not reported")
	}
	sup.stopAll()
	select {
	case <-sleeper.done:
	default:
		t.Fatal("stopAll returned with a child still running")
	}
	select {
	case c := <-sup.died:
		t.Fatalf("%s reported as dead although it was stopped", c.name)
	default:
	}
}

func TestOptionsValidate(t *testing.T) {
	require.NoError(t, DefaultOptions().Validate())
	o := DefaultOptions()
	o.ManagementClusters, o.Timeout = 0, 0
	o.DesiredVersion, o.DesiredVersionLatency = "4", -time.Second
	err := o.Validate()
	assert.ErrorContains(t, err, "--management-clusters")
	assert.ErrorContains(t, err, "--timeout")
	assert.ErrorContains(t, err, "--desired-version:")
	assert.ErrorContains(t, err, "--desired-version-latency")
}

// driveEnv is drive's world without the rest of the region: a memory store and an empty
// fake Cluster Service, so that nothing is ever placed.
func driveEnv(t *testing.T) (Options, *memory.Store, string, *supervisor) {
	srv := httptest.NewServer(fakeclusterservice.New())
	t.Cleanup(srv.Close)
	o := DefaultOptions()
	o.Clusters, o.CreateInterval, o.ProgressEvery = 3, 10*time.Millisecond, 20*time.Millisecond
	o.ExitWhenSettled, o.Timeout = true, 500*time.Millisecond
	sup := newSupervisor(t.TempDir())
	t.Cleanup(sup.stopAll)
	return o, memory.New(), srv.URL, sup
}

// creations records the resource types created in the Resources container, in order.
type creations struct {
	database.Store
	mu    sync.Mutex
	types []string
}

func (c *creations) Container(name string) database.Container {
	inner := c.Store.Container(name)
	if name != api.ResourcesContainer {
		return inner
	}
	return &creatingContainer{Container: inner, c: c}
}

type creatingContainer struct {
	database.Container
	c *creations
}

func (cc *creatingContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	_, _, resourceType := api.Identify(body)
	cc.c.mu.Lock()
	cc.c.types = append(cc.c.types, resourceType)
	cc.c.mu.Unlock()
	return cc.Container.Create(ctx, pk, body)
}

func TestDriveCreatesClustersAndTimesOutWhenNothingSettles(t *testing.T) {
	o, mem, csURL, sup := driveEnv(t)
	store := &creations{Store: mem}
	var out bytes.Buffer
	err := drive(t.Context(), o, &out, store, csURL, sup, nil, nil)
	require.ErrorContains(t, err, "timed out after 500ms before the region settled")

	var created []string
	for item, err := range store.Container(api.ResourcesContainer).List(t.Context(), database.ListOptions{ResourceType: api.ClusterResourceType}) {
		require.NoError(t, err)
		assert.NotContains(t, string(item.Body), "tenantId", "the frontend writes no tenant into a cluster")
		doc, err := database.DecodeItem[api.ClusterProperties](item)
		require.NoError(t, err)
		created = append(created, doc.Properties.ServiceProvider().ProvisioningState)

		rid, err := doc.ParsedResourceID()
		require.NoError(t, err)
		sub, err := database.Get[api.SubscriptionProperties](t.Context(), store.Container(api.ResourcesContainer), doc.PartitionKey, api.SubscriptionResourceID(rid.SubscriptionID).String())
		require.NoError(t, err, "every cluster's subscription is stored")
		assert.Equal(t, frontend.Tenant, sub.Properties.TenantID())
	}
	assert.Equal(t, []string{"Accepted", "Accepted", "Accepted"}, created, "the clusters are written as the frontend writes them")
	store.mu.Lock()
	assert.Equal(t, strings.Repeat(api.SubscriptionResourceType+" "+api.ClusterResourceType+" ", 3), strings.Join(store.types, " ")+" ",
		"ARM registers each subscription before the cluster's PUT")
	store.mu.Unlock()
	assert.Contains(t, out.String(), "created 3/3  placed 0")
}

func TestDriveFailsWhenAProcessDies(t *testing.T) {
	o, store, csURL, sup := driveEnv(t)
	o.Timeout = time.Minute
	_, _, err := sup.start("backend", "/bin/sh", false, "-c", "echo cannot start >&2; exit 1")
	require.NoError(t, err)
	err = drive(t.Context(), o, io.Discard, store, csURL, sup, nil, nil)
	assert.ErrorContains(t, err, "backend exited unexpectedly")
	assert.ErrorContains(t, err, "cannot start")

	emulatorDone := make(chan struct{})
	close(emulatorDone)
	err = drive(t.Context(), o, io.Discard, store, csURL, newSupervisor(t.TempDir()), emulatorDone, nil)
	assert.ErrorContains(t, err, "the Cosmos emulator exited unexpectedly")

	versionsDone := make(chan error, 1)
	versionsDone <- errors.New("the caches did not sync")
	err = drive(t.Context(), o, io.Discard, store, csURL, newSupervisor(t.TempDir()), nil, versionsDone)
	assert.ErrorContains(t, err, "the version simulator stopped unexpectedly (the caches did not sync)")
}

func TestDriveStopsQuietlyOnCancel(t *testing.T) {
	o, store, csURL, sup := driveEnv(t)
	o.ExitWhenSettled = false
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out bytes.Buffer
	require.NoError(t, drive(ctx, o, &out, store, csURL, sup, nil, nil))
	assert.Contains(t, out.String(), "placement latency")
}
