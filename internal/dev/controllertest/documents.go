package controllertest

// The documents ARO-HCP's frontend writes, as the backend's tests store them: clusters
// from internal/dev/frontend (the fixture of a freshly accepted cluster), re-identified to
// the resource ID a test needs, and Subscription documents. Nothing here adds a field the
// frontend does not write: the tenant is the subscription's, never the cluster's.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

// Tenant is the Entra tenant of the test subscriptions, as StoreSubscription stores it.
const Tenant = frontend.Tenant

// fixtureClusterName is the fixture FixtureCluster is built from, the one frontend.Cluster
// starts from.
const fixtureClusterName = "constructed/hcpcluster-accepted-fresh-no-clusterserviceid.json"

// ClusterFor is the cluster document the frontend writes for a PUT of rid with a
// vnet-integration subnet (frontend.ClusterOfKindAt): a SWIFT HA cluster, which costs 3
// swift NICs, its managed resource group named after the cluster.
func ClusterFor(t testing.TB, rid *api.ResourceID) *api.Cluster {
	t.Helper()
	c, err := frontend.ClusterOfKindAt(rid, "mrg-"+rid.Name(), frontend.Kind{Swift: true}, time.Now())
	require.NoError(t, err)
	return c
}

// FixtureCluster is the cluster in the exact shape of ARO-HCP's fixture of a freshly
// accepted cluster (its identity, managed resource group and every field), as the frontend
// writes it: with the identity URL of the PUT and no tenant.
func FixtureCluster(t testing.TB) *api.Cluster {
	t.Helper()
	fixture, err := api.Decode[api.ClusterProperties](arohcp.Get(fixtureClusterName))
	require.NoError(t, err)
	rid, err := fixture.ParsedResourceID()
	require.NoError(t, err)
	c, err := frontend.ClusterAt(rid, fixture.Properties.CustomerProperties.Platform.ManagedResourceGroup, false, time.Now())
	require.NoError(t, err)
	return c
}

// StoreSubscription stores the Subscription document the frontend keeps for
// subscriptionID, under tenant; an empty tenant stores properties.properties as null, as
// ARO-HCP has many. It returns the subscription's resource ID.
func StoreSubscription(t testing.TB, resources database.Container, subscriptionID, tenant string) *api.ResourceID {
	t.Helper()
	sub, err := frontend.Subscription(subscriptionID, tenant)
	require.NoError(t, err)
	_, err = database.Create(t.Context(), resources, sub)
	require.NoError(t, err)
	rid, err := sub.ParsedResourceID()
	require.NoError(t, err)
	return rid
}
