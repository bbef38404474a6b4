package fakeclusterservice

import (
	"fmt"
	"net/http"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

const (
	statusActive      = "active"
	statusMaintenance = "maintenance"
	statusOffline     = "offline"
	topologyShared    = "shared"
)

// shardImmutable lists what a shard PATCH may not mention. Everything in azure_shard and
// maestro_config is documented as immutable, so the whole subtrees are refused.
var shardImmutable = map[string]bool{
	"id":                    true,
	"href":                  true,
	"region":                true,
	"cloud_provider":        true,
	"creation_timestamp":    true,
	"last_update_timestamp": true,
	"azure_shard":           true,
	"maestro_config":        true,
}

func shardFieldValue(p *arohcp.ProvisionShard, field string) string {
	switch field {
	case "azure_shard.aks_management_cluster_resource_id":
		return p.AzureShard().AksManagementClusterResourceId()
	case "maestro_config.consumer_name":
		return p.MaestroConfig().ConsumerName()
	}
	return ""
}

// requireShardFields enforces the model's "required during creation" attributes.
func requireShardFields(p *arohcp.ProvisionShard) error {
	az := p.AzureShard()
	mc := p.MaestroConfig()
	required := []struct {
		path  string
		value string
	}{
		{"region.id", p.Region().ID()},
		{"cloud_provider.id", p.CloudProvider().ID()},
		{"topology", p.Topology()},
		{"azure_shard.aks_management_cluster_resource_id", az.AksManagementClusterResourceId()},
		{"azure_shard.public_dns_zone_resource_id", az.PublicDnsZoneResourceId()},
		{"azure_shard.cx_managed_identities_key_vault_url", az.CxManagedIdentitiesKeyVaultUrl()},
		{"azure_shard.cx_secrets_key_vault_url", az.CxSecretsKeyVaultUrl()},
		{"azure_shard.cx_secrets_key_vault_managed_identity_client_id", az.CxSecretsKeyVaultManagedIdentityClientId()},
		{"maestro_config.consumer_name", mc.ConsumerName()},
		{"maestro_config.rest_api_config.url", mc.RestApiConfig().Url()},
		{"maestro_config.grpc_api_config.url", mc.GrpcApiConfig().Url()},
	}
	for _, r := range required {
		if r.value == "" {
			return badRequest("attribute %q is required", r.path)
		}
	}
	if p.Topology() != topologyShared {
		return badRequest("topology %q is not supported; the only topology is %q", p.Topology(), topologyShared)
	}
	return nil
}

// shardConflictLocked enforces the model's uniqueness rules: the AKS management cluster is
// unique, and so is the Maestro consumer on each Maestro endpoint.
func (s *Server) shardConflictLocked(p *arohcp.ProvisionShard) error {
	aks := p.AzureShard().AksManagementClusterResourceId()
	mc := p.MaestroConfig()
	for _, id := range s.shardOrder {
		other := s.shards[id]
		omc := other.MaestroConfig()
		switch {
		case other.AzureShard().AksManagementClusterResourceId() == aks:
			return conflict("provision shard '%s' already uses AKS management cluster '%s'", id, aks)
		case omc.ConsumerName() == mc.ConsumerName() && omc.RestApiConfig().Url() == mc.RestApiConfig().Url():
			return conflict("provision shard '%s' already uses Maestro consumer '%s' on '%s'",
				id, mc.ConsumerName(), mc.RestApiConfig().Url())
		case omc.ConsumerName() == mc.ConsumerName() && omc.GrpcApiConfig().Url() == mc.GrpcApiConfig().Url():
			return conflict("provision shard '%s' already uses Maestro consumer '%s' on '%s'",
				id, mc.ConsumerName(), mc.GrpcApiConfig().Url())
		}
	}
	return nil
}

func (s *Server) createShard(w http.ResponseWriter, body []byte) error {
	in, _, err := decodeShard(body)
	if err != nil {
		return badRequest("%v", err)
	}
	if err := requireShardFields(in); err != nil {
		return err
	}
	if status, ok := in.GetStatus(); ok && status != statusMaintenance {
		return badRequest("a new provision shard must be created in status %q, not %q", statusMaintenance, status)
	}
	id, hasID := in.GetID()
	if hasID && !shardIDPattern.MatchString(id) {
		return badRequest("provision shard identifier %q is malformed", id)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if !hasID {
		id = newID()
	}
	if _, exists := s.shards[id]; exists {
		return conflict("provision shard '%s' already exists", id)
	}
	if err := s.shardConflictLocked(in); err != nil {
		return err
	}
	now := s.now().UTC()
	out, err := arohcp.NewProvisionShard().Copy(in).
		ID(id).
		HREF(shardHREF(id)).
		Status(statusMaintenance).
		CreationTimestamp(now).
		LastUpdateTimestamp(now).
		Build()
	if err != nil {
		return fmt.Errorf("build provision shard: %w", err)
	}
	s.shards[id] = out
	s.shardOrder = append(s.shardOrder, id)
	s.logger.Info("provision shard created", "id", id,
		"aks", out.AzureShard().AksManagementClusterResourceId(), "consumer", out.MaestroConfig().ConsumerName())
	return writeObject(w, http.StatusCreated, arohcp.MarshalProvisionShard, out)
}

func (s *Server) getShard(w http.ResponseWriter, id string) error {
	return getObject(w, &s.mu, s.shards, id, "provision shard", arohcp.MarshalProvisionShard)
}

func (s *Server) patchShard(w http.ResponseWriter, id string, body []byte) error {
	in, raw, err := decodePatch(body, decodeShard, shardImmutable)
	if err != nil {
		return err
	}
	if status, ok := in.GetStatus(); ok {
		switch status {
		case statusActive, statusMaintenance, statusOffline:
		default:
			return badRequest("status %q is not one of %q, %q, %q", status, statusActive, statusMaintenance, statusOffline)
		}
	}
	if topology, ok := in.GetTopology(); ok && topology != topologyShared {
		return badRequest("topology %q is not supported; the only topology is %q", topology, topologyShared)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	current, ok := s.shards[id]
	if !ok {
		return notFound("provision shard '%s' not found", id)
	}
	merged, err := applyPatch(current, raw, arohcp.UnmarshalProvisionShard, arohcp.MarshalProvisionShard)
	if err != nil {
		return badRequest("%v", err)
	}
	out, err := arohcp.NewProvisionShard().Copy(merged).LastUpdateTimestamp(s.now().UTC()).Build()
	if err != nil {
		return fmt.Errorf("build provision shard: %w", err)
	}
	s.shards[id] = out
	s.logger.Info("provision shard updated", "id", id, "status", out.Status())
	return writeObject(w, http.StatusOK, arohcp.MarshalProvisionShard, out)
}

var shardList = list[*arohcp.ProvisionShard]{
	kind: "ProvisionShardList", href: shardsPath, what: "provision shards",
	searchFields: shardSearchFields, fieldValue: shardFieldValue, marshal: arohcp.MarshalProvisionShardList,
}

func (s *Server) listShards(w http.ResponseWriter, r *http.Request) error {
	return shardList.serve(w, r, &s.mu, func() []*arohcp.ProvisionShard { return inOrder(s.shardOrder, s.shards) })
}
