// Package register creates or updates a stamp and its management cluster in the Fleet
// container, the way ARO-HCP's `fleet register` does, and creates the management
// cluster's scheduling document so that placement has a document to reserve capacity on
// from the start.
package register

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
)

// stampPattern keeps stamp identifiers to one path segment of a resource ID.
var stampPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)

// ValidStampIdentifier says whether s can be a stamp identifier: letters, digits and '-',
// starting with a letter or digit, so that it is one path segment of a resource ID.
func ValidStampIdentifier(s string) bool { return stampPattern.MatchString(s) }

// DefaultConflictRetries bounds how often a write that lost an etag race is redone from a
// fresh read.
const DefaultConflictRetries = 5

// Options are what register writes. Stamp, AKSResourceID and
// KubeApplierCosmosContainerName are required. SchedulingPolicy is required for a new
// management cluster and, when left empty, keeps the stored policy of an existing one:
// the policy is an SRE's cordon as much as a registration value (`hcpsched cordon`,
// ARO-HCP's admin API), and a re-run of register must not undo it. The rest are needed
// before Cluster Service registration can create the provision shard, and when left
// empty keep the stored value.
type Options struct {
	Stamp string
	// AutoApprove records Approved=True on the stamp; without it an existing approval
	// is left as it is and a new stamp waits for an operator.
	AutoApprove bool

	SchedulingPolicy                                     string
	AKSResourceID                                        string
	PublicDNSZoneResourceID                              string
	HostedClustersSecretsKeyVaultURL                     string
	HostedClustersManagedIdentitiesKeyVaultURL           string
	HostedClustersSecretsKeyVaultManagedIdentityClientID string
	MaestroConsumerName                                  string
	MaestroRESTAPIURL                                    string
	MaestroGRPCTarget                                    string
	KubeApplierCosmosContainerName                       string
}

// Validate reports every missing or invalid option at once.
func (o Options) Validate() error {
	var errs []error
	if o.Stamp == "" {
		errs = append(errs, errors.New("--stamp-identifier is required"))
	} else if !ValidStampIdentifier(o.Stamp) {
		errs = append(errs, fmt.Errorf("--stamp-identifier %q must be letters, digits and '-'", o.Stamp))
	}
	if o.SchedulingPolicy != "" && o.SchedulingPolicy != api.Schedulable && o.SchedulingPolicy != api.Unschedulable {
		errs = append(errs, fmt.Errorf("--scheduling-policy must be %s or %s, got %q", api.Schedulable, api.Unschedulable, o.SchedulingPolicy))
	}
	if o.AKSResourceID == "" {
		errs = append(errs, errors.New("--aks-resource-id is required"))
	} else if _, err := api.ParseResourceID(o.AKSResourceID); err != nil {
		errs = append(errs, fmt.Errorf("--aks-resource-id: %w", err))
	}
	if o.PublicDNSZoneResourceID != "" {
		if _, err := api.ParseResourceID(o.PublicDNSZoneResourceID); err != nil {
			errs = append(errs, fmt.Errorf("--public-dns-zone-resource-id: %w", err))
		}
	}
	if o.KubeApplierCosmosContainerName == "" {
		errs = append(errs, errors.New("--kube-applier-cosmos-container-name is required"))
	}
	return errors.Join(errs...)
}

// The fields register writes of an existing stamp and management cluster; everything
// else (ARO-HCP's admin API's approval, the controllers' status) stays, and so does the
// scheduling policy when no policy is given.
var (
	stampOwns = docwrite.Fields{
		"properties.resourceId",
		"properties.spec",
		docwrite.ConditionField("properties.status.conditions", api.StampConditionApproved),
	}
	managementClusterOwns = docwrite.Fields{
		"properties.resourceId",
		"properties.spec.schedulingPolicy",
		"properties.status.aksResourceID",
		"properties.status.kubeApplierCosmosContainerName",
		"properties.status.publicDNSZoneResourceID",
		"properties.status.hostedClustersSecretsKeyVaultURL",
		"properties.status.hostedClustersManagedIdentitiesKeyVaultURL",
		"properties.status.hostedClustersSecretsKeyVaultManagedIdentityClientID",
		"properties.status.maestroConsumerName",
		"properties.status.maestroRESTAPIURL",
		"properties.status.maestroGRPCTarget",
	}
)

// Run writes the stamp, then the management cluster, then (if missing) the scheduling
// document. Each step is a create, or a read-modify-write under If-Match that is skipped
// when nothing changes, so running it again is harmless.
func Run(ctx context.Context, store database.Store, o Options, now time.Time) error {
	if err := o.Validate(); err != nil {
		return err
	}
	fleet := store.Container(api.FleetContainer)
	stampID := api.StampResourceID(o.Stamp)
	mcID := api.ManagementClusterResourceID(o.Stamp)
	pk, err := api.FleetPartitionKey(stampID)
	if err != nil {
		return err
	}
	if o.SchedulingPolicy == "" {
		// Refused before anything is written: a stamp registered without its MC would be
		// half a registration.
		if err := requireStoredPolicy(ctx, fleet, pk, mcID); err != nil {
			return err
		}
	}

	err = upsert(ctx, docwrite.New(fleet, docwrite.NoCache[api.StampProperties]{}), stampID, pk, stampOwns, func(p *api.StampProperties) error {
		if p.LegacyResourceID == "" {
			p.LegacyResourceID = stampID.String()
		}
		if p.Spec == nil {
			p.Spec = &api.StampSpec{}
		}
		if o.AutoApprove {
			if p.Status == nil {
				p.Status = &api.StampStatus{}
			}
			api.SetCondition(&p.Status.Conditions, api.Condition{
				Type: api.StampConditionApproved, Status: api.ConditionTrue,
				Reason: api.StampReasonAutoApproved, Message: "Auto-approved during registration",
			}, now)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("registering stamp %s: %w", o.Stamp, err)
	}

	err = upsert(ctx, docwrite.New(fleet, docwrite.NoCache[api.ManagementClusterProperties]{}), mcID, pk, managementClusterOwns, func(p *api.ManagementClusterProperties) error {
		if p.LegacyResourceID == "" {
			p.LegacyResourceID = mcID.String()
		}
		if p.Spec == nil {
			p.Spec = &api.ManagementClusterSpec{}
		}
		switch {
		case o.SchedulingPolicy != "":
			p.Spec.SchedulingPolicy = o.SchedulingPolicy
		case p.Spec.SchedulingPolicy == "":
			// The MC went away (or lost its policy) since requireStoredPolicy read it.
			return errPolicyRequired
		}
		if p.Status == nil {
			p.Status = &api.ManagementClusterStatus{}
		}
		s := p.Status
		s.AKSResourceID = o.AKSResourceID
		s.KubeApplierCosmosContainerName = o.KubeApplierCosmosContainerName
		// Optional values left out keep what is stored: re-running register with fewer
		// flags must not take away what Cluster Service registration needs.
		for _, f := range []struct {
			field *string
			value string
		}{
			{&s.PublicDNSZoneResourceID, o.PublicDNSZoneResourceID},
			{&s.HostedClustersSecretsKeyVaultURL, o.HostedClustersSecretsKeyVaultURL},
			{&s.HostedClustersManagedIdentitiesKeyVaultURL, o.HostedClustersManagedIdentitiesKeyVaultURL},
			{&s.HostedClustersSecretsKeyVaultManagedIdentityClientID, o.HostedClustersSecretsKeyVaultManagedIdentityClientID},
			{&s.MaestroConsumerName, o.MaestroConsumerName},
			{&s.MaestroRESTAPIURL, o.MaestroRESTAPIURL},
			{&s.MaestroGRPCTarget, o.MaestroGRPCTarget},
		} {
			if f.value != "" {
				*f.field = f.value
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("registering management cluster %s: %w", mcID, err)
	}

	scheduling, err := api.NewManagementClusterScheduling(mcID)
	if err != nil {
		return err
	}
	// An existing document is someone else's, kept as it is.
	_, err = docwrite.New(fleet, docwrite.NoCache[api.ManagementClusterSchedulingProperties]{}).Create(ctx, scheduling)
	return err
}

// errPolicyRequired refuses a management cluster that would have no scheduling policy:
// ARO-HCP requires one ("Must be set explicitly. Empty string is not allowed"), the
// fleet's registration cannot map an empty one to a provision shard status, and a
// default would decide for the operator whether a new MC takes clusters.
var errPolicyRequired = errors.New("--scheduling-policy is required for a new management cluster (and for one with no policy stored): Schedulable or Unschedulable; " +
	"left out, register keeps the stored policy of an existing one")

// requireStoredPolicy returns errPolicyRequired unless the MC is stored with a policy.
func requireStoredPolicy(ctx context.Context, fleet database.Container, pk string, mcID *api.ResourceID) error {
	mc, err := database.Get[api.ManagementClusterProperties](ctx, fleet, pk, mcID.String())
	switch {
	case errors.Is(err, database.ErrNotFound):
		return fmt.Errorf("registering management cluster %s: %w", mcID, errPolicyRequired)
	case err != nil:
		return fmt.Errorf("reading management cluster %s: %w", mcID, err)
	case mc.Properties.Spec == nil || mc.Properties.Spec.SchedulingPolicy == "":
		return fmt.Errorf("registering management cluster %s: %w", mcID, errPolicyRequired)
	}
	return nil
}

// upsert creates the document with apply's fields, or applies them to the stored one and
// replaces it if anything changed, redoing the read on a lost race: a 412, a 404 (the
// document went away: it is created again) or a 409 on create (it appeared meanwhile:
// it is updated instead). An error from apply ends it with nothing written.
func upsert[P any](ctx context.Context, w docwrite.Writer[P], id *api.ResourceID, pk string, owned docwrite.Fields, apply func(*P) error) error {
	for range DefaultConflictRetries {
		existing, err := database.Get[P](ctx, w.Container(), pk, id.String())
		if errors.Is(err, database.ErrNotFound) {
			var p P
			if err := apply(&p); err != nil {
				return err
			}
			res, err := w.Create(ctx, api.NewDocument(id, pk, p))
			if err != nil || res.Outcome != docwrite.LostRace {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		res, err := w.Update(ctx, existing, owned, func(d *api.Document[P]) error {
			return apply(&d.Properties)
		})
		if err != nil || res.Outcome != docwrite.LostRace {
			return err
		}
	}
	return fmt.Errorf("%s kept changing while being written; gave up after %d attempts", id, DefaultConflictRetries)
}
