// Package benchreport turns the measurements of the placement scenario benchmark into
// its outputs: summary.json, a terminal table and an SVG chart. It only formats; the
// scenario runner (internal/dev/scenario) does the measuring.
//
// Each Run is the whole pipeline (backend placing N clusters onto management clusters)
// against one store with one placement-worker count. The figures derived from it mean:
//
//   - placements per second: clusters placed divided by the run's elapsed time, which is
//     the time from the first cluster creation to the last placement. It is an average
//     over the run, start-up and tail included, not a peak rate.
//   - latency p50/p90/p99: nearest-rank percentiles of each placed cluster's time from
//     creation to having a placement written to its spec. Clusters never placed have no
//     latency and are not counted, so compare placements with clusters as well.
//   - Cosmos requests, request units (RU) and 412 conflicts per placement: the backend's
//     totals during the run divided by the clusters placed. Requests count every
//     operation and status code, so retries after a 412 show up here as well. RU is 0 for
//     stores that do not charge any (the in-memory store).
//   - peak RSS: the highest resident set size the runner saw during the run.
//   - the 20-to-1 ratios (named after the largest and smallest worker counts present):
//     how much more throughput, or how much more latency, the many-worker run had than
//     the single-worker run against the same store. A throughput ratio near the worker
//     ratio means the workers scale; near 1 means something serialises them.
//
// Any quotient whose divisor is zero is reported as 0, never NaN or Inf, because JSON
// cannot carry those and a zero-placement run must still produce a readable report.
package benchreport
