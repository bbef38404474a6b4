package fakeclusterservice

import (
	"fmt"
	"net/http"
	"strings"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

// clusterImmutable lists what a cluster PATCH may not mention: fields the model documents as
// immutable or read-only. provision_shard_id is among them, which is what makes a pin final.
var clusterImmutable = map[string]bool{
	"id":                                true,
	"href":                              true,
	"name":                              true,
	"provision_shard_id":                true,
	"region":                            true,
	"cloud_provider":                    true,
	"creation_timestamp":                true,
	"state":                             true,
	"status":                            true,
	"azure.subscription_id":             true,
	"azure.resource_group_name":         true,
	"azure.resource_name":               true,
	"azure.tenant_id":                   true,
	"azure.managed_resource_group_name": true,
	"azure.subnet_resource_id":          true,
	"azure.network_security_group_resource_id":  true,
	"azure.operators_authentication":            true,
	"azure.nodes_outbound_connectivity":         true,
	"azure.vnet_integration_subnet_resource_id": true,
	"azure.oidc_issuer_url":                     true,
}

// clusterFieldValue resolves the search fields the fake accepts for clusters.
func clusterFieldValue(c *arohcp.Cluster, field string) string {
	az := c.Azure()
	switch field {
	case "azure.subscription_id":
		return az.SubscriptionID()
	case "azure.resource_group_name":
		return az.ResourceGroupName()
	case "azure.resource_name":
		return az.ResourceName()
	case "azure.tenant_id":
		return az.TenantID()
	case "azure.managed_resource_group_name":
		return az.ManagedResourceGroupName()
	}
	return ""
}

func (s *Server) createCluster(w http.ResponseWriter, body []byte) error {
	in, raw, err := decodeCluster(body)
	if err != nil {
		return badRequest("%v", err)
	}
	id, hasID := in.GetID()
	if hasID && !clusterIDPattern.MatchString(id) {
		return badRequest("cluster identifier %q must be 32 lowercase letters or digits", id)
	}
	if err := validateCreate(in); err != nil {
		return err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	_, pinned := raw["provision_shard_id"]
	if pinned {
		// A pin bypasses CS's capacity and shard-status checks: any existing shard will do,
		// including one in maintenance.
		if _, ok := s.shards[in.ProvisionShardID()]; !ok {
			return badRequest("provision shard '%s' does not exist", in.ProvisionShardID())
		}
	}
	if !hasID {
		id = newID()
	}
	if _, exists := s.clusters[id]; exists {
		return conflict("cluster '%s' already exists", id)
	}
	if s.reject[strings.ToLower(in.Azure().ResourceName())] {
		return badRequest("cluster '%s' refused, as asked", in.Azure().ResourceName())
	}
	if other := s.findClusterByAzureLocked(in.Azure()); other != "" && !s.acceptDuplicateNames {
		return conflict("cluster '%s' already exists for subscription '%s', resource group '%s' and name '%s'",
			other, in.Azure().SubscriptionID(), in.Azure().ResourceGroupName(), in.Azure().ResourceName())
	}

	b := arohcp.NewCluster().Copy(in).
		ID(id).
		HREF(clusterHREF(id)).
		CreationTimestamp(s.now().UTC()).
		State(arohcp.ClusterStatePending)
	if pinned && s.misplace[strings.ToLower(in.Azure().ResourceName())] {
		delete(s.misplace, strings.ToLower(in.Azure().ResourceName()))
		if other := s.otherShardLocked(in.ProvisionShardID()); other != "" {
			s.logger.Warn("pin ignored, as asked", "pinned", in.ProvisionShardID(), "placed", other)
			b.ProvisionShardID(other)
		}
	}
	if !pinned {
		if shardID := s.pickActiveShardLocked(); shardID != "" {
			// The model documents provision_shard_id as where the cluster is allocated, so
			// an automatic choice is reported there too.
			b.ProvisionShardID(shardID)
		}
	}
	out, err := b.Build()
	if err != nil {
		return fmt.Errorf("build cluster: %w", err)
	}
	s.clusters[id] = out
	s.clusterOrder = append(s.clusterOrder, id)
	if az := azureIdentityOf(out.Azure()); s.byAzure[az] == "" {
		s.byAzure[az] = id
	}
	s.logger.Info("cluster created", "id", id, "shard", out.ProvisionShardID())
	return writeObject(w, http.StatusCreated, arohcp.MarshalCluster, out)
}

// azureIdentity is what makes a cluster unique in CS: its Azure subscription, resource
// group and name, compared exactly.
type azureIdentity struct{ subscription, resourceGroup, name string }

func azureIdentityOf(az *arohcp.Azure) azureIdentity {
	return azureIdentity{az.SubscriptionID(), az.ResourceGroupName(), az.ResourceName()}
}

func (s *Server) findClusterByAzureLocked(az *arohcp.Azure) string {
	return s.byAzure[azureIdentityOf(az)]
}

// pickActiveShardLocked chooses the next active shard in creation order, round-robin, or
// returns "" when none is active.
func (s *Server) pickActiveShardLocked() string {
	var active []string
	for _, id := range s.shardOrder {
		if s.shards[id].Status() == statusActive {
			active = append(active, id)
		}
	}
	if len(active) == 0 {
		return ""
	}
	id := active[s.nextShard%len(active)]
	s.nextShard++
	return id
}

// otherShardLocked is the shard created after shardID (wrapping around), or "" when
// there is no other.
func (s *Server) otherShardLocked(shardID string) string {
	for i, id := range s.shardOrder {
		if id == shardID && len(s.shardOrder) > 1 {
			return s.shardOrder[(i+1)%len(s.shardOrder)]
		}
	}
	return ""
}

func (s *Server) getCluster(w http.ResponseWriter, id string) error {
	return getObject(w, &s.mu, s.clusters, id, "cluster", arohcp.MarshalCluster)
}

func (s *Server) patchCluster(w http.ResponseWriter, id string, body []byte) error {
	_, raw, err := decodePatch(body, decodeCluster, clusterImmutable)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	current, ok := s.clusters[id]
	if !ok {
		return notFound("cluster '%s' not found", id)
	}
	out, err := applyPatch(current, raw, arohcp.UnmarshalCluster, arohcp.MarshalCluster)
	if err != nil {
		return badRequest("%v", err)
	}
	s.clusters[id] = out
	return writeObject(w, http.StatusOK, arohcp.MarshalCluster, out)
}

func (s *Server) getClusterShard(w http.ResponseWriter, id string) error {
	s.mu.Lock()
	c, ok := s.clusters[id]
	var shard *arohcp.ProvisionShard
	if ok {
		shard = s.shards[c.ProvisionShardID()]
	}
	s.mu.Unlock()
	if !ok {
		return notFound("cluster '%s' not found", id)
	}
	if shard == nil {
		// Not placed yet: CS answers with an empty shard, whose href is empty.
		empty, err := arohcp.NewProvisionShard().Build()
		if err != nil {
			return fmt.Errorf("build empty shard: %w", err)
		}
		return writeObject(w, http.StatusOK, arohcp.MarshalProvisionShard, empty)
	}
	return writeObject(w, http.StatusOK, arohcp.MarshalProvisionShard, shard)
}

var clusterList = list[*arohcp.Cluster]{
	kind: "ClusterList", href: clustersPath, what: "clusters",
	searchFields: clusterSearchFields, fieldValue: clusterFieldValue, marshal: arohcp.MarshalClusterList,
}

func (s *Server) listClusters(w http.ResponseWriter, r *http.Request) error {
	return clusterList.serve(w, r, &s.mu, func() []*arohcp.Cluster { return inOrder(s.clusterOrder, s.clusters) })
}

func matchesAll(want map[string]string, value func(string) string) bool {
	for f, v := range want {
		if value(f) != v {
			return false
		}
	}
	return true
}
