package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

// testRegion is a region in the emulator, in ARO-HCP's document shapes, that the
// command reads at a fixed moment.
type testRegion struct {
	db  *cosmostest.Database
	now time.Time
	// reportedAt is when every capacity report of the region was taken.
	reportedAt time.Time
}

func newTestRegion(t *testing.T) *testRegion {
	t.Helper()
	reported := time.Now().UTC().Truncate(time.Second)
	return &testRegion{
		db:         cosmostest.New(t, "hcpsched-cli", nil, api.ResourcesContainer, api.FleetContainer),
		reportedAt: reported,
		now:        reported.Add(30 * time.Second),
	}
}

func (r *testRegion) fleet() database.Container { return r.db.Store.Container(api.FleetContainer) }
func (r *testRegion) resources() database.Container {
	return r.db.Store.Container(api.ResourcesContainer)
}

// mc stores a ready, schedulable MC for stamp with a capacity report of its swift NICs.
func (r *testRegion) mc(t *testing.T, stamp string, ceiling, usage int, pending ...string) *api.ResourceID {
	t.Helper()
	rid := controllertest.CreateManagementCluster(t, r.fleet(), stamp, "shard-"+stamp)
	pk, err := api.FleetPartitionKey(rid)
	require.NoError(t, err)
	_, err = database.Create(t.Context(), r.fleet(), api.NewDocument(api.SchedulingResourceID(rid), pk, api.ManagementClusterSchedulingProperties{
		Status: controllertest.SchedulingStatus(r.reportedAt, ceiling, usage, pending...),
	}))
	require.NoError(t, err)
	return rid
}

// cli runs the command against the region with args after the connection flags.
func (r *testRegion) cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return r.cliThrough(t, func(s database.Store) database.Store { return s }, args...)
}

// cliThrough runs the command like cli, on the store wrap makes of the test database's.
func (r *testRegion) cliThrough(t *testing.T, wrap func(database.Store) database.Store, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	all := append([]string{
		"--cosmos-endpoint=" + r.db.Config.Endpoint,
		"--cosmos-key=" + r.db.Config.Key,
		"--cosmos-database=" + r.db.Config.Database,
	}, args...)
	code = run(ctx, all, &out, &errOut, deps{
		now:       func() time.Time { return r.now },
		lookupEnv: noEnv,
		openStore: func(cosmos.Config) (database.Store, error) { return wrap(r.db.Store), nil },
	})
	return out.String(), errOut.String(), code
}

// frontendCluster is the SWIFT HA cluster rid as ARO-HCP's frontend writes it at now,
// with edits made to its serviceProviderProperties.
func frontendCluster(t *testing.T, rid *api.ResourceID, now time.Time, edits ...func(*api.ClusterServiceProviderProperties)) *api.Cluster {
	t.Helper()
	c, err := frontend.ClusterOfKindAt(rid, "mrg-"+rid.Name(), frontend.Kind{Swift: true}, now)
	require.NoError(t, err)
	for _, e := range edits {
		e(c.Properties.ServiceProviderProperties)
	}
	return c
}

// emptySPC is rid's ServiceProviderCluster with an empty spec and status, then edits.
func emptySPC(rid *api.ResourceID, edits ...func(*api.ServiceProviderCluster)) *api.ServiceProviderCluster {
	s := api.NewDocument(api.ServiceProviderClusterResourceID(rid), testSubscription, api.ServiceProviderClusterProperties{
		Spec: &api.ServiceProviderClusterSpec{}, Status: &api.ServiceProviderClusterStatus{},
	})
	for _, e := range edits {
		e(s)
	}
	return s
}

// assertUsageError runs args against an endpoint nothing listens on: the command must
// refuse them as a usage error, naming wantErr, before it reads anything.
func assertUsageError(t *testing.T, args []string, wantErr string) {
	t.Helper()
	var out, errOut strings.Builder
	code := run(t.Context(), append([]string{"--cosmos-endpoint=https://127.0.0.1:1/"}, args...), &out, &errOut, deps{lookupEnv: noEnv})
	assert.Equal(t, exitUsage, code, errOut.String())
	assert.Contains(t, errOut.String(), wantErr)
	assert.Empty(t, out.String(), "nothing on stdout, where a script reads results")
}

// noEnv keeps the test's own environment out of the command's flags.
func noEnv(string) (string, bool) { return "", false }

func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		wantErr  string
	}{
		{name: "no verb", args: []string{"--cosmos-endpoint=https://x"}, wantCode: exitUsage, wantErr: "no verb given"},
		{name: "unknown verb", args: []string{"--cosmos-endpoint=https://x", "evict"}, wantCode: exitUsage, wantErr: `unknown verb "evict"`},
		{name: "no endpoint", args: []string{"capacity"}, wantCode: exitUsage, wantErr: "--cosmos-endpoint is required"},
		{name: "bad output", args: []string{"capacity", "--cosmos-endpoint=https://x", "-o", "xml"}, wantCode: exitUsage, wantErr: `--output must be one of table, json, yaml, got "xml"`},
		{name: "unknown flag", args: []string{"capacity", "--cosmos-endpoint=https://x", "--placement-requeue-afer=1m"}, wantCode: exitUsage, wantErr: "flag provided but not defined: -placement-requeue-afer"},
		{name: "extra argument", args: []string{"capacity", "stamp-1", "--cosmos-endpoint=https://x"}, wantCode: exitUsage, wantErr: "usage: hcpsched capacity"},
		{name: "bad placement flag", args: []string{"--placement-weigher=random", "capacity", "--cosmos-endpoint=https://x"}, wantCode: exitUsage, wantErr: "random"},
		{name: "bad environment", args: []string{"capacity"}, env: map[string]string{"HCPSCHED_COSMOS_ENDPOINT": "https://x", "HCPSCHED_TIMEOUT": "soon"}, wantCode: exitUsage, wantErr: "HCPSCHED_TIMEOUT (--timeout): invalid value"},
		{name: "help", args: []string{"--help"}, wantCode: exitOK, wantErr: "Usage: hcpsched [flags] VERB"},
		{name: "verb help", args: []string{"capacity", "--help"}, wantCode: exitOK, wantErr: "Usage: hcpsched capacity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			lookup := func(name string) (string, bool) { v, ok := tc.env[name]; return v, ok }
			code := run(t.Context(), tc.args, &out, &errOut, deps{lookupEnv: lookup})
			assert.Equal(t, tc.wantCode, code, errOut.String())
			assert.Contains(t, errOut.String(), tc.wantErr)
			assert.Empty(t, out.String(), "nothing on stdout, where a script reads results")
		})
	}
}

func TestUnreachableCosmosFailsWithTheEndpointEmulator(t *testing.T) {
	var out, errOut bytes.Buffer
	// A port nothing listens on: the probe fails at once rather than at --timeout.
	code := run(t.Context(), []string{"--cosmos-endpoint=https://127.0.0.1:1/", "--cosmos-key=a2V5", "--timeout=20s", "capacity"},
		&out, &errOut, deps{lookupEnv: noEnv})
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut.String(), `capacity: reading database "arohcp" at https://127.0.0.1:1/`)
}

func TestCapacityEmulator(t *testing.T) {
	r := newTestRegion(t)
	r.mc(t, "1", 32, 30)
	r.mc(t, "2", 64, 10, "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/reserved")
	r.mc(t, "10", 64, 0)

	out, errOut, code := r.cli(t, "capacity")
	require.Equal(t, exitOK, code, errOut)
	want := `STAMP  POLICY       READY  CEILING(aro.openshift.io/swift-nic)  USAGE  REQUESTS  NOT-READY  RESERVED  AVAILABLE  HEADROOM(HCPs)  REPORT-AGE  OLDEST-RESERVATION  PLACEABLE
1      Schedulable  yes    32                                   30     -         0          0         2          0               30s         -                   no: InsufficientCapacity: aro.openshift.io/swift-nic 2 available, 3 needed
2      Schedulable  yes    64                                   10     -         0          1         51         17              30s         -                   yes
10     Schedulable  yes    64                                   0      -         0          0         64         21              30s         -                   yes

region headroom: 38 SWIFT HA HCPs; per-HCP costs from flags
`
	assert.Equal(t, want, out)

	out, errOut, code = r.cli(t, "capacity", "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var report capacityReport
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	assert.Equal(t, int64(38), report.HeadroomHCPs)
	require.Len(t, report.ManagementClusters, 3)
	assert.Equal(t, []string{"51"}, report.ManagementClusters[1].Available)
}

// The command stops the caches it started before it returns its exit code: a change-feed
// reader still running would write its warnings into a stderr the caller already read
// (CI's race detector caught a pump warning of a feed-range read cut short by the stop).
func TestCommandStopsItsCachesBeforeReturningEmulator(t *testing.T) {
	r := newTestRegion(t)
	r.mc(t, "1", 32, 0)
	feeds := &heldFeedRanges{}

	out, errOut, code := r.cliThrough(t, feeds.wrap, "capacity")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "region headroom")
	started, returned := feeds.counts()
	assert.Positive(t, started, "the pumps asked for feed ranges")
	assert.Equal(t, started, returned, "every feed-range read ended before the command returned")
	assert.NotContains(t, errOut, "feed ranges failed", "a read cut short by the stop is no failure")
}

// heldFeedRanges holds every FeedRanges call until its context ends, as a slow Cosmos
// gateway would hold a pump's first read past the command's listing, and counts the
// calls that started and those that returned.
type heldFeedRanges struct {
	mu                sync.Mutex
	started, returned int
}

func (h *heldFeedRanges) wrap(s database.Store) database.Store { return heldFeedRangesStore{s, h} }

func (h *heldFeedRanges) counts() (started, returned int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started, h.returned
}

type heldFeedRangesStore struct {
	database.Store
	held *heldFeedRanges
}

func (s heldFeedRangesStore) Container(name string) database.Container {
	return heldFeedRangesContainer{s.Store.Container(name), s.held}
}

type heldFeedRangesContainer struct {
	database.Container
	held *heldFeedRanges
}

func (c heldFeedRangesContainer) FeedRanges(ctx context.Context) ([]database.FeedRange, error) {
	c.held.mu.Lock()
	c.held.started++
	c.held.mu.Unlock()
	<-ctx.Done()
	c.held.mu.Lock()
	c.held.returned++
	c.held.mu.Unlock()
	return nil, ctx.Err()
}
