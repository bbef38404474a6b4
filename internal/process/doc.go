// Package process is the shell both hcpsched binaries run in: flags with environment
// variable equivalents, JSON logging (klog included), /metrics, /healthz and /readyz,
// leader election on a coordination.k8s.io Lease, and graceful shutdown.
//
// The lifecycle is fixed so that the binaries cannot get it wrong:
//
//  1. the HTTP servers start; /healthz answers 200, /readyz 503;
//  2. App.StartCaches runs on every replica, leader or not, so a standby is warm;
//  3. App.WaitForCacheSync blocks until the caches are synced; /readyz turns 200;
//  4. the replica campaigns for the lease; the leader runs App.RunControllers;
//  5. on SIGTERM/SIGINT (or when the caller's context ends) the controllers are
//     cancelled and drained, then the lease is released, the caches stopped and the
//     servers shut down, all within the shutdown timeout.
//
// Losing the lease stops the controllers and makes Run return ErrLeadershipLost: the
// binary exits non-zero and its successor process re-syncs its caches from scratch,
// rather than this one carrying on with state built while it was the leader.
package process
