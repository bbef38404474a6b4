package fakeclusterservice

import (
	"errors"
	"strings"
)

// armID is the part of an Azure Resource Manager resource ID the create rules look at.
type armID struct {
	subscription  string
	resourceGroup string
	// resourceType is the namespace and every type segment, e.g.
	// Microsoft.Network/virtualNetworks/subnets, as written.
	resourceType string
}

// Resource types the create rules expect, compared case-insensitively as ARM does.
const (
	subnetType        = "Microsoft.Network/virtualNetworks/subnets"
	nsgType           = "Microsoft.Network/networkSecurityGroups"
	userIdentityType  = "Microsoft.ManagedIdentity/userAssignedIdentities"
	armSubscriptions  = "subscriptions"
	armResourceGroups = "resourceGroups"
	armProviders      = "providers"
)

// parseARMID reads /subscriptions/{s}/resourceGroups/{g}/providers/{ns}/{type}/{name}
// [/{type}/{name}]...: a resource inside a resource group, which is what every ID in a
// cluster body names. The fixed segments match case-insensitively; no segment may be
// empty.
func parseARMID(s string) (armID, error) {
	if !strings.HasPrefix(s, "/") {
		return armID{}, errors.New("does not start with '/'")
	}
	parts := strings.Split(s[1:], "/")
	for _, p := range parts {
		if p == "" {
			return armID{}, errors.New("has an empty segment")
		}
	}
	// subscriptions/{s}/resourceGroups/{g}/providers/{ns}/{type}/{name}: at least 8.
	if len(parts) < 8 || (len(parts)-6)%2 != 0 {
		return armID{}, errors.New("is not a resource in a resource group")
	}
	if !strings.EqualFold(parts[0], armSubscriptions) ||
		!strings.EqualFold(parts[2], armResourceGroups) ||
		!strings.EqualFold(parts[4], armProviders) {
		return armID{}, errors.New("is not of the form /subscriptions/{id}/resourceGroups/{name}/providers/{namespace}/{type}/{name}")
	}
	types := []string{parts[5]}
	for i := 6; i < len(parts); i += 2 {
		types = append(types, parts[i])
	}
	return armID{subscription: parts[1], resourceGroup: parts[3], resourceType: strings.Join(types, "/")}, nil
}

// isType reports whether the ID names a resource of type t.
func (id armID) isType(t string) bool { return strings.EqualFold(id.resourceType, t) }
