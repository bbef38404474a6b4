package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Metrics are shared by every controller of a process; create them once per registry.
type Metrics struct {
	reconciles *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	panics     *prometheus.CounterVec
	workqueue  workqueueMetrics
}

// Reconcile results as counted in hcpsched_controller_reconcile_total.
const (
	ResultSuccess = "success"
	ResultError   = "error"
	ResultRequeue = "requeue_after"
	ResultPanic   = "panic"
)

// NewMetrics registers the controller and workqueue metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hcpsched_controller_reconcile_total",
			Help: "Reconciles by controller and result: success, error (retried with backoff), requeue_after (an expected wait) or panic.",
		}, []string{"controller", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hcpsched_controller_reconcile_duration_seconds",
			Help:    "Time spent in one reconcile.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"controller"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hcpsched_controller_panics_total",
			Help: "Panics recovered in reconciles; the key is retried with backoff.",
		}, []string{"controller"}),
		workqueue: newWorkqueueMetrics(),
	}
	for _, c := range append([]prometheus.Collector{m.reconciles, m.duration, m.panics}, m.workqueue.collectors()...) {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// workqueueMetrics implements client-go's workqueue.MetricsProvider on our registry,
// with the metric names client-go's own provider uses, labelled by queue name.
type workqueueMetrics struct {
	depth                   *prometheus.GaugeVec
	adds                    *prometheus.CounterVec
	latency                 *prometheus.HistogramVec
	workDuration            *prometheus.HistogramVec
	unfinishedWork          *prometheus.GaugeVec
	longestRunningProcessor *prometheus.GaugeVec
	retries                 *prometheus.CounterVec
}

func newWorkqueueMetrics() workqueueMetrics {
	name := []string{"name"}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12)
	return workqueueMetrics{
		depth:                   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "Current depth of the workqueue."}, name),
		adds:                    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_adds_total", Help: "Adds handled by the workqueue."}, name),
		latency:                 prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds", Help: "Seconds an item waits in the workqueue before being processed.", Buckets: buckets}, name),
		workDuration:            prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds", Help: "Seconds processing an item from the workqueue takes.", Buckets: buckets}, name),
		unfinishedWork:          prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_unfinished_work_seconds", Help: "Seconds of work in progress not yet observed by work_duration; large values suggest stuck workers."}, name),
		longestRunningProcessor: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds", Help: "Seconds the longest-running worker has been at its item."}, name),
		retries:                 prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_retries_total", Help: "Rate-limited re-adds (retries after errors) handled by the workqueue."}, name),
	}
}

func (w workqueueMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{w.depth, w.adds, w.latency, w.workDuration, w.unfinishedWork, w.longestRunningProcessor, w.retries}
}

func (w workqueueMetrics) NewDepthMetric(n string) workqueue.GaugeMetric {
	return w.depth.WithLabelValues(n)
}
func (w workqueueMetrics) NewAddsMetric(n string) workqueue.CounterMetric {
	return w.adds.WithLabelValues(n)
}
func (w workqueueMetrics) NewLatencyMetric(n string) workqueue.HistogramMetric {
	return w.latency.WithLabelValues(n)
}
func (w workqueueMetrics) NewWorkDurationMetric(n string) workqueue.HistogramMetric {
	return w.workDuration.WithLabelValues(n)
}
func (w workqueueMetrics) NewUnfinishedWorkSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return w.unfinishedWork.WithLabelValues(n)
}
func (w workqueueMetrics) NewLongestRunningProcessorSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return w.longestRunningProcessor.WithLabelValues(n)
}
func (w workqueueMetrics) NewRetriesMetric(n string) workqueue.CounterMetric {
	return w.retries.WithLabelValues(n)
}
