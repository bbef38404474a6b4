package cosmos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// DefaultTryTimeout bounds one HTTP attempt of a Cosmos call. Point operations answer in
// milliseconds and the service ends a query page after 5 s of execution, handing back a
// continuation, so an attempt that has not answered in 10 s is stalled.
const DefaultTryTimeout = 10 * time.Second

// tryTimeoutPolicy gives each HTTP attempt its own deadline.
//
// It is not azcore's policy.RetryOptions.TryTimeout. In azcosmos v1.5.0 that deadline is
// the context of the SDK's own retry policy (clientRetryPolicy), which runs inside it:
// when it expires, clientRetryPolicy sees its caller's context done and returns the error
// as non-retriable, so a stalled read would fail after one try. This policy sits after
// clientRetryPolicy (a per-retry client option is appended after the SDK's), so an
// expired attempt reaches it as a transport deadline, which it treats as an ambiguous
// connection error:
//   - reads are retried, three times in the region and once in another, each after a
//     1 s pause (about 5 × the try timeout + 4 s in all);
//   - writes are not replayed, since the service may have applied them. The caller sees
//     the error and its controller retries from the cache: a Replace is If-Match guarded,
//     so if the first one was applied the retry answers 412, which controllers already
//     treat as a lost race, and a Create of a deterministic id answers 409. A retried
//     write therefore never applies twice.
//
// The metrics policy runs inside this one, so an attempt cut here is counted as an
// attempt without a response.
type tryTimeoutPolicy struct {
	timeout time.Duration
}

func (p tryTimeoutPolicy) Do(req *policy.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Raw().Context(), p.timeout)
	attempt := req.Clone(ctx)
	// Each attempt sends a body of its own. net/http may still be writing an abandoned
	// attempt's body after RoundTrip returned (it says so of RoundTrip), while the retry
	// policy rewinds the shared body for the next attempt: a data race, and a retry that
	// could send bytes the old attempt is still reading.
	if body := req.Body(); body != nil {
		b, err := io.ReadAll(body)
		if err == nil {
			_, err = body.Seek(0, io.SeekStart)
		}
		if err != nil {
			cancel()
			return nil, fmt.Errorf("copying the request body for this attempt: %w", err)
		}
		attempt.Raw().Body = io.NopCloser(bytes.NewReader(b))
		attempt.Raw().GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := attempt.Next()
	if err != nil {
		cancel()
		return nil, err
	}
	// azcore downloads the body before this returns unless a call asked not to; either
	// way, reading it is part of the attempt, so the deadline lasts until it is closed.
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
