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

// connectionTimeouts sets the connection-level timeouts that the OCM SDK leaves at zero
// on the *http.Transport it builds (none: a handshake or a response that never comes
// waits as long as the request's context allows, and idle connections are kept for
// ever). Transport wrappers are the SDK's only hook into its transport; ours is the
// innermost one, so it sees the *http.Transport itself, before any request is sent.
// An h2c transport is another type and is left as it is: the request deadline covers it.
func connectionTimeouts(timeout time.Duration) func(http.RoundTripper) http.RoundTripper {
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
		return t
	}
}
