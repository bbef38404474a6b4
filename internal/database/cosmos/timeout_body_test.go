package cosmos

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lingeringTransport answers the first attempt with a 503 at once but, like net/http
// when a caller gives up on an attempt, goes on reading that attempt's body afterwards.
type lingeringTransport struct {
	mu       sync.Mutex
	attempts int
	bodies   []string
	lingered sync.WaitGroup
}

func (t *lingeringTransport) Do(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.attempts++
	first := t.attempts == 1
	t.mu.Unlock()
	if first {
		body := req.Body
		t.lingered.Go(func() { _, _ = io.Copy(io.Discard, body) })
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.bodies = append(t.bodies, string(b))
	t.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

// A retried attempt never shares its body with the abandoned one: under -race, the
// retry policy's rewind of a shared body races the old attempt's reader (seen in make
// chaos), and the retry must still send the whole body.
func TestEachAttemptSendsABodyOfItsOwn(t *testing.T) {
	transport := &lingeringTransport{}
	pl := runtime.NewPipeline("test", "v0", runtime.PipelineOptions{PerRetry: []policy.Policy{tryTimeoutPolicy{timeout: time.Second}}},
		&policy.ClientOptions{Transport: transport, Retry: policy.RetryOptions{MaxRetries: 1, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond}})
	req, err := runtime.NewRequest(context.Background(), http.MethodPost, "http://127.0.0.1:1/dbs/hcp/colls/c/docs")
	require.NoError(t, err)
	const body = `{"query":"SELECT * FROM c"}`
	require.NoError(t, req.SetBody(streaming.NopCloser(bytes.NewReader([]byte(body))), "application/query+json"))

	resp, err := pl.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	transport.lingered.Wait()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{body}, transport.bodies, "the retry sent the whole body")
}
