package clusterservice

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// AzureIdentity is how ARO-HCP names a cluster in Azure; CS stores it under the cluster's
// "azure" attribute. CS's own "name" is not part of it: it is a CS-side label that need not
// equal the Azure resource name.
type AzureIdentity struct {
	SubscriptionID           string // azure.subscription_id
	ResourceGroupName        string // azure.resource_group_name
	ResourceName             string // azure.resource_name
	TenantID                 string // azure.tenant_id
	ManagedResourceGroupName string // azure.managed_resource_group_name
}

// SearchExpression returns the CS search expression matching exactly this identity. Every
// field is required: a partial identity could match someone else's cluster.
func (a AzureIdentity) SearchExpression() (string, error) {
	return conjunction([]searchTerm{
		{"azure.subscription_id", a.SubscriptionID},
		{"azure.resource_group_name", a.ResourceGroupName},
		{"azure.resource_name", a.ResourceName},
		{"azure.tenant_id", a.TenantID},
		{"azure.managed_resource_group_name", a.ManagedResourceGroupName},
	})
}

// ShardIdentity is how the fleet recognises the provision shard of a management cluster.
type ShardIdentity struct {
	AKSResourceID string // azure_shard.aks_management_cluster_resource_id
	ConsumerName  string // maestro_config.consumer_name
}

// SearchExpression returns the CS search expression matching exactly this shard identity.
func (s ShardIdentity) SearchExpression() (string, error) {
	return conjunction([]searchTerm{
		{"azure_shard.aks_management_cluster_resource_id", s.AKSResourceID},
		{"maestro_config.consumer_name", s.ConsumerName},
	})
}

type searchTerm struct {
	field string
	value string
}

func conjunction(terms []searchTerm) (string, error) {
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		q, err := quoteSearchValue(t.value)
		if err != nil {
			return "", fmt.Errorf("search %s: %w", t.field, err)
		}
		parts = append(parts, t.field+"="+q)
	}
	return strings.Join(parts, " and "), nil
}

// quoteSearchValue single-quotes a value for CS's search language. Rather than rely on an
// escaping rule of CS's parser, it refuses the characters that would need one: no Azure
// name, id or Maestro consumer name can contain them, so seeing one means the input is not
// what it claims to be.
func quoteSearchValue(v string) (string, error) {
	if v == "" {
		return "", fmt.Errorf("empty value")
	}
	if !utf8.ValidString(v) {
		return "", fmt.Errorf("value %q is not valid UTF-8", v)
	}
	for _, r := range v {
		if r == '\'' || r == '\\' || unicode.IsControl(r) {
			return "", fmt.Errorf("value %q contains %q, which CS search values cannot hold", v, r)
		}
	}
	return "'" + v + "'", nil
}
