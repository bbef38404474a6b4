// Package clusterbody builds the Cluster Service (CS) cluster that ClusterServiceCreate
// POSTs for an ARO-HCP cluster: every field ARO-HCP's own create sends, taken from the
// cluster document, its ServiceProviderCluster and its subscription's tenant, plus the
// provision shard pin. docs/cluster-service-create.md lists each CS field with the
// Cosmos path it comes from and how it is transformed; a test holds that table and
// Mappings to each other.
package clusterbody
