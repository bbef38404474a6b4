package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// ClustersServiceRegistrationControllerName names the controller in logs and metrics.
const ClustersServiceRegistrationControllerName = "ClustersServiceRegistrationController"

// Provision shard settings CS requires on create.
const (
	csCloudProvider = "azure"
	csTopology      = "shared"
)

// errStampNotApproved is recorded, not retried: the stamp informer brings the MC back
// once the stamp is approved.
var errStampNotApproved = errors.New("parent stamp is not approved")

// clustersServiceRegistrationDefinition: ClustersServiceRegistration makes each
// management cluster a Cluster Service provision shard, so that the backend can pin
// clusters to it, and keeps the shard's status in line with the MC's scheduling policy.
//
// The shard's state lives in CS, so every pass reads CS: a GET of the recorded shard, or a
// search by AKS cluster and Maestro consumer when none is recorded yet. A crash after the
// shard was created but before its ID was recorded is repaired by that search.
func clustersServiceRegistrationDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:     ClustersServiceRegistrationControllerName,
		Defaults: defaults(),
		Triggers: func(e Env) []controller.Trigger {
			return []controller.Trigger{
				{Informer: e.Caches.ManagementClusters(), KeyFor: keyForManagementCluster},
				{Informer: e.Caches.Stamps(), KeyFor: keyForStampsManagementCluster},
			}
		},
		New: func(e Env, s controller.Settings) (controller.ReconcileFunc, error) {
			if e.ClusterService == nil {
				return nil, errors.New("no Cluster Service client")
			}
			r := &clustersServiceRegistration{
				managementClusters: e.Caches.ManagementClusters().Lister(),
				stamps:             e.Caches.Stamps().Lister(),
				writer:             newManagementClusterWriter(e),
				shards:             e.ClusterService,
				region:             e.Region,
				conflictRequeue:    orDefault(s.RequeueAfter, DefaultConflictRequeue),
				now:                e.now(),
			}
			return r.Reconcile, nil
		},
	}
}

// registrationOwns is what ClustersServiceRegistration writes of a management cluster.
var registrationOwns = docwrite.Fields{
	"properties.status.clusterServiceProvisionShardID",
	docwrite.ConditionField("properties.status.conditions", api.ManagementClusterConditionClustersServiceRegistered),
}

type clustersServiceRegistration struct {
	managementClusters managementClusterLister
	stamps             *informers.Lister[api.StampProperties]
	writer             managementClusterWriter
	shards             clusterservice.ProvisionShards
	// region is the CS region new shards are created in.
	region          string
	conflictRequeue time.Duration
	now             func() time.Time
}

// Reconcile registers one management cluster.
func (r *clustersServiceRegistration) Reconcile(ctx context.Context, key string) (controller.Result, error) {
	logger := controller.LoggerFrom(ctx)
	cached, mcID, err := managementClusterOf(r.managementClusters, key)
	if cached == nil || err != nil {
		return controller.Result{}, err
	}
	stamp, err := r.stamps.Get(mcID.Parent().String())
	if errors.Is(err, database.ErrNotFound) {
		logger.Info("stamp of the management cluster is not in the cache; waiting for it", "stamp", mcID.Parent().String())
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, err
	}

	var href string
	var syncErr error
	if stamp.Properties.Status == nil || !api.IsConditionTrue(stamp.Properties.Status.Conditions, api.StampConditionApproved) {
		syncErr = errStampNotApproved
	} else {
		href, syncErr = r.register(ctx, cached)
	}
	res, err := r.writer.Update(ctx, cached, registrationOwns, func(mc *api.ManagementCluster) error {
		if mc.Properties.Status == nil {
			mc.Properties.Status = &api.ManagementClusterStatus{}
		}
		status := mc.Properties.Status
		if href != "" {
			status.ClusterServiceProvisionShardID = href
		}
		setRegistrationCondition(&status.Conditions, api.ManagementClusterConditionClustersServiceRegistered, syncErr, r.now())
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		logger.Info("management cluster changed since it was cached; looking again")
		return controller.Result{RequeueAfter: r.conflictRequeue}, nil
	}
	switch {
	case errors.Is(syncErr, errStampNotApproved):
		logger.Info("not registering with Cluster Service", "reason", syncErr.Error())
		return controller.Result{}, nil
	case syncErr != nil:
		return controller.Result{}, fmt.Errorf("registering with Cluster Service: %w", syncErr)
	}
	if res.Outcome == docwrite.Written {
		logger.Info("management cluster registered with Cluster Service", "provisionShard", href)
	}
	return controller.Result{}, nil
}

// register creates or adopts the MC's provision shard, sets its status from the
// scheduling policy and returns the shard's path.
func (r *clustersServiceRegistration) register(ctx context.Context, mc *api.ManagementCluster) (string, error) {
	status := mc.Properties.Status
	if status == nil {
		status = &api.ManagementClusterStatus{}
	}
	identity := clusterservice.ShardIdentity{AKSResourceID: status.AKSResourceID, ConsumerName: status.MaestroConsumerName}
	if identity.AKSResourceID == "" {
		return "", errors.New("status.aksResourceID is required")
	}
	if identity.ConsumerName == "" {
		return "", errors.New("status.maestroConsumerName is required")
	}
	var policy string
	if mc.Properties.Spec != nil {
		policy = mc.Properties.Spec.SchedulingPolicy
	}
	wantStatus, err := shardStatusFor(policy)
	if err != nil {
		return "", err
	}

	shard, err := r.findShard(ctx, status.ClusterServiceProvisionShardID, identity)
	if err != nil {
		return "", err
	}
	if shard == nil {
		if shard, err = r.createShard(ctx, status); err != nil {
			return "", err
		}
		controller.LoggerFrom(ctx).Info("provision shard created", "provisionShard", shard.HREF())
	}
	id, err := shardID(shard)
	if err != nil {
		return "", err
	}
	href, err := clusterservice.ShardHREF(id)
	if err != nil {
		return "", err
	}
	if shard.Status() != wantStatus {
		if _, err := r.shards.SetProvisionShardStatus(ctx, id, wantStatus); err != nil {
			// The shard exists: record it even though its status could not be set.
			return href, err
		}
		controller.LoggerFrom(ctx).Info("provision shard status set", "provisionShard", href, "status", wantStatus)
	}
	return href, nil
}

// findShard returns the recorded shard, or the one CS has for the identity, or nil when
// there is none. A recorded shard that is gone or belongs to another cluster needs a
// human: CS shards are not deleted or re-pointed in normal operation.
func (r *clustersServiceRegistration) findShard(ctx context.Context, recorded string, identity clusterservice.ShardIdentity) (*arohcp.ProvisionShard, error) {
	if recorded != "" {
		id, err := clusterservice.ParseShardHREF(recorded)
		if err != nil {
			return nil, fmt.Errorf("status.clusterServiceProvisionShardID: %w", err)
		}
		shard, err := r.shards.GetProvisionShard(ctx, id)
		if errors.Is(err, clusterservice.ErrNotFound) {
			return nil, fmt.Errorf("recorded provision shard %s does not exist in Cluster Service; manual investigation required", id)
		}
		if err != nil {
			return nil, err
		}
		if got := shard.AzureShard().AksManagementClusterResourceId(); !strings.EqualFold(got, identity.AKSResourceID) {
			return nil, fmt.Errorf("recorded provision shard %s belongs to AKS cluster %q, not %q; manual investigation required", id, got, identity.AKSResourceID)
		}
		if got := shard.MaestroConfig().ConsumerName(); got != identity.ConsumerName {
			return nil, fmt.Errorf("recorded provision shard %s belongs to Maestro consumer %q, not %q; manual investigation required", id, got, identity.ConsumerName)
		}
		return shard, nil
	}
	found, err := r.shards.SearchProvisionShards(ctx, identity)
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	default:
		return nil, fmt.Errorf("%d provision shards match AKS cluster %q and Maestro consumer %q; manual investigation required", len(found), identity.AKSResourceID, identity.ConsumerName)
	}
}

func (r *clustersServiceRegistration) createShard(ctx context.Context, status *api.ManagementClusterStatus) (*arohcp.ProvisionShard, error) {
	required := []struct{ field, value string }{
		{"status.publicDNSZoneResourceID", status.PublicDNSZoneResourceID},
		{"status.hostedClustersSecretsKeyVaultURL", status.HostedClustersSecretsKeyVaultURL},
		{"status.hostedClustersManagedIdentitiesKeyVaultURL", status.HostedClustersManagedIdentitiesKeyVaultURL},
		{"status.hostedClustersSecretsKeyVaultManagedIdentityClientID", status.HostedClustersSecretsKeyVaultManagedIdentityClientID},
		{"status.maestroRESTAPIURL", status.MaestroRESTAPIURL},
		{"status.maestroGRPCTarget", status.MaestroGRPCTarget},
	}
	for _, f := range required {
		if f.value == "" {
			return nil, fmt.Errorf("%s is required to create a provision shard", f.field)
		}
	}
	if r.region == "" {
		return nil, errors.New("the fleet's --region is required to create a provision shard")
	}
	body, err := arohcp.NewProvisionShard().
		CloudProvider(arohcp.NewCloudProvider().ID(csCloudProvider)).
		Region(arohcp.NewCloudRegion().ID(r.region)).
		Topology(csTopology).
		AzureShard(arohcp.NewAzureShard().
			AksManagementClusterResourceId(status.AKSResourceID).
			PublicDnsZoneResourceId(status.PublicDNSZoneResourceID).
			CxSecretsKeyVaultUrl(status.HostedClustersSecretsKeyVaultURL).
			CxManagedIdentitiesKeyVaultUrl(status.HostedClustersManagedIdentitiesKeyVaultURL).
			CxSecretsKeyVaultManagedIdentityClientId(status.HostedClustersSecretsKeyVaultManagedIdentityClientID)).
		MaestroConfig(arohcp.NewProvisionShardMaestroConfig().
			ConsumerName(status.MaestroConsumerName).
			RestApiConfig(arohcp.NewProvisionShardMaestroRestApiConfig().Url(status.MaestroRESTAPIURL)).
			GrpcApiConfig(arohcp.NewProvisionShardMaestroGrpcApiConfig().Url(status.MaestroGRPCTarget))).
		Build()
	if err != nil {
		return nil, fmt.Errorf("building provision shard: %w", err)
	}
	shard, err := r.shards.CreateProvisionShard(ctx, body)
	if errors.Is(err, clusterservice.ErrConflict) {
		return nil, fmt.Errorf("AKS cluster or Maestro consumer is registered to another provision shard: %w", err)
	}
	return shard, err
}

func shardID(shard *arohcp.ProvisionShard) (string, error) {
	if id, ok := shard.GetID(); ok && id != "" {
		return id, nil
	}
	return clusterservice.ParseShardHREF(shard.HREF())
}

// shardStatusFor maps a scheduling policy to the shard status that lets CS (and our pins)
// use the shard or keeps it out of CS's own placement.
func shardStatusFor(policy string) (string, error) {
	switch policy {
	case api.Schedulable:
		return clusterservice.ShardStatusActive, nil
	case api.Unschedulable:
		return clusterservice.ShardStatusMaintenance, nil
	default:
		return "", fmt.Errorf("spec.schedulingPolicy %q is neither %s nor %s", policy, api.Schedulable, api.Unschedulable)
	}
}

// setRegistrationCondition records the outcome of a registration pass the way ARO-HCP
// does: once True, a later failure keeps it True with reason CheckFailed, because the
// registration itself still stands. A condition whose status and reason already match is
// left alone even when the message differs: CS errors carry operation IDs, and rewriting
// the message every retry would wake every reader of the document each time.
func setRegistrationCondition(conditions *[]api.Condition, conditionType string, syncErr error, now time.Time) {
	want := api.Condition{Type: conditionType, Status: api.ConditionTrue, Reason: api.ManagementClusterReasonRegistered, Message: "Registration successful"}
	switch {
	case syncErr == nil:
	case api.IsConditionTrue(*conditions, conditionType):
		want.Reason, want.Message = api.ManagementClusterReasonCheckFailed, syncErr.Error()
	default:
		want.Status, want.Reason, want.Message = api.ConditionFalse, api.ManagementClusterReasonRegistrationFailed, syncErr.Error()
	}
	if c := api.FindCondition(*conditions, conditionType); c != nil && c.Status == want.Status && c.Reason == want.Reason {
		return
	}
	api.SetCondition(conditions, want, now)
}
