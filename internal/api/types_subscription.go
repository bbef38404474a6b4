package api

// SubscriptionNamespace is the ARM provider of a subscription resource.
const SubscriptionNamespace = "Microsoft.Resources"

// ---- Subscription (Resources container, partition key = lowercased subscription ID) ----

// SubscriptionProperties is the ARM subscription as ARO-HCP's frontend stores it when ARM
// registers or updates it. hcpsched only reads it: the tenant is what Cluster Service
// files a cluster under. The frontend enforces the state on every ARM request, so the
// backend, like ARO-HCP's own create controller, does not look at it.
type SubscriptionProperties struct {
	CosmosMetadata *CosmosMetadata `json:"cosmosMetadata,omitempty"`
	State          string          `json:"state,omitempty" hcpsched:"intern"`
	// Properties is ARM's properties bag; null in many stored subscriptions.
	Properties *SubscriptionDetails `json:"properties,omitempty"`
	Object
}

func (p *SubscriptionProperties) UnmarshalJSON(b []byte) error    { return decodeObject(b, p) }
func (p SubscriptionProperties) MarshalJSON() ([]byte, error)     { return encodeObject(&p) }
func (p *SubscriptionProperties) metadataField() **CosmosMetadata { return &p.CosmosMetadata }

type SubscriptionDetails struct {
	TenantID string `json:"tenantId,omitempty" hcpsched:"intern"`
	Object
}

func (p *SubscriptionDetails) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p SubscriptionDetails) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type Subscription = Document[SubscriptionProperties]

// TenantID is properties.properties.tenantId, the Entra tenant, exactly as stored (ARO-HCP
// sends it to Cluster Service with its case kept); empty while ARM has not told the
// frontend.
func (p *SubscriptionProperties) TenantID() string {
	if p.Properties != nil {
		return p.Properties.TenantID
	}
	return ""
}

// SubscriptionResourceID is /subscriptions/{id}, the key of the subscription's document.
func SubscriptionResourceID(subscriptionID string) *ResourceID {
	return MustParseResourceID("/subscriptions/" + subscriptionID)
}

// subscription: its ID, lowercased.
