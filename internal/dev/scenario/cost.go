package scenario

import (
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/dev/benchreport"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// cachedPerCluster is how many documents each cluster the run creates adds to the
// backend's caches: the cluster, its ServiceProviderCluster and its subscription (the
// backend's other caches, MCs, stamps and scheduling documents, do not grow with
// clusters).
const cachedPerCluster = 3

// backendAgent is the User-Agent prefix of the backend's Cluster Service client
// (clusterservice.Config.Of("backend", ...)).
const backendAgent = "hcpsched-backend"

// What the CPU and heap figures cover, named in the report.
const (
	scopeBackendProcess   = "backend process (its /proc utime+stime)"
	scopeWholeProcess     = "whole runner process: backend, fleet, region and store share it"
	scopeRunnerProcess    = "runner process: fleet, MC simulator, fake CS, observer, creators"
	scopeFleetInProcess   = "not separable: in the backend figure (one process)"
	scopeHeapChild        = "backend live heap growth (next_gc / (1+GOGC/100))"
	scopeHeapWholeProcess = "whole process live heap growth after GC (store copy included)"
)

// window is what a run measured around its clusters: the backend's counters from just
// before the first creation until the run settled, and the runner process's CPU over
// the same span.
type window struct {
	counters  counters
	runnerCPU float64
	// since is when the window opened, for the fake Cluster Service's log.
	since time.Time
}

// cost turns a run's window into its cost figures, for clusters created on store.
func cost(store string, clusters int, w window, csLog []fakeclusterservice.Request) benchreport.Cost {
	c := w.counters
	out := benchreport.Cost{
		BackendCPUSeconds:   c.cpuSeconds,
		BackendAllocBytes:   c.allocBytes,
		HeapBytes:           max(c.heapBytes, 0),
		CachedDocuments:     float64(cachedPerCluster * clusters),
		QueueWait:           map[string]benchreport.QueueWait{},
		Requests:            map[string]map[string]float64{},
		Conflicts:           map[string]float64{},
		ClusterServiceCalls: clusterServiceCalls(csLog, w.since),
	}
	if store == StoreMemory {
		out.BackendCPUScope, out.FleetCPUScope, out.HeapScope = scopeWholeProcess, scopeFleetInProcess, scopeHeapWholeProcess
	} else {
		out.BackendCPUScope, out.HeapScope = scopeBackendProcess, scopeHeapChild
		out.FleetCPUSeconds, out.FleetCPUScope = w.runnerCPU, scopeRunnerProcess
	}
	for name, h := range c.queueWait {
		if h.count > 0 {
			out.QueueWait[name] = benchreport.QueueWait{Items: h.count, MeanSeconds: h.mean(), P99Seconds: h.quantile(0.99)}
		}
	}
	for key, n := range c.requestsByController {
		controller, operation, _ := strings.Cut(key, " ")
		if n == 0 {
			continue
		}
		if out.Requests[controller] == nil {
			out.Requests[controller] = map[string]float64{}
		}
		out.Requests[controller][operation] += n
	}
	for controller, n := range c.conflictsByController {
		if n > 0 {
			out.Conflicts[controller] = n
		}
	}
	return out
}

// clusterServiceCalls counts the backend's requests in the fake Cluster Service's log from
// since on, by method and path (identifiers as "-"; a search marked "?search").
func clusterServiceCalls(log []fakeclusterservice.Request, since time.Time) map[string]float64 {
	out := map[string]float64{}
	for _, r := range log {
		if r.Time.Before(since) || !strings.HasPrefix(r.Header.Get("User-Agent"), backendAgent) {
			continue
		}
		out[callName(r)]++
	}
	return out
}

// pathWord is a path segment kept as it is: a collection or an action, not an identifier.
var pathWord = regexp.MustCompile(`^[a-z][a-z_]*$`)

// callName is "<METHOD> <path>" with the API prefix dropped and identifiers replaced by
// "-": "POST /clusters", "GET /clusters/-", "GET /clusters?search".
func callName(r fakeclusterservice.Request) string {
	segments := strings.Split(strings.Trim(r.Path, "/"), "/")
	// /api/<service>/<version>/...: the prefix names the API, not the call.
	if len(segments) >= 3 && segments[0] == "api" {
		segments = segments[3:]
	}
	for i, seg := range segments {
		if !pathWord.MatchString(seg) || len(seg) >= 32 {
			segments[i] = "-"
		}
	}
	name := r.Method + " /" + strings.Join(segments, "/")
	if r.Method == http.MethodGet && strings.Contains(r.Query, "search=") {
		name += "?search"
	}
	return name
}
