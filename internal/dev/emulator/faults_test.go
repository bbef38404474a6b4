package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultEnv is an emulator of the test's own (faults and latency apply to every
// client of an emulator) with one container holding item "a" in partition "p".
type faultEnv struct {
	e    *Emulator
	c    *azcosmos.ContainerClient
	pk   azcosmos.PartitionKey
	docs string // the container's docs path, for Fault.PathPrefix
}

func newFaultEnv(t *testing.T, client func(*Emulator) *azcosmos.Client) faultEnv {
	t.Helper()
	e := StartForTest(t)
	db, c := newDatabaseAndContainer(t, client(e), containerSpec{})
	create(t, c, doc{ID: "a", PK: "p"})
	return faultEnv{e: e, c: c, pk: azcosmos.NewPartitionKeyString("p"), docs: "/dbs/" + db.ID() + "/colls/" + c.ID() + "/docs"}
}

func defaultClient(t *testing.T) func(*Emulator) *azcosmos.Client {
	return func(e *Emulator) *azcosmos.Client {
		client, err := e.NewClient()
		require.NoError(t, err)
		t.Cleanup(client.Close)
		return client
	}
}

// noRetryClient makes one attempt per operation, so every injected 429 is
// seen by the caller and client-side failures can be counted one to one with
// the requests the emulator answered.
func noRetryClient(t *testing.T) func(*Emulator) *azcosmos.Client {
	return func(e *Emulator) *azcosmos.Client {
		cred, err := azcosmos.NewKeyCredential(e.Key)
		require.NoError(t, err)
		client, err := azcosmos.NewClientWithKey(e.Endpoint, cred, &azcosmos.ClientOptions{
			ClientOptions: azcore.ClientOptions{
				Transport: newHTTPClient(nil),
				Retry:     policy.RetryOptions{MaxRetries: -1},
				Telemetry: policy.TelemetryOptions{Disabled: true},
			},
		})
		require.NoError(t, err)
		t.Cleanup(client.Close)
		return client
	}
}

func TestInjectedThrottling(t *testing.T) {
	env := newFaultEnv(t, defaultClient(t))
	e, c, pk, docs := env.e, env.c, env.pk, env.docs

	// Fewer 429s than the client's retries: the SDK waits and succeeds.
	_, err := e.InjectFault(ctxT(t), Fault{Status: http.StatusTooManyRequests, Count: 2, RetryAfter: 5 * time.Millisecond, Method: http.MethodGet, PathPrefix: docs})
	require.NoError(t, err)
	_, err = c.ReadItem(ctxT(t), pk, "a", nil)
	require.NoError(t, err)

	// More than it retries: the 429 surfaces.
	_, err = e.InjectFault(ctxT(t), Fault{Status: http.StatusTooManyRequests, Count: 10, RetryAfter: time.Millisecond, PathPrefix: docs})
	require.NoError(t, err)
	_, err = c.ReadItem(ctxT(t), pk, "a", nil)
	got := asCosmosError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, got.StatusCode)
	assert.Equal(t, "TooManyRequests", got.Code)

	require.NoError(t, e.ClearFaults(ctxT(t)))
	_, err = c.ReadItem(ctxT(t), pk, "a", nil)
	require.NoError(t, err)

	// Faults only hit matching requests.
	_, err = e.InjectFault(ctxT(t), Fault{Status: http.StatusServiceUnavailable, Count: 1, Method: http.MethodDelete})
	require.NoError(t, err)
	_, err = c.ReadItem(ctxT(t), pk, "a", nil)
	require.NoError(t, err)
	require.NoError(t, e.ClearFaults(ctxT(t)))
}

// readFailures reads item "a" n times and returns how many reads failed,
// requiring every failure to be the injected 429, charged nothing.
func readFailures(t *testing.T, env faultEnv, n int) int {
	t.Helper()
	failed := 0
	for i := 0; i < n; i++ {
		_, err := env.c.ReadItem(ctxT(t), env.pk, "a", nil)
		if err == nil {
			continue
		}
		failed++
		var respErr *azcore.ResponseError
		require.True(t, errors.As(err, &respErr), "read %d: %v", i, err)
		require.Equal(t, http.StatusTooManyRequests, respErr.StatusCode, "read %d", i)
		require.Equal(t, "0", respErr.RawResponse.Header.Get("x-ms-request-charge"), "a throttled request costs nothing")
	}
	return failed
}

func TestRateFaults(t *testing.T) {
	env := newFaultEnv(t, noRetryClient(t))
	ctx := ctxT(t)

	t.Run("rate 1 fails every matching request until removed", func(t *testing.T) {
		id, err := env.e.InjectFault(ctx, Fault{Status: http.StatusTooManyRequests, Rate: 1, Method: http.MethodGet, PathPrefix: env.docs})
		require.NoError(t, err)
		assert.Equal(t, 20, readFailures(t, env, 20))

		// A write does not match the GET-only fault.
		create(t, env.c, doc{ID: "b", PK: "p"})

		faults, err := env.e.Faults(ctx)
		require.NoError(t, err)
		require.Len(t, faults, 1, "a rate fault stays until removed")
		assert.Equal(t, FaultStatus{
			ID:    id,
			Fault: Fault{Status: http.StatusTooManyRequests, Rate: 1, Method: http.MethodGet, PathPrefix: env.docs},
			Hits:  20,
		}, faults[0])

		require.NoError(t, env.e.RemoveFault(ctx, id))
		assert.Zero(t, readFailures(t, env, 5))
	})

	t.Run("rate 0.3 fails some but not all", func(t *testing.T) {
		id, err := env.e.InjectFault(ctx, Fault{Status: http.StatusTooManyRequests, Rate: 0.3, PathPrefix: env.docs})
		require.NoError(t, err)
		failed := readFailures(t, env, 200)
		// Binomial(200, 0.3) has mean 60 and standard deviation 6.5; these
		// bounds are more than 6 deviations away.
		assert.GreaterOrEqual(t, failed, 20)
		assert.LessOrEqual(t, failed, 110)

		faults, err := env.e.Faults(ctx)
		require.NoError(t, err)
		require.Len(t, faults, 1)
		assert.Equal(t, id, faults[0].ID)
		assert.Equal(t, failed, faults[0].Hits, "one hit per failed request")
		require.NoError(t, env.e.RemoveFault(ctx, id))
	})

	t.Run("a rate fault with a count stops after count hits", func(t *testing.T) {
		_, err := env.e.InjectFault(ctx, Fault{Status: http.StatusTooManyRequests, Rate: 1, Count: 3, PathPrefix: env.docs})
		require.NoError(t, err)
		assert.Equal(t, 3, readFailures(t, env, 10))
		faults, err := env.e.Faults(ctx)
		require.NoError(t, err)
		assert.Empty(t, faults)
	})

	t.Run("latency without a status slows requests that then succeed", func(t *testing.T) {
		const latency = 40 * time.Millisecond
		id, err := env.e.InjectFault(ctx, Fault{Latency: latency, Rate: 1, Method: http.MethodGet, PathPrefix: env.docs})
		require.NoError(t, err)
		for i := 0; i < 3; i++ {
			start := time.Now()
			_, err := env.c.ReadItem(ctx, env.pk, "a", nil)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, time.Since(start), latency)
		}
		faults, err := env.e.Faults(ctx)
		require.NoError(t, err)
		require.Len(t, faults, 1)
		assert.Equal(t, 3, faults[0].Hits)
		assert.Equal(t, latency, faults[0].Latency)
		require.NoError(t, env.e.RemoveFault(ctx, id))
	})

	t.Run("latency with a status delays, then fails", func(t *testing.T) {
		const latency = 40 * time.Millisecond
		id, err := env.e.InjectFault(ctx, Fault{Status: http.StatusTooManyRequests, Latency: latency, Rate: 1, PathPrefix: env.docs})
		require.NoError(t, err)
		start := time.Now()
		assert.Equal(t, 1, readFailures(t, env, 1))
		assert.GreaterOrEqual(t, time.Since(start), latency)
		require.NoError(t, env.e.RemoveFault(ctx, id))
	})
}

// A 412 fault limited to requests with If-Match is a lost etag race: it hits
// conditional replaces, not reads, creates or unconditional writes.
func TestIfMatchOnlyFault(t *testing.T) {
	env := newFaultEnv(t, defaultClient(t))
	ctx := ctxT(t)
	e, c, pk := env.e, env.c, env.pk

	id, err := e.InjectFault(ctx, Fault{Status: http.StatusPreconditionFailed, Rate: 1, IfMatchOnly: true, PathPrefix: env.docs})
	require.NoError(t, err)

	read, err := c.ReadItem(ctx, pk, "a", nil)
	require.NoError(t, err, "reads carry no If-Match")
	_, err = c.CreateItem(ctx, pk, mustJSON(t, doc{ID: "b", PK: "p"}), nil)
	require.NoError(t, err, "creates carry no If-Match")
	_, err = c.ReplaceItem(ctx, pk, "b", mustJSON(t, doc{ID: "b", PK: "p", Value: 1}), nil)
	require.NoError(t, err, "an unconditional replace")

	etag := read.ETag
	conditional := &azcosmos.ItemOptions{IfMatchEtag: &etag}
	for i := 0; i < 3; i++ {
		_, err = c.ReplaceItem(ctx, pk, "a", mustJSON(t, doc{ID: "a", PK: "p", Value: 2}), conditional)
		got := asCosmosError(t, err)
		assert.Equal(t, http.StatusPreconditionFailed, got.StatusCode)
		assert.Equal(t, "PreconditionFailed", got.Code)
	}

	faults, err := e.Faults(ctx)
	require.NoError(t, err)
	require.Len(t, faults, 1)
	assert.Equal(t, 3, faults[0].Hits, "only the conditional replaces")
	assert.True(t, faults[0].IfMatchOnly)

	// Removing it by id lets the same conditional replace through: the etag
	// was current all along.
	require.NoError(t, e.RemoveFault(ctx, id))
	_, err = c.ReplaceItem(ctx, pk, "a", mustJSON(t, doc{ID: "a", PK: "p", Value: 2}), conditional)
	require.NoError(t, err)

	err = e.RemoveFault(ctx, id)
	assert.ErrorIs(t, err, ErrUnknownFault)
	faults, err = e.Faults(ctx)
	require.NoError(t, err)
	assert.Empty(t, faults)
}

func TestRemoveFaultKeepsOthers(t *testing.T) {
	env := newFaultEnv(t, defaultClient(t))
	ctx := ctxT(t)
	first, err := env.e.InjectFault(ctx, Fault{Status: http.StatusServiceUnavailable, Rate: 0.5, Method: http.MethodDelete})
	require.NoError(t, err)
	second, err := env.e.InjectFault(ctx, Fault{Status: http.StatusTooManyRequests, Count: 2, RetryAfter: 7 * time.Millisecond, Method: http.MethodPost})
	require.NoError(t, err)
	assert.NotEqual(t, first, second)

	require.NoError(t, env.e.RemoveFault(ctx, first))
	faults, err := env.e.Faults(ctx)
	require.NoError(t, err)
	assert.Equal(t, []FaultStatus{{
		ID:    second,
		Fault: Fault{Status: http.StatusTooManyRequests, Count: 2, RetryAfter: 7 * time.Millisecond, Method: http.MethodPost},
	}}, faults)

	// A count-based fault is gone once used up.
	require.NoError(t, env.e.ClearFaults(ctx))
	third, err := env.e.InjectFault(ctx, Fault{Status: http.StatusNotFound, Method: http.MethodGet, PathPrefix: env.docs})
	require.NoError(t, err)
	_, err = env.c.ReadItem(ctx, env.pk, "a", nil)
	assert.Equal(t, http.StatusNotFound, asCosmosError(t, err).StatusCode)
	assert.ErrorIs(t, env.e.RemoveFault(ctx, third), ErrUnknownFault)
}

func TestInvalidFaults(t *testing.T) {
	e := StartForTest(t)

	// Rejected by the harness before anything is sent.
	for name, f := range map[string]Fault{
		"no status and no latency": {},
		"status below 400":         {Status: http.StatusOK},
		"status above 599":         {Status: 600},
		"rate above 1":             {Status: http.StatusTooManyRequests, Rate: 1.5},
		"negative rate":            {Status: http.StatusTooManyRequests, Rate: -0.1},
		"negative count":           {Status: http.StatusTooManyRequests, Count: -1},
		"negative latency":         {Status: http.StatusTooManyRequests, Latency: -time.Millisecond},
		"negative retry-after":     {Status: http.StatusTooManyRequests, RetryAfter: -time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.InjectFault(ctxT(t), f)
			assert.Error(t, err)
		})
	}

	// And by the emulator, for clients other than this harness.
	for name, body := range map[string]string{
		"not an object":          `[1]`,
		"no status, no latency":  `{"rate":0.5}`,
		"status 0 alone":         `{"status":0}`,
		"status out of range":    `{"status":302}`,
		"rate 0":                 `{"status":429,"rate":0}`,
		"rate above 1":           `{"status":429,"rate":1.01}`,
		"rate as a string":       `{"status":429,"rate":"0.5"}`,
		"count 0":                `{"status":429,"count":0}`,
		"fractional latency":     `{"latencyMs":1.5}`,
		"ifMatchOnly not a bool": `{"status":412,"ifMatchOnly":"yes"}`,
		"unknown field":          `{"status":429,"latency":5}`,
	} {
		t.Run("emulator rejects "+name, func(t *testing.T) {
			resp := controlRequest(t, e, http.MethodPost, "faults", body)
			assert.Equal(t, http.StatusBadRequest, resp.status, "%s", resp.body)
		})
	}

	faults, err := e.Faults(ctxT(t))
	require.NoError(t, err)
	assert.Empty(t, faults)
}

type controlResponse struct {
	status int
	header http.Header
	body   []byte
}

// controlRequest calls an /_emulator endpoint over plain HTTP.
func controlRequest(t *testing.T, e *Emulator, method, path, body string) controlResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), method, e.Endpoint+"/_emulator/"+path, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return controlResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// The wire format of the control endpoints, for clients other than this
// harness (the chaos tooling may use curl).
func TestFaultControlEndpoints(t *testing.T) {
	e := StartForTest(t)

	created := controlRequest(t, e, http.MethodPost, "faults", `{"status":503,"rate":0.25,"latencyMs":5,"method":"get","path":"/dbs/x"}`)
	require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
	var fault map[string]any
	require.NoError(t, json.Unmarshal(created.body, &fault))
	id, ok := fault["id"].(string)
	require.True(t, ok, "POST answers the fault's id: %s", created.body)
	assert.Equal(t, map[string]any{
		"id": id, "status": 503.0, "rate": 0.25, "latencyMs": 5.0, "retryAfterMs": 0.0,
		"method": "GET", "path": "/dbs/x", "ifMatchOnly": false, "hits": 0.0,
	}, fault)
	assert.Equal(t, "0", created.header.Get("x-ms-request-charge"), "control requests cost nothing")

	one := controlRequest(t, e, http.MethodGet, "faults/"+id, "")
	require.Equal(t, http.StatusOK, one.status)
	assert.JSONEq(t, string(created.body), string(one.body))

	list := controlRequest(t, e, http.MethodGet, "faults", "")
	require.Equal(t, http.StatusOK, list.status)
	assert.JSONEq(t, `{"faults":[`+string(created.body)+`]}`, string(list.body))

	assert.Equal(t, http.StatusNoContent, controlRequest(t, e, http.MethodDelete, "faults/"+id, "").status)
	assert.Equal(t, http.StatusNotFound, controlRequest(t, e, http.MethodDelete, "faults/"+id, "").status)
	assert.Equal(t, http.StatusNoContent, controlRequest(t, e, http.MethodDelete, "faults", "").status)
	assert.Equal(t, http.StatusMethodNotAllowed, controlRequest(t, e, http.MethodPut, "faults", "{}").status)
	assert.Equal(t, http.StatusNotFound, controlRequest(t, e, http.MethodGet, "nothing", "").status)

	latency := controlRequest(t, e, http.MethodPut, "latency", `{"ms":7}`)
	require.Equal(t, http.StatusOK, latency.status, "%s", latency.body)
	assert.JSONEq(t, `{"ms":7}`, string(latency.body))
	assert.JSONEq(t, `{"ms":7}`, string(controlRequest(t, e, http.MethodGet, "latency", "").body))
	assert.Equal(t, http.StatusBadRequest, controlRequest(t, e, http.MethodPut, "latency", `{"ms":-1}`).status)
	assert.Equal(t, http.StatusBadRequest, controlRequest(t, e, http.MethodPut, "latency", `{"ms":"7"}`).status)
}

// Faults and latency apply to Cosmos requests, never to the control
// endpoints, so a test can always undo what it set up.
func TestControlEndpointsAreNeitherFaultedNorDelayed(t *testing.T) {
	env := newFaultEnv(t, defaultClient(t))
	ctx := ctxT(t) // 30 s: far less than the latency set below

	_, err := env.e.InjectFault(ctx, Fault{Status: http.StatusServiceUnavailable, Rate: 1})
	require.NoError(t, err)
	require.NoError(t, env.e.SetLatency(ctx, time.Hour))

	faults, err := env.e.Faults(ctx)
	require.NoError(t, err)
	assert.Len(t, faults, 1)
	got, err := env.e.Latency(ctx)
	require.NoError(t, err)
	assert.Equal(t, time.Hour, got)

	require.NoError(t, env.e.SetLatency(ctx, 0))
	require.NoError(t, env.e.ClearFaults(ctx))
	_, err = env.c.ReadItem(ctx, env.pk, "a", nil)
	require.NoError(t, err, "with the latency back at 0 a read answers within the context's 30 s")
}

func TestRuntimeLatency(t *testing.T) {
	const initial = 20 * time.Millisecond
	e := StartForTestWithOptions(t, Options{Latency: initial})
	client, err := e.NewClient()
	require.NoError(t, err)
	t.Cleanup(client.Close)
	c := newContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "a", PK: "p"})
	pk := azcosmos.NewPartitionKeyString("p")
	ctx := ctxT(t)

	got, err := e.Latency(ctx)
	require.NoError(t, err)
	assert.Equal(t, initial, got, "starts at Options.Latency")

	const latency = 80 * time.Millisecond
	require.NoError(t, e.SetLatency(ctx, latency))
	got, err = e.Latency(ctx)
	require.NoError(t, err)
	assert.Equal(t, latency, got)
	for _, read := range []func(context.Context) error{
		func(ctx context.Context) error { _, err := c.ReadItem(ctx, pk, "a", nil); return err },
		func(ctx context.Context) error {
			_, err := c.UpsertItem(ctx, pk, mustJSON(t, doc{ID: "a", PK: "p", Value: 1}), nil)
			return err
		},
	} {
		start := time.Now()
		require.NoError(t, read(ctx))
		assert.GreaterOrEqual(t, time.Since(start), latency)
	}

	require.NoError(t, e.SetLatency(ctx, 0))
	got, err = e.Latency(ctx)
	require.NoError(t, err)
	assert.Zero(t, got)
	_, err = c.ReadItem(ctx, pk, "a", nil)
	require.NoError(t, err)

	// Sub-millisecond latencies round up rather than vanish.
	require.NoError(t, e.SetLatency(ctx, 100*time.Microsecond))
	got, err = e.Latency(ctx)
	require.NoError(t, err)
	assert.Equal(t, time.Millisecond, got)
	assert.Error(t, e.SetLatency(ctx, -time.Millisecond))
}
