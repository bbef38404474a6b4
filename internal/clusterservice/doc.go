// Package clusterservice is hcpsched's client for Cluster Service (CS), the OCM service that
// provisions ARO-HCP hosted control planes onto management clusters.
//
// Placement is only real if CS puts the cluster where hcpsched decided, so the backend
// creates each cluster pinned to the chosen management cluster's provision shard
// (CreatePinnedCluster) and reads back where CS actually put it (GetClusterProvisionShard),
// and the fleet registers each management cluster as a provision shard
// (CreateProvisionShard, then ActivateProvisionShard). Controllers depend on the Clusters,
// ProvisionShards or Interface interfaces so their unit tests can substitute an
// implementation; this package's own tests run the real SDK over HTTP against the fake in
// ./fake.
//
// # Why the SDK's root package
//
// The client is built on the OCM SDK's Connection (github.com/openshift-online/ocm-sdk-go),
// not on the generated arohcp/v1alpha1 clients behind a hand-written RoundTripper. The
// Connection brings the behaviour CS clients are operated with: retries of every method on
// 429 and 503 and of GETs on other 5xx and dropped connections, OpenID bearer tokens with
// refresh and the client-credentials grant, Prometheus request metrics and a check that
// responses are JSON. Re-implementing those would make hcpsched the owner of a second,
// subtly different CS client. The cost is build time and binary size (measured in
// README.md for a tiny main: 60 s instead of 26 s of cold compile, 36 MB instead of 9.7 MB of
// binary), paid once per cold build cache and by the backend and fleet images, where it is
// immaterial. The fake, which the local stack builds often, imports only arohcp/v1alpha1
// and the SDK's errors package, and stays small.
//
// # Identifiers
//
// A CS cluster id is 32 lowercase base32 characters; the backend pre-assigns one with
// NewClusterID and records it as ClusterHREF(id). The fleet records shards as ShardHREF(id).
// ParseClusterHREF and ParseShardHREF reject anything else, wrapping ErrInvalidID.
//
// # Errors
//
// Every CS refusal is an *APIError carrying CS's status, code and reason; errors.Is matches
// it against ErrNotFound (404) and ErrConflict (409). Transport failures are returned as
// the SDK reports them. All errors are wrapped with the operation that failed.
package clusterservice
