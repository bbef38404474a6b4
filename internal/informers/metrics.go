package informers

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	feedItems  *prometheus.CounterVec
	malformed  *prometheus.CounterVec
	feedErrors *prometheus.CounterVec
	feedLag    *prometheus.GaugeVec
	lastPoll   *prometheus.GaugeVec
	relists    *prometheus.CounterVec
}

// labelContainer names the Cosmos DB container. Not "container": prometheus-operator's
// ServiceMonitors (and Azure Managed Prometheus's) add the pod's container name as the
// target label "container", which would rename this one to exported_container and leave
// the alerts grouping by the pod's container instead.
const labelContainer = "cosmos_container"

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		feedItems: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hcpsched_changefeed_items_total",
			Help: "Change-feed items delivered to caches, by container and resource type.",
		}, []string{labelContainer, "resource_type"}),
		malformed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hcpsched_changefeed_malformed_documents_total",
			Help: "Documents skipped because they did not decode; the log names each one.",
		}, []string{labelContainer, "resource_type"}),
		feedErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hcpsched_changefeed_errors_total",
			Help: "Failed change-feed reads; the pump retries on its next poll.",
		}, []string{labelContainer}),
		feedLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hcpsched_changefeed_lag_seconds",
			Help: "How long the oldest change delivered by the last poll waited for it: now minus its _ts. 0 when the poll found nothing new.",
		}, []string{labelContainer}),
		lastPoll: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hcpsched_changefeed_last_poll_timestamp_seconds",
			Help: "When the pump last completed a poll (every feed range read to its end without an error); set at start. /readyz fails once it is older than --changefeed-stall-timeout.",
		}, []string{labelContainer}),
		relists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hcpsched_informer_relists_total",
			Help: "Full lists of a resource type, initial and periodic.",
		}, []string{labelContainer, "resource_type"}),
	}
	for _, c := range []prometheus.Collector{m.feedItems, m.malformed, m.feedErrors, m.feedLag, m.lastPoll, m.relists} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
