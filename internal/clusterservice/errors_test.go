package clusterservice

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

func ptr[T any](v T) *T { return &v }

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		status int
		// call performs the operation against e and returns its error.
		call func(t *testing.T, e *env, shard string) error
		path func(shard string) string
	}{
		{
			name: "GET retried on 503", method: http.MethodGet, status: http.StatusServiceUnavailable,
			call: func(t *testing.T, e *env, shard string) error {
				_, err := e.client.GetProvisionShard(t.Context(), shard)
				return err
			},
			path: func(shard string) string { return ProvisionShardsPath + "/" + shard },
		},
		{
			name: "GET retried on 429", method: http.MethodGet, status: http.StatusTooManyRequests,
			call: func(t *testing.T, e *env, shard string) error {
				_, err := e.client.ListProvisionShards(t.Context())
				return err
			},
			path: func(string) string { return ProvisionShardsPath },
		},
		{
			name: "GET retried on 500", method: http.MethodGet, status: http.StatusInternalServerError,
			call: func(t *testing.T, e *env, shard string) error {
				_, err := e.client.GetProvisionShard(t.Context(), shard)
				return err
			},
			path: func(shard string) string { return ProvisionShardsPath + "/" + shard },
		},
		{
			name: "POST retried on 503", method: http.MethodPost, status: http.StatusServiceUnavailable,
			call: func(t *testing.T, e *env, shard string) error {
				_, err := e.client.CreatePinnedCluster(t.Context(), buildCluster(t, clusterBuilder(NewClusterID(), 1)), shard)
				return err
			},
			path: func(string) string { return ClustersPath },
		},
		{
			name: "POST retried on 429", method: http.MethodPost, status: http.StatusTooManyRequests,
			call: func(t *testing.T, e *env, shard string) error {
				_, err := e.client.CreatePinnedCluster(t.Context(), buildCluster(t, clusterBuilder(NewClusterID(), 1)), shard)
				return err
			},
			path: func(string) string { return ClustersPath },
		},
		{
			name: "PATCH retried on 503", method: http.MethodPatch, status: http.StatusServiceUnavailable,
			call: func(t *testing.T, e *env, shard string) error {
				_, err := e.client.ActivateProvisionShard(t.Context(), shard)
				return err
			},
			path: func(shard string) string { return ProvisionShardsPath + "/" + shard },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			shard := e.createShard(t, 1, false)
			e.fake.ResetRequests()
			_, err := e.fake.InjectFault(fakeclusterservice.Fault{Method: tt.method, PathPrefix: tt.path(shard), Status: tt.status, Count: 1})
			require.NoError(t, err)

			require.NoError(t, tt.call(t, e, shard))

			attempts := e.apiRequests(tt.method, tt.path(shard))
			require.Len(t, attempts, 2, "one failed attempt, one retry")
			assert.Equal(t, tt.status, attempts[0].Status)
			assert.NotEmpty(t, attempts[0].Fault)
			assert.Less(t, attempts[1].Status, 300)
			assert.Equal(t, attempts[0].Body, attempts[1].Body, "the retry resends the same body")
		})
	}
}

func TestNoRetryOfMutationsOn500(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shard := e.createShard(t, 1, true)
	_, err := e.fake.InjectFault(fakeclusterservice.Fault{Method: http.MethodPost, PathPrefix: ClustersPath, Status: http.StatusInternalServerError, Count: 1})
	require.NoError(t, err)

	_, err = e.client.CreatePinnedCluster(t.Context(), buildCluster(t, clusterBuilder(NewClusterID(), 1)), shard)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusInternalServerError, apiErr.Status)
	assert.Equal(t, "CLUSTERS-MGMT-500", apiErr.Code)
	assert.Len(t, e.apiRequests(http.MethodPost, ClustersPath), 1,
		"a 500 may mean CS did the work, so the SDK does not retry a POST; the caller retries with the same id")
}

// A body CS refuses comes back as the APIError carrying CS's reason, which names the
// field, after one POST: a 400 is final, so neither the SDK nor the client resends it.
func TestInvalidCreateIsRefusedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shard := e.createShard(t, 1, true)
	valid := buildCluster(t, clusterBuilder(NewClusterID(), 1))
	invalid := buildCluster(t, clusterBuilder(valid.ID(), 1).
		Azure(arohcp.NewAzure().Copy(valid.Azure()).SubnetResourceID("subnet-1")))

	_, err := e.client.CreatePinnedCluster(t.Context(), invalid, shard)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.Status)
	assert.Contains(t, apiErr.Reason, "'azure.subnet_resource_id'")
	assert.Len(t, e.apiRequests(http.MethodPost, ClustersPath), 1)
	onShard, err := e.fake.ClustersOnShard(shard)
	require.NoError(t, err)
	assert.Empty(t, onShard)
}

func TestRetriesGiveUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.RetryLimit = 2 })
	_, err := e.fake.InjectFault(fakeclusterservice.Fault{Method: http.MethodGet, Status: http.StatusServiceUnavailable})
	require.NoError(t, err)

	_, err = e.client.ListProvisionShards(t.Context())
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.Status)
	assert.Equal(t, []int{503, 503, 503}, statuses(e.apiRequests(http.MethodGet, ProvisionShardsPath)),
		"a limit of 2 retries means three attempts")
}

func TestDisableRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.DisableRetries = true })
	_, err := e.fake.InjectFault(fakeclusterservice.Fault{Status: http.StatusServiceUnavailable, Count: 1})
	require.NoError(t, err)
	_, err = e.client.ListProvisionShards(t.Context())
	require.Error(t, err)
	assert.Len(t, e.fake.Requests(), 1)
}

func TestErrorShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		fault        fakeclusterservice.Fault
		wantStatus   int
		wantNotFound bool
		wantConflict bool
		wantCode     string
		wantReason   string
		wantAPIError bool
	}{
		{
			name:  "404 in CS's shape",
			fault: fakeclusterservice.Fault{Status: http.StatusNotFound}, wantAPIError: true,
			wantStatus: 404, wantNotFound: true, wantCode: "CLUSTERS-MGMT-404",
		},
		{
			name:  "409 in CS's shape",
			fault: fakeclusterservice.Fault{Status: http.StatusConflict}, wantAPIError: true,
			wantStatus: 409, wantConflict: true, wantCode: "CLUSTERS-MGMT-409",
		},
		{
			name:  "400 in CS's shape",
			fault: fakeclusterservice.Fault{Status: http.StatusBadRequest}, wantAPIError: true,
			wantStatus: 400, wantCode: "CLUSTERS-MGMT-400",
		},
		{
			name: "custom error body",
			fault: fakeclusterservice.Fault{Status: http.StatusForbidden,
				Body: ptr(`{"kind":"Error","id":"403","href":"/api/aro_hcp/v1alpha1/errors/403","code":"CLUSTERS-MGMT-403","reason":"denied"}`)},
			wantAPIError: true, wantStatus: 403, wantCode: "CLUSTERS-MGMT-403", wantReason: "denied",
		},
		{
			name:         "error status with an empty body, which the SDK reports as success",
			fault:        fakeclusterservice.Fault{Status: http.StatusNotFound, Body: ptr("")},
			wantAPIError: true, wantStatus: 404, wantNotFound: true, wantReason: "empty response body",
		},
		{
			name:  "non-JSON content type",
			fault: fakeclusterservice.Fault{Status: http.StatusOK, Body: ptr("<html>proxy</html>"), ContentType: "text/html"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(c *Config) { c.DisableRetries = true })
			shard := e.createShard(t, 1, false)
			_, err := e.fake.InjectFault(tt.fault)
			require.NoError(t, err)

			_, err = e.client.GetProvisionShard(t.Context(), shard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "get provision shard "+shard, "errors carry their context")
			assert.Equal(t, tt.wantNotFound, errors.Is(err, ErrNotFound))
			assert.Equal(t, tt.wantConflict, errors.Is(err, ErrConflict))
			var apiErr *APIError
			if !tt.wantAPIError {
				assert.NotErrorAs(t, err, &apiErr)
				return
			}
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.wantStatus, apiErr.Status)
			assert.Equal(t, tt.wantCode, apiErr.Code)
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, apiErr.Reason)
			}
		})
	}
}

func TestLatencyFault(t *testing.T) {
	t.Parallel()

	t.Run("the request proceeds after the delay", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		shard := e.createShard(t, 1, false)
		_, err := e.fake.InjectFault(fakeclusterservice.Fault{Latency: 20 * time.Millisecond, Count: 1})
		require.NoError(t, err)
		start := time.Now()
		_, err = e.client.GetProvisionShard(t.Context(), shard)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	})

	t.Run("a deadline shorter than the delay fails the call", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *Config) { c.DisableRetries = true })
		shard := e.createShard(t, 1, false)
		_, err := e.fake.InjectFault(fakeclusterservice.Fault{Latency: time.Second, Count: 1})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		_, err = e.client.GetProvisionShard(ctx, shard)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}
