// Package controllers holds the fleet's controllers. All of them are keyed by management
// cluster (the lowercased ManagementCluster resource ID), read the Fleet container only
// through informer caches, and write with etag-guarded replaces of a copy of the cached
// document, changing only the fields they own. The kube-applier container of each
// management cluster has no informer: the capacity ReadDesire is read by point read.
package controllers

import "time"

// Defaults of the controllers' timing, defined once; the fleet's flags use them.
const (
	// DefaultWorkers is the number of workers of each controller. Keys are management
	// clusters, of which a region has few.
	DefaultWorkers = 2
	// DefaultResyncPeriod re-enqueues every management cluster for the registration,
	// lifecycle and ReadDesire controllers, repairing whatever a missed event left.
	DefaultResyncPeriod = 5 * time.Minute
	// DefaultCapacityPollInterval is how often each capacity ReadDesire is point-read; the
	// agent on the management cluster reports every 30 s.
	DefaultCapacityPollInterval = 30 * time.Second
	// DefaultScaleCeilingInterval is how often the scale ceiling is recomputed from the
	// agent pools, and so the age at which its lastReportedAt is refreshed.
	DefaultScaleCeilingInterval = 5 * time.Minute
	// DefaultConflictRequeue is the wait after a 412. The change feed normally brings the
	// newer document first and the key is reconciled from it; the requeue is the way back
	// for a key in a kube-applier container, which no change feed watches, and for a 412
	// with no newer version behind it (a gateway retry of a write that had applied).
	DefaultConflictRequeue = 5 * time.Second
)
