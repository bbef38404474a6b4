package process

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
)

// DefaultGCPercent is the garbage collector's target a binary runs with when GOGC is not
// set: the heap may grow to three times what the last collection found live, where Go's
// default is twice. A backend's live heap is its caches, a few tens of MB in a region's
// first months, while a burst of placements allocates about 0.7 MB per cluster, most of
// it request and response bodies; at GOGC 100 the collector and allocation took about a
// quarter of its CPU, and 200 saved a tenth or so of the whole (docs/benchmarks.md). The
// soft memory limit below keeps the larger target from outgrowing the container: near
// the limit the runtime collects as often as it must.
const DefaultGCPercent = 200

// memoryLimitPercent is the share of the container's memory limit the Go runtime's soft
// limit is set to, when GOMEMLIMIT is not set; the rest is for what the runtime does
// not count (thread stacks outside the heap, the binary, the kernel's buffers).
const memoryLimitPercent = 90

// cgroup files that hold the container's memory limit: cgroup v2, then v1.
var memoryLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// TuneGC sets the garbage collector of a long-running binary, unless the environment
// does: GOGC unset gives DefaultGCPercent, GOMEMLIMIT unset gives memoryLimitPercent of
// the container's memory limit (none outside a container with a limit). The binaries
// call it first thing in main; go_gc_gogc_percent and go_gc_gomemlimit_bytes show
// what it chose.
func TuneGC() {
	percent, limit := gcSettings(os.LookupEnv, os.ReadFile)
	if percent > 0 {
		debug.SetGCPercent(percent)
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}

// gcSettings returns the GC percent and soft memory limit to set, 0 for each the
// environment already sets (or, for the limit, when there is no container limit).
func gcSettings(lookup LookupEnvFunc, readFile func(string) ([]byte, error)) (percent int, limit int64) {
	if _, set := lookup("GOGC"); !set {
		percent = DefaultGCPercent
	}
	if _, set := lookup("GOMEMLIMIT"); set {
		return percent, 0
	}
	for _, path := range memoryLimitFiles {
		b, err := readFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// cgroup v2 says "max", and v1 a number near 2^63, for no limit.
		if err != nil || n <= 0 || n >= 1<<62 {
			return percent, 0
		}
		return percent, n / 100 * memoryLimitPercent
	}
	return percent, 0
}

// gcPercent is the GC percent in effect (-1 when off), for the start-up log.
func gcPercent() int {
	sample := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int(sample[0].Value.Uint64())
}
