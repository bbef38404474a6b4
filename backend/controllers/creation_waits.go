package controllers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Why ClusterServiceCreate can be waiting on a cluster. Each wait ends only when another
// component writes the missing field, so the controller does not retry on a timer: the
// write is an event that brings the cluster back. Operators see the waits as the gauge
// backend_cluster_service_create_waiting_clusters{reason}; docs/alerts.md says who
// writes each field.
const (
	// WaitDesiredVersion: the SPC has no spec.control_plane_version.desired_version;
	// ARO-HCP's ControlPlaneDesiredVersion controller writes it.
	WaitDesiredVersion = "desired_version_missing"
	// WaitSubscription: the cluster's Subscription document is not in the cache.
	WaitSubscription = "subscription_missing"
	// WaitSubscriptionTenant: the Subscription has no properties.properties.tenantId.
	WaitSubscriptionTenant = "subscription_tenant_missing"
	// WaitManagedResourceGroup: the cluster has no
	// customerProperties.platform.managedResourceGroup, part of its CS identity.
	WaitManagedResourceGroup = "managed_resource_group_missing"
	// WaitInvalidDocument: a field cannot be turned into a CS value (an unknown enum
	// value, say); the document must be corrected.
	WaitInvalidDocument = "invalid_cluster_document"
)

// creationWaitReasons lists every reason, for the gauge's zero series.
var creationWaitReasons = []string{WaitDesiredVersion, WaitSubscription, WaitSubscriptionTenant, WaitManagedResourceGroup, WaitInvalidDocument}

// CreationWaits holds the reason each waiting cluster waits for, and counts them by
// reason. A cluster leaves it when a reconcile gets past the wait, or finds nothing left
// to create.
type CreationWaits struct {
	mu    sync.Mutex
	byKey map[string]string
	gauge *prometheus.GaugeVec
}

// NewCreationWaits registers the waiting-clusters gauge on reg, every reason at zero.
func NewCreationWaits(reg prometheus.Registerer) (*CreationWaits, error) {
	w := &CreationWaits{
		byKey: map[string]string{},
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "backend_cluster_service_create_waiting_clusters",
			Help: "Clusters placed or ready to place that ClusterServiceCreate cannot create in Cluster Service yet, by reason: " +
				"desired_version_missing, subscription_missing, subscription_tenant_missing, managed_resource_group_missing, invalid_cluster_document (see docs/alerts.md).",
		}, []string{"reason"}),
	}
	for _, r := range creationWaitReasons {
		w.gauge.WithLabelValues(r).Set(0)
	}
	if err := reg.Register(w.gauge); err != nil {
		return nil, err
	}
	return w, nil
}

// wait records that the cluster with key waits for reason, and reports whether it
// waited for something else (or nothing) before.
func (w *CreationWaits) wait(key, reason string) (started bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.byKey[key]; ok {
		if old == reason {
			return false
		}
		w.add(old, -1)
	}
	w.byKey[key] = reason
	w.add(reason, 1)
	return true
}

// doneUnless records that the cluster with key no longer waits, unless it waits for
// reason.
func (w *CreationWaits) doneUnless(key, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.byKey[key]; ok && old != reason {
		delete(w.byKey, key)
		w.add(old, -1)
	}
}

// done records that the cluster with key no longer waits.
func (w *CreationWaits) done(key string) { w.doneUnless(key, "") }

// Reason is what the cluster with key waits for, or "" when it does not wait.
func (w *CreationWaits) Reason(key string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byKey[key]
}

func (w *CreationWaits) add(reason string, delta float64) {
	w.gauge.WithLabelValues(reason).Add(delta)
}
