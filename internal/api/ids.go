package api

import (
	"fmt"
	"strings"
)

// Fleet resource IDs are built lowercased, as ARO-HCP's helpers build them.
const fleetProvider = "/providers/microsoft.redhatopenshift"

// StampResourceID is /providers/microsoft.redhatopenshift/stamps/{stamp}.
func StampResourceID(stamp string) *ResourceID {
	return MustParseResourceID(strings.ToLower(fmt.Sprintf("%s/stamps/%s", fleetProvider, stamp)))
}

// ManagementClusterResourceID is the stamp's singleton MC.
func ManagementClusterResourceID(stamp string) *ResourceID {
	return StampResourceID(stamp).Child("managementclusters", "default")
}

// SchedulingResourceID is the MC's singleton scheduling document.
func SchedulingResourceID(mc *ResourceID) *ResourceID {
	return MustParseResourceID(strings.ToLower(mc.Child("scheduling", "default").String()))
}

// CapacityReadDesireResourceID is the ReadDesire that mirrors the MC's capacity report.
func CapacityReadDesireResourceID(mc *ResourceID) *ResourceID {
	return MustParseResourceID(strings.ToLower(mc.Child("readdesires", CapacityReadDesireName).String()))
}

// ServiceProviderClusterResourceID is a cluster's singleton SPC, keeping the cluster ID's
// casing as ARO-HCP does.
func ServiceProviderClusterResourceID(cluster *ResourceID) *ResourceID {
	return cluster.Child(serviceProviderClustersType, serviceProviderClusterName)
}

// ServiceProviderClusterID is ServiceProviderClusterResourceID(cluster).String() without
// building the ResourceID: the cache lookup every cluster-keyed controller makes on each
// pass and each event filter, where the parsed form would be garbage at once.
func ServiceProviderClusterID(cluster *ResourceID) string {
	return cluster.String() + "/" + serviceProviderClustersType + "/" + serviceProviderClusterName
}

const (
	serviceProviderClustersType = "serviceProviderClusters"
	serviceProviderClusterName  = "default"
)

// FleetPartitionKey is the lowercased stamp name of a fleet resource.
func FleetPartitionKey(rid *ResourceID) (string, error) {
	if len(rid.Types) == 0 || !strings.EqualFold(rid.Types[0], "stamps") {
		return "", fmt.Errorf("%s is not under a stamp", rid)
	}
	return strings.ToLower(rid.Names[0]), nil
}

// ResourcesPartitionKey is the lowercased subscription of a customer resource.
func ResourcesPartitionKey(rid *ResourceID) (string, error) {
	if rid.SubscriptionID == "" {
		return "", fmt.Errorf("%s has no subscription", rid)
	}
	return strings.ToLower(rid.SubscriptionID), nil
}

// KubeApplierPartitionKey is the lowercased MC resource ID, the partition of every
// document in that MC's kube-applier container.
func KubeApplierPartitionKey(mc *ResourceID) string { return mc.Key() }
