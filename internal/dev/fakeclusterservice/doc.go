// Package fakeclusterservice is an in-memory Cluster Service (CS) that speaks the wire format of the
// ARO-HCP API (/api/aro_hcp/v1alpha1) closely enough for the OCM SDK to talk to it unmodified.
//
// It exists because placement is only real if CS puts a cluster where hcpsched decided, and
// a Go interface mock cannot tell whether the bytes the SDK sends would be accepted by CS.
// So every request body is decoded, and every response body encoded, with the SDK's own
// generated Unmarshal*/Marshal* functions, and every CS rule hcpsched depends on is modelled:
//
//   - a cluster create is refused (400, naming the field) when it lacks a field CS requires
//     or holds a value CS refuses, at the first such field in a fixed order; README.md lists
//     the rules, their sources, and where the fake follows ARO-HCP's practice over the
//     model's documentation. ValidCluster builds a body in ARO-HCP's shape that passes;
//   - a create pinned with provision_shard_id lands on that shard whatever its status, because
//     CS skips capacity and status checks for pinned clusters; a pin to an unknown shard is a 400;
//   - an unpinned create lands on the next active shard in round-robin order, or stays
//     unplaced (empty provision_shard href) when no shard is active;
//   - immutable and read-only fields are refused (400) whenever they appear in a PATCH body,
//     because the SDK sends only changed fields, so their presence is a client bug;
//   - PATCH merges the given fields into the stored object;
//   - a duplicate cluster id, Azure identity or shard identity is a 409 (a duplicate Azure
//     identity is accepted when asked, so that a double create can be seen);
//   - a new shard starts in maintenance and is activated by a separate PATCH;
//   - an unknown or misspelled field is a 400 rather than being silently dropped, which the
//     SDK's generated unmarshalers would otherwise do;
//   - only the search expressions hcpsched's client sends are understood; any other is a 400,
//     so a client that drifts from them fails in tests instead of in production.
//
// Errors use CS's JSON error shape (kind, id, href, code, reason), because the SDK reports an
// error status with an empty body as success.
//
// For tests there is a Go API (Requests, InjectFault, ClustersOnShard, MoveCluster,
// MisplaceOnCreate, RejectCreate, AcceptDuplicateNames, Reset) and,
// for the standalone cmd/fake-cluster-service, most of them over HTTP under /_fake/.
//
// The package imports only the SDK's arohcp/v1alpha1 and errors packages, never the SDK root,
// so that the standalone fake stays quick to build and small; see
// ../../clusterservice/README.md.
package fakeclusterservice
