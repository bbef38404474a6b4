package clusterservice

import (
	"context"
	"net/http"
	"time"
)

// DefaultTimeout bounds one request to Cluster Service, its token request and the SDK's
// retries included. CS answers reads at once and a create after validating and storing
// the cluster, in seconds; 30 s leaves room for a slow CS while still freeing a worker
// that waits on a hung one.
//
// A create cut by the deadline may still have been applied by CS. Retrying it is safe:
// the cluster carries its pre-assigned id, so a second create answers 409 (ErrConflict)
// instead of making a second cluster, and ClusterServiceCreate's next pass adopts the one
// CS has. The SDK itself never replays a POST that failed in transit.
const DefaultTimeout = 30 * time.Second

// withTimeout gives one request its deadline; the caller's own deadline still applies if
// it is sooner.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// MaxIdleConnections is how many idle connections to Cluster Service the client keeps
// for reuse. The OCM SDK's transport leaves it at net/http's default of 2, while the
// backend's controllers that call Cluster Service have 65 workers by default
// (ClusterServiceCreate's, ManagementClusterPlacementSync's and Placement's 20 each,
// adoption's 5). Over HTTP/1.1 every call in flight beyond the second closed its
// connection when it ended, and the next call dialled a new one (and, against the real
// CS, shook hands again). In `scenario bench` that was about 1.5 dials per cluster and
// 3% of the backend's CPU.
const MaxIdleConnections = 64

// tuneTransport sets what the OCM SDK leaves at zero on the *http.Transport it builds:
// the connection-level timeouts (none: a handshake or a response that never comes waits
// as long as the request's context allows, and idle connections are kept for ever) and
// the idle pool (MaxIdleConnections). Transport wrappers are the SDK's only hook into its
// transport; ours is the innermost one, so it sees the *http.Transport itself, before
// any request is sent. An h2c transport is another type and is left as it is: the
// request deadline covers it, and HTTP/2 carries concurrent calls on one connection.
func tuneTransport(timeout time.Duration) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		t, ok := rt.(*http.Transport)
		if !ok {
			return rt
		}
		defaults, _ := http.DefaultTransport.(*http.Transport)
		if defaults != nil {
			// The standard library's own choices for these, rather than copies of them.
			t.TLSHandshakeTimeout = defaults.TLSHandshakeTimeout
			t.IdleConnTimeout = defaults.IdleConnTimeout
			t.ExpectContinueTimeout = defaults.ExpectContinueTimeout
		}
		t.ResponseHeaderTimeout = timeout
		t.MaxIdleConns = MaxIdleConnections
		t.MaxIdleConnsPerHost = MaxIdleConnections
		return t
	}
}
