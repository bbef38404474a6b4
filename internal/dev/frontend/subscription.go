package frontend

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// Tenant is the Entra tenant of the local subscriptions.
const Tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

// subscriptionFixture is a Subscription as the frontend stores it once ARM has registered
// it, tenant included.
const (
	subscriptionFixture       = "subscription-registered-with-tenant.json"
	subscriptionFixtureID     = "6b690bec-0c16-4ecb-8f67-781caf40bba7"
	subscriptionFixtureTenant = "the-tenant"
)

// Subscription is the Subscription document of subscriptionID, registered, under tenant;
// an empty tenant gives properties.properties null, as many stored subscriptions have.
func Subscription(subscriptionID, tenant string) (*api.Subscription, error) {
	body := strings.ReplaceAll(string(arohcp.Get(subscriptionFixture)), subscriptionFixtureID, strings.ToLower(subscriptionID))
	var raw map[string]any
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		return nil, fmt.Errorf("subscription fixture: %w", err)
	}
	arohcp.WithoutSystemProperties(raw)
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	doc, err := api.Decode[api.SubscriptionProperties](b)
	if err != nil {
		return nil, fmt.Errorf("subscription fixture: %w", err)
	}
	if doc.Properties.TenantID() != subscriptionFixtureTenant {
		return nil, fmt.Errorf("subscription fixture: tenant %q, expected %q", doc.Properties.TenantID(), subscriptionFixtureTenant)
	}
	doc.ID = api.CosmosID(doc.ResourceID)
	if tenant == "" {
		doc.Properties.Properties = nil
		doc.Properties.SetUnknown("properties", json.RawMessage("null"))
	} else {
		doc.Properties.Properties.TenantID = tenant
	}
	return doc, nil
}
