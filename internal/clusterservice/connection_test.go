package clusterservice

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// testJWT returns an unsigned JWT: the SDK parses access tokens without verifying them, to
// learn their type and expiry, and sends them as they are.
func testJWT(t *testing.T, subject string) string {
	t.Helper()
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	claims, err := json.Marshal(map[string]any{
		"typ": "Bearer",
		"sub": subject,
		"exp": time.Now().Add(time.Hour).Unix(),
	})
	require.NoError(t, err)
	return header + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString([]byte("unsigned"))
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	token := testJWT(t, "backend")
	e := newEnv(t, func(c *Config) { c.Token = token })
	_, err := e.client.ListProvisionShards(t.Context())
	require.NoError(t, err)
	reqs := e.fake.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Bearer "+token, reqs[0].Header.Get("Authorization"))
}

func TestClientCredentials(t *testing.T) {
	t.Parallel()
	token := testJWT(t, "fleet")
	var grants atomic.Int32
	tokenServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || !ok || user != "fleet" || pass != "s3cret" ||
			r.PostForm.Get("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		grants.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"access_token": token, "token_type": "Bearer", "expires_in": 3600,
		})
	}))
	t.Cleanup(tokenServer.Close)

	e := newEnv(t, func(c *Config) {
		c.ClientID, c.ClientSecret, c.TokenURL = "fleet", "s3cret", tokenServer.URL
	})
	_, err := e.client.ListProvisionShards(t.Context())
	require.NoError(t, err)
	_, err = e.client.ListProvisionShards(t.Context())
	require.NoError(t, err)

	reqs := e.fake.Requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, "Bearer "+token, r.Header.Get("Authorization"))
	}
	assert.Equal(t, int32(1), grants.Load(), "the token is reused until it expires")
}

func TestNewRefusesUnsafeConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no URL", Config{}},
		{"opaque token, which the SDK would try to refresh", Config{URL: "http://127.0.0.1:1", Token: "opaque"}},
		{"client credentials without a token URL", Config{URL: "http://127.0.0.1:1", ClientID: "a", ClientSecret: "b"}},
		{"client id without secret", Config{URL: "http://127.0.0.1:1", ClientID: "a", TokenURL: "http://127.0.0.1:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(t.Context(), tt.cfg)
			require.Error(t, err)
		})
	}
}

func TestInsecureOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	f := fakeclusterservice.New()
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)

	tests := []struct {
		name     string
		insecure bool
		wantErr  bool
	}{
		{"verification on by default", false, true},
		{"verification off by flag", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(t.Context(), Config{URL: srv.URL, Insecure: tt.insecure, DisableRetries: true, Logger: discardLogger()})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			_, err = c.ListProvisionShards(t.Context())
			if tt.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "certificate")
				return
			}
			require.NoError(t, err)
		})
	}
}

// The request metrics have one name in every binary, and the code label the
// dashboard's and runbooks' error queries select on. Without a registerer nothing is
// exported, not even to the global registry.
func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e := newEnv(t, func(c *Config) { c.MetricsRegisterer = reg })
	_, err := e.client.ListProvisionShards(t.Context())
	require.NoError(t, err)
	quiet := newEnv(t, func(c *Config) { c.MetricsRegisterer = nil })
	_, err = quiet.client.ListProvisionShards(t.Context())
	require.NoError(t, err)

	families, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			assert.Equal(t, "200", labels["code"], f.GetName())
			assert.Equal(t, http.MethodGet, labels["method"], f.GetName())
		}
	}
	assert.Equal(t, []string{RequestCountMetric, RequestDurationMetric}, names)
	assert.Equal(t, "hcpsched_cluster_service_request_count", RequestCountMetric, "the name the dashboard and the runbooks query")

	global, err := prometheus.DefaultGatherer.Gather()
	require.NoError(t, err)
	for _, f := range global {
		assert.False(t, strings.HasPrefix(f.GetName(), MetricsSubsystem), "%s exported without a registerer", f.GetName())
	}
}

func TestAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Agent = "hcpsched/test" })
	_, err := e.client.ListProvisionShards(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "hcpsched/test", e.fake.Requests()[0].Header.Get("User-Agent"))
}
