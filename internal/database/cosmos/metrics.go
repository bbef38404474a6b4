package cosmos

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/database"
)

// Operation label values. The set is closed so the label's cardinality stays bounded
// whatever the request.
const (
	OperationRead           = "read"
	OperationCreate         = "create"
	OperationReplace        = "replace"
	OperationUpsert         = "upsert"
	OperationDelete         = "delete"
	OperationPatch          = "patch"
	OperationQuery          = "query"
	OperationQueryPlan      = "query_plan"
	OperationBatch          = "batch"
	OperationChangeFeed     = "change_feed"
	OperationReadFeed       = "read_feed"
	OperationReadFeedRanges = "read_feed_ranges"
	OperationMetadata       = "metadata"
	OperationOther          = "other"
)

// ContainerNone is the cosmos_container label of a request that addresses no container:
// the account, a database, an offer.
const ContainerNone = "none"

// Labels of the request metrics. cosmos_container, not container: a scrape's target
// label of that name (the pod's container) would override it. Upstream ARO-HCP's
// request metrics call the same two labels cosmosdb_container and source.
const (
	LabelOperation  = "operation"
	LabelStatusCode = "status_code"
	LabelContainer  = "cosmos_container"
	LabelController = "controller"
)

// StatusError is the status_code label of an attempt that got no response at all
// (connection refused, reset, timeout, cancelled).
const StatusError = "error"

// Request headers azcosmos sets to tell the gateway what a POST or GET means; the URL
// alone does not distinguish a create from a query or a batch, nor a change-feed read
// from a plain feed read.
const (
	wireHeaderChangeFeed      = "A-IM"
	wireValueChangeFeed       = "Incremental Feed"
	wireHeaderQuery           = "x-ms-documentdb-query"
	wireHeaderIsQuery         = "x-ms-documentdb-isquery" // other SDKs' spelling
	wireValueQueryCT          = "application/query+json"
	wireHeaderQueryPlan       = "x-ms-cosmos-is-query-plan-request"
	wireHeaderBatch           = "x-ms-cosmos-is-batch-request"
	wireHeaderUpsert          = "x-ms-documentdb-is-upsert"
	wireHeaderRequestCharge   = "x-ms-request-charge"
	wirePathSegmentDocs       = "docs"
	wirePathSegmentDatabases  = "dbs"
	wirePathSegmentPKRanges   = "pkranges"
	wirePathSegmentContainers = "colls"
)

// requestDurationBuckets span an in-region point read (a few ms) to a throttled or
// cross-partition query (seconds).
var requestDurationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

type clientMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	charge   *prometheus.CounterVec
}

// NewMetricsPolicy returns an azcore pipeline policy that records every attempt the
// Cosmos client makes. Add it to Config.ClientOptions.PerRetryPolicies: per retry, so
// that throttled (429) and conflicting (412) attempts are counted even when a retry
// later succeeds. Calling it again with the same registerer reuses the metrics already
// registered there, so several clients can share them.
func NewMetricsPolicy(reg prometheus.Registerer) (policy.Policy, error) {
	if reg == nil {
		return nil, errors.New("cosmos metrics: a Prometheus registerer is required")
	}
	requests, err := registerOrReuseMetric(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hcpsched_cosmos_requests_total",
		Help: "Cosmos DB requests, one per attempt, by operation, HTTP status code (\"error\" when no response arrived), " + labelsHelp,
	}, []string{LabelOperation, LabelStatusCode, LabelContainer, LabelController}))
	if err != nil {
		return nil, err
	}
	duration, err := registerOrReuseMetric(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hcpsched_cosmos_request_duration_seconds",
		Help:    "Duration of one Cosmos DB request attempt, until the response headers arrived, by operation, " + labelsHelp,
		Buckets: requestDurationBuckets,
	}, []string{LabelOperation, LabelContainer, LabelController}))
	if err != nil {
		return nil, err
	}
	charge, err := registerOrReuseMetric(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hcpsched_cosmos_request_charge_total",
		Help: "Request units charged by Cosmos DB (x-ms-request-charge), by operation, " + labelsHelp,
	}, []string{LabelOperation, LabelContainer, LabelController}))
	if err != nil {
		return nil, err
	}
	return &clientMetrics{requests: requests, duration: duration, charge: charge}, nil
}

// labelsHelp ends the request metrics' help: what cosmos_container and controller hold.
const labelsHelp = "container (cosmos_container; \"none\" for account and database requests) and the controller whose reconcile made it " +
	"(controller; \"none\" outside any reconcile: change-feed reads, relists, start-up). Upstream ARO-HCP names these labels cosmosdb_container and source."

// registerOrReuseMetric registers c, or returns the collector of the same type that is
// already registered under its name.
func registerOrReuseMetric[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	var zero C
	return zero, fmt.Errorf("cosmos metrics: registering: %w", err)
}

// Do implements policy.Policy.
func (m *clientMetrics) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	operation := ClassifyOperation(raw)
	container := ContainerOf(raw.URL.Path)
	caller := database.CallerLabel(raw.Context())
	start := time.Now()
	resp, err := req.Next()
	m.duration.WithLabelValues(operation, container, caller).Observe(time.Since(start).Seconds())

	status := StatusError
	if resp != nil {
		status = strconv.Itoa(resp.StatusCode)
		if charge, ok := parseRequestCharge(resp.Header); ok {
			m.charge.WithLabelValues(operation, container, caller).Add(charge)
		}
	}
	m.requests.WithLabelValues(operation, status, container, caller).Inc()
	return resp, err
}

// requestCharge parses x-ms-request-charge; Counter.Add panics on a negative value, so
// anything but a finite non-negative number is ignored.
func parseRequestCharge(h http.Header) (float64, bool) {
	v := h.Get(wireHeaderRequestCharge)
	if v == "" {
		return 0, false
	}
	charge, err := strconv.ParseFloat(v, 64)
	if err != nil || charge < 0 || math.IsInf(charge, 0) || math.IsNaN(charge) {
		return 0, false
	}
	return charge, true
}

// ClassifyOperation names the Cosmos operation an azcosmos request performs, from its
// method, path and headers. It returns one of the Operation constants.
func ClassifyOperation(req *http.Request) string {
	resource, isFeed, ok := addressedResource(cosmosPathSegments(req.URL.Path))
	if !ok {
		return OperationOther
	}
	// Checked before the headers: partition-key-range reads also carry A-IM: Incremental
	// Feed, like change-feed reads.
	if resource == wirePathSegmentPKRanges {
		return OperationReadFeedRanges
	}
	if resource != wirePathSegmentDocs {
		// Account, databases, containers, offers: set-up and discovery traffic.
		return OperationMetadata
	}

	h := req.Header
	if isFeed {
		switch req.Method {
		case http.MethodPost:
			switch {
			case headerIsTrue(h.Get(wireHeaderBatch)):
				return OperationBatch
			case headerIsTrue(h.Get(wireHeaderQueryPlan)):
				return OperationQueryPlan
			case headerIsTrue(h.Get(wireHeaderQuery)), headerIsTrue(h.Get(wireHeaderIsQuery)), isQueryContentType(h.Get("Content-Type")):
				return OperationQuery
			case headerIsTrue(h.Get(wireHeaderUpsert)):
				return OperationUpsert
			default:
				return OperationCreate
			}
		case http.MethodGet:
			if strings.EqualFold(h.Get(wireHeaderChangeFeed), wireValueChangeFeed) {
				return OperationChangeFeed
			}
			return OperationReadFeed
		}
		return OperationOther
	}

	switch req.Method {
	case http.MethodGet:
		return OperationRead
	case http.MethodPut:
		return OperationReplace
	case http.MethodDelete:
		return OperationDelete
	case http.MethodPatch:
		return OperationPatch
	}
	return OperationOther
}

// ContainerOf is the container a request path addresses (dbs/{db}/colls/{coll}/...), or
// ContainerNone. The names are the deployment's own: Resources, Fleet and one
// kube-applier container per management cluster, so the label's cardinality is bounded
// by the number of MCs.
func ContainerOf(path string) string {
	segments := cosmosPathSegments(path)
	for i := 0; i+1 < len(segments); i++ {
		if segments[i] == wirePathSegmentContainers && segments[i+1] != "" {
			if name, err := url.PathUnescape(segments[i+1]); err == nil && name != "" {
				return name
			}
			return segments[i+1]
		}
	}
	return ContainerNone
}

func cosmosPathSegments(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

// addressedResource reads a Cosmos resource path: alternating type and id segments,
// e.g. dbs/{db}/colls/{coll}/docs/{id}. An odd count addresses a feed of the last type
// (create, query, change feed), an even count one resource (read, replace, delete). The
// account itself is the empty path.
func addressedResource(segments []string) (resource string, isFeed, ok bool) {
	if len(segments) == 0 {
		return "", false, true // GET /: account discovery
	}
	start := -1
	for i, s := range segments {
		if s == wirePathSegmentDatabases || s == "offers" {
			start = i
			break
		}
	}
	if start < 0 {
		return "", false, false
	}
	segments = segments[start:]
	if len(segments)%2 == 1 {
		return segments[len(segments)-1], true, true
	}
	return segments[len(segments)-2], false, true
}

func headerIsTrue(v string) bool { return strings.EqualFold(v, "true") }

func isQueryContentType(ct string) bool {
	mediaType, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mediaType), wireValueQueryCT)
}

// TimestampLag is how long ago a document was last written, from its _ts (Unix seconds,
// set by Cosmos on every write); change-feed readers export it as their lag. Clock skew
// could make it negative; it is clamped to zero.
func TimestampLag(ts int64, now time.Time) time.Duration {
	lag := now.Sub(time.Unix(ts, 0))
	if lag < 0 {
		return 0
	}
	return lag
}
