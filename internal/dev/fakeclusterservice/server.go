package fakeclusterservice

import (
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

// maxBodyBytes bounds request bodies; CS objects are a few kilobytes.
const maxBodyBytes = 1 << 20

// Server is the fake Cluster Service. It is an http.Handler; the zero value is not usable,
// call New.
type Server struct {
	logger *slog.Logger
	now    func() time.Time

	mu           sync.Mutex
	clusters     map[string]*arohcp.Cluster
	clusterOrder []string
	// byAzure is the first cluster created with each Azure identity: a create searches
	// it, and a scan of every cluster made a burst of creates cost its size squared.
	byAzure    map[azureIdentity]string
	shards     map[string]*arohcp.ProvisionShard
	shardOrder []string
	// nextShard is the round-robin cursor over active shards for unpinned creates.
	nextShard int
	// misplace holds the Azure resource names whose next create ignores its pin.
	misplace map[string]bool
	// reject holds the Azure resource names every create of which is refused.
	reject map[string]bool
	// acceptDuplicateNames lets a second cluster take an Azure identity that another
	// already has, so that a double create shows as two clusters instead of a 409.
	acceptDuplicateNames bool
	faults               []*fault
	faultSeq             int
	rng                  *rand.Rand

	// logMu guards requests apart from mu: a request is logged as its answer starts,
	// which is while a handler may hold mu.
	logMu    sync.Mutex
	requests []Request
}

// Option configures a Server.
type Option func(*Server)

// WithLogger sends the fake's own logs to logger instead of discarding them.
func WithLogger(logger *slog.Logger) Option {
	return func(s *Server) { s.logger = logger }
}

// WithClock replaces time.Now for the timestamps the fake stamps on objects and requests.
func WithClock(now func() time.Time) Option {
	return func(s *Server) { s.now = now }
}

// WithSeed makes rate-based faults reproducible.
func WithSeed(seed uint64) Option {
	return func(s *Server) { s.rng = rand.New(rand.NewPCG(seed, seed)) }
}

// WithDuplicateNames makes the fake accept a cluster whose Azure identity (subscription,
// resource group and name) another cluster already has; see AcceptDuplicateNames.
func WithDuplicateNames() Option {
	return func(s *Server) { s.acceptDuplicateNames = true }
}

// New returns an empty fake Cluster Service.
func New(opts ...Option) *Server {
	s := &Server{
		logger: slog.New(slog.DiscardHandler),
		now:    time.Now,
		rng:    rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	for _, opt := range opts {
		opt(s)
	}
	s.resetLocked()
	return s
}

// Reset forgets every cluster, shard, logged request and fault.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

func (s *Server) resetLocked() {
	s.clusters = map[string]*arohcp.Cluster{}
	s.clusterOrder = nil
	s.byAzure = map[azureIdentity]string{}
	s.shards = map[string]*arohcp.ProvisionShard{}
	s.shardOrder = nil
	s.nextShard = 0
	s.faults = nil
	s.reject = nil
	s.ResetRequests()
}

// Request is one API request the fake received, as logged for assertions. Admin requests
// under /_fake/ are not logged.
type Request struct {
	Time   time.Time
	Method string
	Path   string
	// Query is the raw, still-encoded query string.
	Query  string
	Header http.Header
	Body   string
	// Status is the status the fake answered with.
	Status int
	// Fault is the identifier of the injected fault that affected the request, if any.
	Fault string
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// ResetRequests empties the request log.
func (s *Server) ResetRequests() {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.requests = nil
}

// statusRecorder calls onStatus once, with the status, before anything reaches the client.
type statusRecorder struct {
	http.ResponseWriter
	status   int
	onStatus func(status int)
}

func (r *statusRecorder) record(status int) {
	if r.status == 0 {
		r.status = status
		if r.onStatus != nil {
			r.onStatus(status)
		}
	}
}

func (r *statusRecorder) WriteHeader(status int) {
	r.record(status)
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.record(http.StatusOK)
	return r.ResponseWriter.Write(b)
}

// ServeHTTP serves the CS API under /api/aro_hcp/v1alpha1 and the admin API under /_fake/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, adminPrefix) {
		s.serveAdmin(w, r)
		return
	}
	entry := Request{
		Time:   s.now(),
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
	}
	// The entry is stored before the first byte of the answer leaves, so by the time a
	// client sees the response the log already holds it and tests need no polling. (A
	// large body is flushed while the handler still runs, so storing it when the handler
	// returns would be too late.)
	logged := false
	store := func(status int) {
		entry.Status = status
		s.logMu.Lock()
		s.requests = append(s.requests, entry)
		s.logMu.Unlock()
		logged = true
	}
	rec := &statusRecorder{ResponseWriter: w, onStatus: store}
	defer func() {
		// A request whose client gave up got no answer; it is still logged.
		if !logged {
			store(rec.status)
		}
	}()

	body, err := io.ReadAll(http.MaxBytesReader(rec, r.Body, maxBodyBytes))
	entry.Body = string(body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(rec, s.logger, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		writeError(rec, s.logger, http.StatusBadRequest, "cannot read request body")
		return
	}

	if f := s.pickFault(r); f != nil {
		entry.Fault = f.id
		if f.Latency > 0 && !sleepContext(r.Context(), f.Latency) {
			// The client gave up; nobody will read an answer.
			return
		}
		if f.Status != 0 {
			s.writeFault(rec, f)
			return
		}
	}

	if err := s.route(rec, r, body); err != nil {
		var apiErr *apiError
		if errors.As(err, &apiErr) {
			writeError(rec, s.logger, apiErr.status, apiErr.reason)
			return
		}
		s.logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		writeError(rec, s.logger, http.StatusInternalServerError, err.Error())
	}
}

// collection is one of the API's collections: its list and create, its objects' get and
// patch.
type collection struct {
	list   func(http.ResponseWriter, *http.Request) error
	create func(http.ResponseWriter, []byte) error
	get    func(http.ResponseWriter, string) error
	patch  func(http.ResponseWriter, string, []byte) error
}

func (s *Server) collections() map[string]collection {
	return map[string]collection{
		"clusters":         {list: s.listClusters, create: s.createCluster, get: s.getCluster, patch: s.patchCluster},
		"provision_shards": {list: s.listShards, create: s.createShard, get: s.getShard, patch: s.patchShard},
	}
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, body []byte) error {
	rest, ok := strings.CutPrefix(r.URL.Path, apiPrefix+"/")
	if !ok {
		return notFound("can't find resource for path '%s'", r.URL.Path)
	}
	parts := strings.Split(rest, "/")
	for _, p := range parts {
		if p == "" {
			return notFound("can't find resource for path '%s'", r.URL.Path)
		}
	}
	c, known := s.collections()[parts[0]]
	// Below a collection: an object, and a cluster's provision_shard.
	if !known || len(parts) > 3 || (len(parts) == 3 && (parts[0] != "clusters" || parts[2] != "provision_shard")) {
		return notFound("can't find resource for path '%s'", r.URL.Path)
	}
	method := r.Method
	switch {
	case len(parts) == 1 && method == http.MethodGet:
		return c.list(w, r)
	case len(parts) == 1 && method == http.MethodPost:
		return c.create(w, body)
	case len(parts) == 2 && method == http.MethodGet:
		return c.get(w, parts[1])
	case len(parts) == 2 && method == http.MethodPatch:
		return c.patch(w, parts[1], body)
	case len(parts) == 3 && method == http.MethodGet:
		return s.getClusterShard(w, parts[1])
	}
	return &apiError{
		status: http.StatusMethodNotAllowed,
		reason: "method '" + method + "' isn't supported for path '" + r.URL.Path + "'",
	}
}
