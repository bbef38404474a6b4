package controllers

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
)

// PendingCleanupName names the controller in metrics and logs.
const PendingCleanupName = "PendingCleanup"

// PendingCleanup defaults.
const (
	DefaultPendingCleanupWorkers = 5
	// DefaultPendingCleanupResyncPeriod sweeps every MC this often; a reservation left
	// by a crash or a lost race holds capacity until then at the latest.
	DefaultPendingCleanupResyncPeriod = 10 * time.Minute
)

// pendingCleanupController drops reservations that no longer stand for a placement in
// flight. It is keyed by MC.
type pendingCleanupController struct {
	d Deps
}

// NewPendingCleanup builds the MC-keyed PendingCleanupController, woken by scheduling
// document events and its resync.
func NewPendingCleanup(d Deps, s Settings) (*controller.Controller, error) {
	p := &pendingCleanupController{d: d}
	return newKeyed(d, PendingCleanupName, s, api.ManagementClusterResourceType, p.reconcile, d.Informers.ManagementClusterSchedulings)
}

// Why a reservation is dropped or kept, for logs.
const (
	keepOwn          = "placed here"
	keepInFlight     = "placement in flight"
	keepUnknown      = "cluster not in cache"
	dropEmpty        = "empty entry"
	dropUnparsable   = "not a resource ID"
	dropNoSPC        = "ServiceProviderCluster gone"
	dropElsewhere    = "placed on another management cluster"
	dropClusterEnded = "cluster deleting or ended"
)

func (p *pendingCleanupController) reconcile(ctx context.Context, key string) (controller.Result, error) {
	mc, err := api.ParseResourceID(key)
	if err != nil {
		return controller.Result{}, nil
	}
	sched, err := p.d.Informers.ManagementClusterSchedulings.Lister().Get(api.SchedulingResourceID(mc).String())
	if errors.Is(err, database.ErrNotFound) {
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, err
	}
	st := sched.Properties.Status
	if st == nil || len(st.PendingAssignedClusters) == 0 {
		return controller.Result{}, nil
	}
	logger := controller.LoggerFrom(ctx)
	var keep []string
	for _, entry := range st.PendingAssignedClusters {
		keepIt, why := p.judge(entry, mc)
		if keepIt {
			keep = append(keep, entry)
			continue
		}
		logger.Info("dropping reservation", "cluster", entry, "why", why)
	}
	if len(keep) == len(st.PendingAssignedClusters) {
		return controller.Result{}, nil
	}
	update := sched.DeepCopy()
	update.Properties.Status.PendingAssignedClusters = keep
	written, err := replaceCopy(ctx, p.d.Fleet, update)
	if err != nil {
		return controller.Result{}, err
	}
	if written == nil {
		return lostRace, nil
	}
	p.d.Informers.ManagementClusterSchedulings.Assume(written)
	return controller.Result{}, nil
}

// judge applies the rules of docs/placement.md: effective placement is the SPC's status
// (where CS put the cluster) or else its spec (placement's intent).
func (p *pendingCleanupController) judge(entry string, mc *api.ResourceID) (bool, string) {
	if strings.TrimSpace(entry) == "" {
		return false, dropEmpty
	}
	cluster, err := api.ParseResourceID(entry)
	if err != nil {
		return false, dropUnparsable
	}
	spc, err := p.d.Informers.ServiceProviderClusters.Lister().Get(api.ServiceProviderClusterResourceID(cluster).String())
	if err != nil {
		return false, dropNoSPC
	}
	effective := spc.Properties.ObservedManagementCluster()
	if effective == "" {
		effective = spc.Properties.IntendedManagementCluster()
	}
	switch {
	case api.ResourceIDsEqual(effective, mc.String()):
		return true, keepOwn
	case effective != "":
		return false, dropElsewhere
	}
	c, err := p.d.Informers.Clusters.Lister().Get(cluster.String())
	if err != nil {
		return true, keepUnknown
	}
	if deleting(c) || terminal(c) {
		return false, dropClusterEnded
	}
	return true, keepInFlight
}
