// Package frontend writes documents the way ARO-HCP's frontend does on an ARM PUT: a
// cluster from the fixture of a freshly accepted one, SWIFT (with a vnet-integration
// subnet) or not, and its Subscription from a stored one. The local region, the scenario
// runner and the controller tests create their data through it, so that nothing hcpsched
// reads exists only in hcpsched's own test data.
package frontend

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// template is a stored cluster document every new cluster of one kind starts from, with
// the identity it carries, which ClusterOfKindAt replaces.
type template struct {
	fixture                                         string
	subscription, group, name, managedResourceGroup string

	once     sync.Once
	stripped string
	err      error
}

var (
	// nonSwift is the document ARO-HCP's frontend writes on a PUT without a
	// vnet-integration subnet, which API 2024-06-10-preview leaves optional: accepted,
	// no Cluster Service ID yet.
	nonSwift = &template{
		fixture:      "constructed/hcpcluster-accepted-fresh-no-clusterserviceid.json",
		subscription: "4fa75980-6637-4157-9726-84d878a62e83", group: "shrillEffectiveness",
		name: "lavishUnhappiness", managedResourceGroup: "uprightPairing",
	}
	// swift is the same document with
	// customerProperties.platform.vnetIntegrationSubnetId, which the 2025-12-23-preview
	// API requires and the frontend stores as given: a subnet of the cluster subnet's
	// VNet, in the cluster's subscription (see the fixtures' README).
	swift = &template{
		fixture:      "constructed/hcpcluster-accepted-fresh-swift-vnetintegrationsubnet.json",
		subscription: "4fa75980-6637-4157-9726-84d878a62e83", group: "shrillEffectiveness",
		name: "brightCorridor", managedResourceGroup: "steadyHarbor",
	}
)

// body is the fixture without the Cosmos system properties, which are the store's to
// assign. A burst creates thousands of clusters from two fixtures: each is read once.
func (t *template) body() (string, error) {
	t.once.Do(func() {
		var raw map[string]any
		if t.err = json.Unmarshal(arohcp.Get(t.fixture), &raw); t.err != nil {
			t.err = fmt.Errorf("cluster fixture %s: %w", t.fixture, t.err)
			return
		}
		arohcp.WithoutSystemProperties(raw)
		b, err := json.Marshal(raw)
		t.stripped, t.err = string(b), err
	})
	return t.stripped, t.err
}

// IdentityURL is the managed-identity data plane URL the frontend stores from the create
// PUT's X-Ms-Identity-Url header (ARM sends one per cluster; the local one is the same
// for all).
const IdentityURL = "https://dummyhost.identity.azure.net/otherinformation?aqueryarg=somevalue"

// SubscriptionID is the subscription of cluster n.
func SubscriptionID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// Cluster is cluster n as the frontend writes it without a vnet-integration subnet, a
// non-SWIFT cluster (see ClusterOfKind).
func Cluster(n int, singleReplica bool, now time.Time) (*api.Cluster, error) {
	return ClusterOfKind(n, Kind{SingleReplica: singleReplica}, now)
}

// ClusterOfKind is cluster n of kind k as the frontend writes it, in its own
// subscription, resource group rg-local-n, name hcp-local-n and managed resource group
// mrg-hcp-local-n (see ClusterOfKindAt).
func ClusterOfKind(n int, k Kind, now time.Time) (*api.Cluster, error) {
	name := fmt.Sprintf("hcp-local-%d", n)
	rid, err := api.ParseResourceID(fmt.Sprintf("/subscriptions/%s/resourceGroups/rg-local-%d/providers/%s/%s", SubscriptionID(n), n, api.ClusterResourceType, name))
	if err != nil {
		return nil, err
	}
	return ClusterOfKindAt(rid, "mrg-"+name, k, now)
}

// ClusterAt is the document the frontend writes for a PUT of rid without a
// vnet-integration subnet (see ClusterOfKindAt).
func ClusterAt(rid *api.ResourceID, managedResourceGroup string, singleReplica bool, now time.Time) (*api.Cluster, error) {
	return ClusterOfKindAt(rid, managedResourceGroup, Kind{SingleReplica: singleReplica}, now)
}

// ClusterOfKindAt is the document the frontend writes for a PUT of rid of kind k: the
// fixture of that kind with rid's subscription, resource group and name wherever the
// fixture has its own (the subnets and the NSG are in the cluster's subscription), the
// given managed resource group, and the identity URL from the PUT's header. Like the
// frontend's, it has no tenant: that is the subscription's.
func ClusterOfKindAt(rid *api.ResourceID, managedResourceGroup string, k Kind, now time.Time) (*api.Cluster, error) {
	pk, err := api.ResourcesPartitionKey(rid)
	if err != nil {
		return nil, err
	}
	t := nonSwift
	if k.Swift {
		t = swift
	}
	body, err := t.body()
	if err != nil {
		return nil, err
	}
	body = strings.NewReplacer(
		// The partition key and cosmosMetadata.partitionKey are the lowercased
		// subscription; the fixture's is lowercase already, so it is replaced first.
		`"`+t.subscription+`"`, `"`+pk+`"`,
		t.subscription, rid.SubscriptionID, t.group, rid.ResourceGroup, t.name, rid.Name(), t.managedResourceGroup, managedResourceGroup,
	).Replace(body)
	doc, err := api.Decode[api.ClusterProperties]([]byte(body))
	if err != nil {
		return nil, fmt.Errorf("cluster fixture: %w", err)
	}
	// The fixture's casing of the path's fixed segments gives way to rid's own.
	doc.ResourceID = rid.String()
	if md := doc.Metadata(); md != nil {
		md.ResourceID = rid.String()
	}
	doc.ID = api.CosmosID(doc.ResourceID)
	if doc.Properties.ServiceProviderProperties == nil {
		doc.Properties.ServiceProviderProperties = &api.ClusterServiceProviderProperties{}
	}
	doc.Properties.ServiceProviderProperties.ManagedIdentitiesDataPlaneIdentityURL = IdentityURL
	if k.SingleReplica {
		doc.Properties.ServiceProviderProperties.ExperimentalFeatures = &api.ExperimentalFeatures{SingleReplica: api.SingleReplica}
	}
	if doc.Properties.SystemData == nil {
		doc.Properties.SystemData = &api.SystemData{}
	}
	doc.Properties.SystemData.CreatedAt = now.UTC()
	return doc, nil
}
