package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hcpsched/hcpsched/fleet/register"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// managementClusterShape is what names an MC on the command line, for error messages.
const managementClusterShape = `a stamp identifier ("1") or a management cluster's resource ID (/providers/microsoft.redhatopenshift/stamps/{stamp}/managementclusters/default)`

// parseManagementClusterArg is the MC an argument names: a stamp identifier, by the rule
// fleet register applies to it, or the MC's resource ID in any casing. Anything else is
// a usage error, found before anything is read.
func parseManagementClusterArg(arg string) (*api.ResourceID, error) {
	if !strings.HasPrefix(arg, "/") {
		if !register.ValidStampIdentifier(arg) {
			return nil, usagef("management cluster %q: must be %s", arg, managementClusterShape)
		}
		return api.ManagementClusterResourceID(arg), nil
	}
	rid, err := api.ParseResourceID(arg)
	if err != nil {
		return nil, usagef("management cluster %q: must be %s: %v", arg, managementClusterShape, err)
	}
	if !strings.EqualFold(rid.ResourceType(), api.ManagementClusterResourceType) {
		return nil, usagef("management cluster %q is a %s, not a management cluster: it must be %s", arg, rid.ResourceType(), managementClusterShape)
	}
	return rid, nil
}

// managementCluster is the region's parsed MC rid, or errNotFound naming the stamps the
// region has, so that a typo is seen at once.
func (r *region) managementCluster(rid *api.ResourceID, arg string) (*placement.MC, error) {
	view := r.snapshot.Current()
	stamps := make([]string, 0, len(view.MCs))
	for _, mc := range view.MCs {
		if api.ResourceIDsEqual(mc.ID(), rid.String()) {
			return mc, nil
		}
		stamps = append(stamps, stampOf(mc.ID()))
	}
	return nil, notFoundAmong(arg, stamps)
}

// notFoundAmong is the not-found error for arg, naming the known stamps.
func notFoundAmong(arg string, stamps []string) error {
	if len(stamps) == 0 {
		return fmt.Errorf("management cluster %q: %w; the region has no management cluster", arg, errNotFound)
	}
	slices.SortFunc(stamps, api.CompareNatural)
	return fmt.Errorf("management cluster %q: %w; known stamps: %s", arg, errNotFound, strings.Join(stamps, ", "))
}
