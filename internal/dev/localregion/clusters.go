package localregion

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// clusterFixture is the document ARO-HCP's frontend writes on a PUT: accepted, no Cluster
// Service ID yet. Every new cluster starts from it.
const clusterFixture = "constructed/hcpcluster-accepted-fresh-no-clusterserviceid.json"

// The fixture's identity, replaced in every generated document.
const (
	fixtureSubscription = "4fa75980-6637-4157-9726-84d878a62e83"
	fixtureGroup        = "shrillEffectiveness"
	fixtureName         = "lavishUnhappiness"
	fixtureMRG          = "uprightPairing"
)

// localTenant is the tenant every generated cluster's identity is in.
const localTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

// NewClusterDocument is cluster n as the frontend writes it: the fixture with its own
// subscription, resource group, name, managed resource group and tenant.
func NewClusterDocument(n int, singleReplica bool, now time.Time) (*api.Cluster, error) {
	sub := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	rg, name := fmt.Sprintf("rg-local-%d", n), fmt.Sprintf("hcp-local-%d", n)
	body := string(arohcp.Get(clusterFixture))
	body = strings.NewReplacer(
		fixtureSubscription, sub, fixtureGroup, rg, fixtureName, name, fixtureMRG, "mrg-"+name,
	).Replace(body)

	var raw map[string]any
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		return nil, fmt.Errorf("cluster fixture: %w", err)
	}
	// Cosmos system properties are the store's to assign.
	arohcp.WithoutSystemProperties(raw)
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	doc, err := api.Decode[api.ClusterProperties](b)
	if err != nil {
		return nil, fmt.Errorf("cluster fixture: %w", err)
	}
	doc.ID = api.CosmosID(doc.ResourceID)
	if doc.Properties.Identity == nil {
		doc.Properties.Identity = &api.ClusterIdentity{}
	}
	doc.Properties.Identity.TenantID = localTenant
	if singleReplica {
		if doc.Properties.ServiceProviderProperties == nil {
			doc.Properties.ServiceProviderProperties = &api.ClusterServiceProviderProperties{}
		}
		doc.Properties.ServiceProviderProperties.ExperimentalFeatures = &api.ExperimentalFeatures{SingleReplica: api.SingleReplica}
	}
	if doc.Properties.SystemData == nil {
		doc.Properties.SystemData = &api.SystemData{}
	}
	doc.Properties.SystemData.CreatedAt = now.UTC()
	return doc, nil
}
