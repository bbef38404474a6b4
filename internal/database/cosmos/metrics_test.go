package cosmos_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
)

func TestClassifyOperation(t *testing.T) {
	const docs = "/dbs/hcp/colls/resources/docs"
	tests := []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		want    string
	}{
		{name: "point read", method: http.MethodGet, path: docs + "/abc", want: cosmos.OperationRead},
		{name: "create", method: http.MethodPost, path: docs, headers: map[string]string{"Content-Type": "application/json"}, want: cosmos.OperationCreate},
		{name: "upsert", method: http.MethodPost, path: docs, headers: map[string]string{"x-ms-documentdb-is-upsert": "true"}, want: cosmos.OperationUpsert},
		{name: "replace", method: http.MethodPut, path: docs + "/abc", want: cosmos.OperationReplace},
		{name: "delete", method: http.MethodDelete, path: docs + "/abc", want: cosmos.OperationDelete},
		{name: "patch", method: http.MethodPatch, path: docs + "/abc", want: cosmos.OperationPatch},
		{name: "query (azcosmos headers)", method: http.MethodPost, path: docs,
			headers: map[string]string{"x-ms-documentdb-query": "True", "Content-Type": "application/query+json"}, want: cosmos.OperationQuery},
		{name: "query (isquery header)", method: http.MethodPost, path: docs, headers: map[string]string{"x-ms-documentdb-isquery": "True"}, want: cosmos.OperationQuery},
		{name: "query (content type only)", method: http.MethodPost, path: docs, headers: map[string]string{"Content-Type": "application/query+json; charset=utf-8"}, want: cosmos.OperationQuery},
		{name: "query plan", method: http.MethodPost, path: docs,
			headers: map[string]string{"x-ms-cosmos-is-query-plan-request": "True", "Content-Type": "application/query+json"}, want: cosmos.OperationQueryPlan},
		{name: "batch", method: http.MethodPost, path: docs, headers: map[string]string{"x-ms-cosmos-is-batch-request": "True", "x-ms-cosmos-batch-atomic": "True"}, want: cosmos.OperationBatch},
		{name: "change feed", method: http.MethodGet, path: docs, headers: map[string]string{"A-IM": "Incremental Feed"}, want: cosmos.OperationChangeFeed},
		{name: "change feed, other case", method: http.MethodGet, path: docs, headers: map[string]string{"A-IM": "incremental feed"}, want: cosmos.OperationChangeFeed},
		{name: "read feed", method: http.MethodGet, path: docs, want: cosmos.OperationReadFeed},
		{name: "partition key ranges", method: http.MethodGet, path: "/dbs/hcp/colls/resources/pkranges", headers: map[string]string{"A-IM": "Incremental Feed"}, want: cosmos.OperationReadFeedRanges},
		{name: "account", method: http.MethodGet, path: "/", want: cosmos.OperationMetadata},
		{name: "create database", method: http.MethodPost, path: "/dbs", want: cosmos.OperationMetadata},
		{name: "read database", method: http.MethodGet, path: "/dbs/hcp", want: cosmos.OperationMetadata},
		{name: "create container", method: http.MethodPost, path: "/dbs/hcp/colls", want: cosmos.OperationMetadata},
		{name: "read container", method: http.MethodGet, path: "/dbs/hcp/colls/resources", want: cosmos.OperationMetadata},
		{name: "delete database", method: http.MethodDelete, path: "/dbs/hcp/", want: cosmos.OperationMetadata},
		{name: "throughput query", method: http.MethodPost, path: "/offers", headers: map[string]string{"x-ms-documentdb-query": "True"}, want: cosmos.OperationMetadata},
		{name: "a document called docs", method: http.MethodGet, path: docs + "/docs", want: cosmos.OperationRead},
		{name: "a container called pkranges", method: http.MethodPost, path: "/dbs/hcp/colls/pkranges/docs", want: cosmos.OperationCreate},
		{name: "a document called pkranges", method: http.MethodDelete, path: docs + "/pkranges", want: cosmos.OperationDelete},
		{name: "not a Cosmos path", method: http.MethodGet, path: "/healthz", want: cosmos.OperationOther},
		{name: "unexpected method on an item", method: http.MethodPost, path: docs + "/abc", want: cosmos.OperationOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "https://account.documents.azure.com:443"+tt.path, nil)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			assert.Equal(t, tt.want, cosmos.ClassifyOperation(req))
		})
	}
}

// fakeCosmos answers like the Cosmos gateway for the requests the pipeline test sends:
// the first create is throttled, then accepted.
func fakeCosmos(t *testing.T) *httptest.Server {
	t.Helper()
	var creates atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respond := func(status int, charge string) {
			if charge != "" {
				w.Header().Set("x-ms-request-charge", charge)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = fmt.Fprint(w, "{}")
		}
		const docs = "/dbs/hcp/colls/resources/docs"
		switch {
		case r.Method == http.MethodPost && r.URL.Path == docs && r.Header.Get("x-ms-documentdb-query") == "True":
			respond(http.StatusOK, "2.5")
		case r.Method == http.MethodPost && r.URL.Path == docs && r.Header.Get("x-ms-cosmos-is-batch-request") == "True":
			respond(http.StatusOK, "10.5")
		case r.Method == http.MethodPost && r.URL.Path == docs:
			if creates.Add(1) == 1 {
				w.Header().Set("x-ms-retry-after-ms", "1")
				respond(http.StatusTooManyRequests, "")
				return
			}
			respond(http.StatusCreated, "6.29")
		case r.Method == http.MethodGet && r.URL.Path == docs+"/missing":
			respond(http.StatusNotFound, "1")
		case r.Method == http.MethodPut && r.URL.Path == docs+"/stale":
			respond(http.StatusPreconditionFailed, "1.5")
		case r.Method == http.MethodGet && r.URL.Path == docs && r.Header.Get("A-IM") != "":
			w.Header().Set("x-ms-request-charge", "0.5")
			w.WriteHeader(http.StatusNotModified)
		case r.Method == http.MethodGet && r.URL.Path == "/dbs/hcp/colls/resources/pkranges":
			respond(http.StatusOK, "not-a-number") // ignored, not a failure
		case r.Method == http.MethodGet && r.URL.Path == "/":
			respond(http.StatusOK, "-3") // negative charges are ignored too
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			respond(http.StatusBadRequest, "")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newPipeline(t *testing.T, metrics policy.Policy, transport policy.Transporter) runtime.Pipeline {
	t.Helper()
	return runtime.NewPipeline("hcpsched-test", "v0.0.0", runtime.PipelineOptions{}, &policy.ClientOptions{
		PerRetryPolicies: []policy.Policy{metrics},
		Transport:        transport,
		Retry:            policy.RetryOptions{MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond},
		Telemetry:        policy.TelemetryOptions{Disabled: true},
	})
}

func send(t *testing.T, pl runtime.Pipeline, method, url string, headers map[string]string, body string) {
	t.Helper()
	sendCtx(t, context.Background(), pl, method, url, headers, body)
}

func sendCtx(t *testing.T, ctx context.Context, pl runtime.Pipeline, method, url string, headers map[string]string, body string) {
	t.Helper()
	req, err := runtime.NewRequest(ctx, method, url)
	require.NoError(t, err)
	for k, v := range headers {
		req.Raw().Header.Set(k, v)
	}
	if body != "" {
		require.NoError(t, req.SetBody(streaming.NopCloser(bytes.NewReader([]byte(body))), "application/json"))
	}
	resp, err := pl.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
}

func TestMetricsPolicyCountsEveryAttempt(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	metrics, err := cosmos.NewMetricsPolicy(reg)
	require.NoError(t, err)
	srv := fakeCosmos(t)
	pl := newPipeline(t, metrics, srv.Client())
	docs := srv.URL + "/dbs/hcp/colls/resources/docs"

	send(t, pl, http.MethodPost, docs, nil, `{"id":"a"}`)
	send(t, pl, http.MethodGet, docs+"/missing", nil, "")
	send(t, pl, http.MethodPut, docs+"/stale", map[string]string{"If-Match": `"1"`}, `{"id":"stale"}`)
	send(t, pl, http.MethodPost, docs, map[string]string{"x-ms-documentdb-query": "True"}, `{"query":"SELECT * FROM c"}`)
	send(t, pl, http.MethodPost, docs, map[string]string{"x-ms-cosmos-is-batch-request": "True"}, `[]`)
	send(t, pl, http.MethodGet, docs, map[string]string{"A-IM": "Incremental Feed"}, "")
	send(t, pl, http.MethodGet, srv.URL+"/dbs/hcp/colls/resources/pkranges", map[string]string{"A-IM": "Incremental Feed"}, "")
	send(t, pl, http.MethodGet, srv.URL+"/", nil, "")

	// A request that never gets a response.
	down := newPipeline(t, metrics, transportFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused")
	}))
	req, err := runtime.NewRequest(context.Background(), http.MethodGet, srv.URL+"/dbs/hcp/colls/resources/docs/a")
	require.NoError(t, err)
	_, err = down.Do(req)
	require.Error(t, err)

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP hcpsched_cosmos_requests_total Cosmos DB requests, one per attempt, by operation, HTTP status code ("error" when no response arrived), container (cosmos_container; "none" for account and database requests) and the controller whose reconcile made it (controller; "none" outside any reconcile: change-feed reads, relists, start-up). Upstream ARO-HCP names these labels cosmosdb_container and source.
# TYPE hcpsched_cosmos_requests_total counter
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="batch",status_code="200"} 1
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="change_feed",status_code="304"} 1
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="create",status_code="201"} 1
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="create",status_code="429"} 1
hcpsched_cosmos_requests_total{controller="none",cosmos_container="none",operation="metadata",status_code="200"} 1
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="query",status_code="200"} 1
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="read",status_code="404"} 1
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="read",status_code="error"} 3
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="read_feed_ranges",status_code="200"} 1
hcpsched_cosmos_requests_total{controller="none",cosmos_container="resources",operation="replace",status_code="412"} 1
`), "hcpsched_cosmos_requests_total"))

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP hcpsched_cosmos_request_charge_total Request units charged by Cosmos DB (x-ms-request-charge), by operation, container (cosmos_container; "none" for account and database requests) and the controller whose reconcile made it (controller; "none" outside any reconcile: change-feed reads, relists, start-up). Upstream ARO-HCP names these labels cosmosdb_container and source.
# TYPE hcpsched_cosmos_request_charge_total counter
hcpsched_cosmos_request_charge_total{controller="none",cosmos_container="resources",operation="batch"} 10.5
hcpsched_cosmos_request_charge_total{controller="none",cosmos_container="resources",operation="change_feed"} 0.5
hcpsched_cosmos_request_charge_total{controller="none",cosmos_container="resources",operation="create"} 6.29
hcpsched_cosmos_request_charge_total{controller="none",cosmos_container="resources",operation="query"} 2.5
hcpsched_cosmos_request_charge_total{controller="none",cosmos_container="resources",operation="read"} 1
hcpsched_cosmos_request_charge_total{controller="none",cosmos_container="resources",operation="replace"} 1.5
`), "hcpsched_cosmos_request_charge_total"))

	durations := histogramCounts(t, reg, "hcpsched_cosmos_request_duration_seconds")
	assert.Equal(t, map[string]uint64{
		"batch": 1, "change_feed": 1, "create": 2, "metadata": 1, "query": 1,
		"read": 4, "read_feed_ranges": 1, "replace": 1,
	}, durations, "one observation per attempt, failed ones included")
}

// Every request is labelled with the container its path addresses and the controller its
// ctx names (database.WithCaller, which the controller framework sets per reconcile);
// a ctx without one is "none", as is a request that addresses no container.
func TestMetricsPolicyLabelsContainerAndController(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	metrics, err := cosmos.NewMetricsPolicy(reg)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("x-ms-request-charge", "1")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	pl := newPipeline(t, metrics, srv.Client())
	placement := database.WithCaller(context.Background(), "PlacementController")
	reporting := database.WithCaller(context.Background(), "CapacityReportingController")

	sendCtx(t, placement, pl, http.MethodPut, srv.URL+"/dbs/hcp/colls/Fleet/docs/a", nil, `{}`)
	sendCtx(t, placement, pl, http.MethodPut, srv.URL+"/dbs/hcp/colls/Resources/docs/b", nil, `{}`)
	sendCtx(t, reporting, pl, http.MethodGet, srv.URL+"/dbs/hcp/colls/kubeapplier-3/docs/c", nil, "")
	sendCtx(t, context.Background(), pl, http.MethodGet, srv.URL+"/dbs/hcp/colls/Resources/docs", map[string]string{"A-IM": "Incremental Feed"}, "")
	sendCtx(t, context.Background(), pl, http.MethodGet, srv.URL+"/dbs/hcp", nil, "")

	want := map[string]float64{
		"replace/Fleet/PlacementController":              1,
		"replace/Resources/PlacementController":          1,
		"read/kubeapplier-3/CapacityReportingController": 1,
		"change_feed/Resources/none":                     1,
		"metadata/none/none":                             1,
	}
	assert.Equal(t, want, counterValues(t, reg, "hcpsched_cosmos_requests_total", "operation", "cosmos_container", "controller"))
	assert.Equal(t, want, counterValues(t, reg, "hcpsched_cosmos_request_charge_total", "operation", "cosmos_container", "controller"))
	durations := map[string]float64{}
	for _, m := range gather(t, reg, "hcpsched_cosmos_request_duration_seconds") {
		durations[labelValue(m, "operation")+"/"+labelValue(m, "cosmos_container")+"/"+labelValue(m, "controller")] += float64(m.GetHistogram().GetSampleCount())
	}
	assert.Equal(t, want, durations)
}

func TestContainerOf(t *testing.T) {
	for path, want := range map[string]string{
		"/dbs/hcp/colls/Resources/docs/a":        "Resources",
		"dbs/hcp/colls/Fleet/docs":               "Fleet",
		"/dbs/hcp/colls/kube%20applier/pkranges": "kube applier",
		"/dbs/hcp":                               cosmos.ContainerNone,
		"/":                                      cosmos.ContainerNone,
		"/dbs/hcp/colls":                         cosmos.ContainerNone,
	} {
		assert.Equal(t, want, cosmos.ContainerOf(path), path)
	}
}

func TestNewMetricsPolicySharesARegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := cosmos.NewMetricsPolicy(reg)
	require.NoError(t, err)
	second, err := cosmos.NewMetricsPolicy(reg)
	require.NoError(t, err, "a second client on the same registry reuses the metrics")

	srv := fakeCosmos(t)
	for _, p := range []policy.Policy{first, second} {
		send(t, newPipeline(t, p, srv.Client()), http.MethodGet, srv.URL+"/dbs/hcp/colls/resources/docs/missing", nil, "")
	}
	assert.Equal(t, map[string]float64{"read/404": 2}, counterValues(t, reg, "hcpsched_cosmos_requests_total", "operation", "status_code"))
	assert.Equal(t, map[string]float64{"read": 2}, counterValues(t, reg, "hcpsched_cosmos_request_charge_total", "operation"))
	assert.Equal(t, map[string]uint64{"read": 2}, histogramCounts(t, reg, "hcpsched_cosmos_request_duration_seconds"))

	_, err = cosmos.NewMetricsPolicy(nil)
	assert.Error(t, err)
}

func TestTimestampLag(t *testing.T) {
	now := time.Unix(1_700_000_100, 500_000_000)
	assert.Equal(t, 100500*time.Millisecond, cosmos.TimestampLag(1_700_000_000, now))
	assert.Equal(t, time.Duration(0), cosmos.TimestampLag(1_700_000_200, now), "clock skew is clamped")
}

// TestMetricsWithEmulator drives the policy through a real azcosmos client and the
// store, against the project's Cosmos emulator.
func TestMetricsWithEmulator(t *testing.T) {
	emu := emulator.StartForTest(t)
	reg := prometheus.NewPedanticRegistry()
	metrics, err := cosmos.NewMetricsPolicy(reg)
	require.NoError(t, err)
	client, err := cosmos.NewClient(cosmos.Config{
		Endpoint:      emu.Endpoint,
		Key:           emu.Key,
		ClientOptions: azcore.ClientOptions{PerRetryPolicies: []policy.Policy{metrics}},
	})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := cosmos.New(client, "hcpsched-metrics")
	require.NoError(t, store.EnsureDatabase(ctx))
	require.NoError(t, store.EnsureContainer(ctx, "resources"))
	c := store.Container("resources")

	created, err := c.Create(ctx, "p", []byte(`{"id":"a","partitionKey":"p","resourceType":"test"}`))
	require.NoError(t, err)
	_, err = c.Get(ctx, "p", "missing")
	require.ErrorIs(t, err, database.ErrNotFound)
	_, err = c.Replace(ctx, "p", "a", []byte(`{"id":"a","partitionKey":"p","resourceType":"test"}`), `"stale"`)
	require.ErrorIs(t, err, database.ErrPreconditionFailed)
	require.NotEqual(t, `"stale"`, created.ETag)
	var listed int
	for _, err := range c.List(ctx, database.ListOptions{ResourceType: "test"}) {
		require.NoError(t, err)
		listed++
	}
	assert.Equal(t, 1, listed)
	ranges, err := c.FeedRanges(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, ranges)
	page, err := c.ChangeFeed(ctx, database.ChangeFeedOptions{FeedRange: &ranges[0], Start: database.FromBeginning})
	require.NoError(t, err)
	assert.Len(t, page.Items, 1)

	requests := counterValues(t, reg, "hcpsched_cosmos_requests_total", "operation", "status_code")
	assert.Equal(t, 1.0, requests["create/201"])
	assert.Equal(t, 1.0, requests["read/404"])
	assert.Equal(t, 1.0, requests["replace/412"])
	assert.GreaterOrEqual(t, requests["query/200"], 1.0)
	assert.GreaterOrEqual(t, requests["change_feed/200"], 1.0)
	assert.GreaterOrEqual(t, requests["read_feed_ranges/200"], 1.0)
	assert.GreaterOrEqual(t, requests["metadata/200"]+requests["metadata/201"], 1.0, "account discovery and set-up")

	charges := counterValues(t, reg, "hcpsched_cosmos_request_charge_total", "operation")
	var total float64
	for _, v := range charges {
		total += v
	}
	assert.Greater(t, total, 0.0)
	assert.Greater(t, charges["create"], 0.0)

	durations := histogramCounts(t, reg, "hcpsched_cosmos_request_duration_seconds")
	for _, op := range []string{"create", "read", "replace", "query", "change_feed"} {
		assert.GreaterOrEqual(t, durations[op], uint64(1), op)
	}
}

type transportFunc func(*http.Request) (*http.Response, error)

func (f transportFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

// gather returns the samples of one metric family.
func gather(t *testing.T, reg prometheus.Gatherer, name string) []*dto.Metric {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()
		}
	}
	return nil
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// counterValues maps the given labels' values, joined by "/", to each counter's value.
func counterValues(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range gather(t, reg, name) {
		var key []string
		for _, l := range labels {
			key = append(key, labelValue(m, l))
		}
		out[strings.Join(key, "/")] += m.GetCounter().GetValue()
	}
	return out
}

// histogramCounts maps each operation to its histogram's observation count.
func histogramCounts(t *testing.T, reg prometheus.Gatherer, name string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, m := range gather(t, reg, name) {
		out[labelValue(m, "operation")] += m.GetHistogram().GetSampleCount()
	}
	return out
}

// ContainerOf reads any path without panicking and always names a container or none.
func FuzzContainerOf(f *testing.F) {
	for _, p := range []string{"/dbs/hcp/colls/Resources/docs/a", "/dbs/hcp/colls", "/", "colls/%zz/docs", "/dbs/hcp/colls//docs"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		assert.NotEmpty(t, cosmos.ContainerOf(path), path)
	})
}
