package process

import (
	"flag"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnvName(t *testing.T) {
	tests := map[string]string{
		"metrics-address":                "HCPSCHED_METRICS_ADDRESS",
		"leader-election-lease-duration": "HCPSCHED_LEADER_ELECTION_LEASE_DURATION",
		"kubeconfig":                     "HCPSCHED_KUBECONFIG",
		"cosmos.endpoint":                "HCPSCHED_COSMOS_ENDPOINT",
	}
	for name, want := range tests {
		assert.Equal(t, want, EnvName(name), name)
	}
}

func mapEnv(env map[string]string) LookupEnvFunc {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

func TestParseWithEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(t *testing.T, o Options, extra string)
		wantErr []string
	}{
		{
			name: "defaults without flags or environment",
			check: func(t *testing.T, o Options, extra string) {
				assert.Equal(t, DefaultMetricsAddress, o.MetricsAddress)
				assert.Equal(t, DefaultLogLevel, o.LogLevel)
				assert.True(t, o.LeaderElect)
				assert.Equal(t, "default", extra)
			},
		},
		{
			name: "environment sets flags",
			env: map[string]string{
				"HCPSCHED_METRICS_ADDRESS":                "127.0.0.1:9000",
				"HCPSCHED_LOG_LEVEL":                      "debug",
				"HCPSCHED_LEADER_ELECT":                   "false",
				"HCPSCHED_LEADER_ELECTION_LEASE_DURATION": "1m",
				"HCPSCHED_EXTRA_SETTING":                  "from-env",
			},
			check: func(t *testing.T, o Options, extra string) {
				assert.Equal(t, "127.0.0.1:9000", o.MetricsAddress)
				assert.Equal(t, slog.LevelDebug, o.LogLevel)
				assert.False(t, o.LeaderElect)
				assert.Equal(t, time.Minute, o.LeaderElectionLeaseDuration)
				assert.Equal(t, "from-env", extra, "flags the binary adds are bound too")
			},
		},
		{
			name: "command line wins over environment",
			args: []string{"--metrics-address=:9100", "--leader-elect=true", "--log-level", "error"},
			env: map[string]string{
				"HCPSCHED_METRICS_ADDRESS": ":9000",
				"HCPSCHED_LEADER_ELECT":    "false",
				"HCPSCHED_LOG_LEVEL":       "debug",
				"HCPSCHED_HEALTH_ADDRESS":  ":9001",
			},
			check: func(t *testing.T, o Options, _ string) {
				assert.Equal(t, ":9100", o.MetricsAddress)
				assert.True(t, o.LeaderElect)
				assert.Equal(t, slog.LevelError, o.LogLevel)
				assert.Equal(t, ":9001", o.HealthAddress, "the environment still fills the other flags")
			},
		},
		{
			name: "empty variables are ignored",
			env:  map[string]string{"HCPSCHED_LEADER_ELECT": "", "HCPSCHED_SHUTDOWN_TIMEOUT": ""},
			check: func(t *testing.T, o Options, _ string) {
				assert.True(t, o.LeaderElect)
				assert.Equal(t, DefaultShutdownTimeout, o.ShutdownTimeout)
			},
		},
		{
			name:    "a bad value names its variable",
			env:     map[string]string{"HCPSCHED_SHUTDOWN_TIMEOUT": "soon"},
			wantErr: []string{"HCPSCHED_SHUTDOWN_TIMEOUT", "--shutdown-timeout"},
		},
		{
			name:    "every bad value is reported",
			env:     map[string]string{"HCPSCHED_LEADER_ELECT": "maybe", "HCPSCHED_LOG_LEVEL": "verbose"},
			wantErr: []string{"HCPSCHED_LEADER_ELECT", "HCPSCHED_LOG_LEVEL", "unknown log level"},
		},
		{
			name: "a bad value overridden on the command line is not an error",
			args: []string{"--shutdown-timeout=10s"},
			env:  map[string]string{"HCPSCHED_SHUTDOWN_TIMEOUT": "soon"},
			check: func(t *testing.T, o Options, _ string) {
				assert.Equal(t, 10*time.Second, o.ShutdownTimeout)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			opts := NewOptions("test")
			opts.AddFlags(fs)
			extra := fs.String("extra-setting", "default", "A flag the binary adds.")

			err := Parse(fs, tt.args, mapEnv(tt.env))
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, want := range tt.wantErr {
					assert.ErrorContains(t, err, want)
				}
				return
			}
			require.NoError(t, err)
			tt.check(t, opts, *extra)
		})
	}
}

func TestDescribe(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	opts := NewOptions("backend")
	opts.LeaderElectionIdentity = "pod-0" // the host name would make the test machine-dependent
	opts.AddFlags(fs)

	docs := Describe(fs)
	byFlag := map[string]FlagDoc{}
	var order []string
	for _, d := range docs {
		byFlag[d.Flag] = d
		order = append(order, d.Flag)
	}
	assert.IsNonDecreasing(t, order, "flags are listed in name order")
	assert.Len(t, docs, 18)

	tests := []FlagDoc{
		{Flag: "--metrics-address", Env: "HCPSCHED_METRICS_ADDRESS", Type: "string", Default: ":8080"},
		{Flag: "--health-address", Env: "HCPSCHED_HEALTH_ADDRESS", Type: "string", Default: ":8081"},
		{Flag: "--log-level", Env: "HCPSCHED_LOG_LEVEL", Type: "level", Default: "info"},
		{Flag: "--profiling", Env: "HCPSCHED_PROFILING", Type: "bool", Default: "false"},
		{Flag: "--leader-elect", Env: "HCPSCHED_LEADER_ELECT", Type: "bool", Default: "true"},
		{Flag: "--leader-election-namespace", Env: "HCPSCHED_LEADER_ELECTION_NAMESPACE", Type: "string", Default: ""},
		{Flag: "--leader-election-lease-name", Env: "HCPSCHED_LEADER_ELECTION_LEASE_NAME", Type: "string", Default: "hcpsched-backend"},
		{Flag: "--leader-election-identity", Env: "HCPSCHED_LEADER_ELECTION_IDENTITY", Type: "string", Default: "pod-0"},
		{Flag: "--leader-election-lease-duration", Env: "HCPSCHED_LEADER_ELECTION_LEASE_DURATION", Type: "duration", Default: "15s"},
		{Flag: "--leader-election-renew-deadline", Env: "HCPSCHED_LEADER_ELECTION_RENEW_DEADLINE", Type: "duration", Default: "10s"},
		{Flag: "--leader-election-retry-period", Env: "HCPSCHED_LEADER_ELECTION_RETRY_PERIOD", Type: "duration", Default: "2s"},
		{Flag: "--kubeconfig", Env: "HCPSCHED_KUBECONFIG", Type: "string", Default: ""},
		{Flag: "--shutdown-timeout", Env: "HCPSCHED_SHUTDOWN_TIMEOUT", Type: "duration", Default: "30s"},
		{Flag: "--shards", Env: "HCPSCHED_SHARDS", Type: "int", Default: "16"},
		{Flag: "--shard-lease-container", Env: "HCPSCHED_SHARD_LEASE_CONTAINER", Type: "string", Default: "hcpschedLeases"},
		{Flag: "--shard-lease-duration", Env: "HCPSCHED_SHARD_LEASE_DURATION", Type: "duration", Default: "15s"},
		{Flag: "--shard-renew-deadline", Env: "HCPSCHED_SHARD_RENEW_DEADLINE", Type: "duration", Default: "10s"},
		{Flag: "--shard-retry-period", Env: "HCPSCHED_SHARD_RETRY_PERIOD", Type: "duration", Default: "2s"},
	}
	for _, want := range tests {
		got, ok := byFlag[want.Flag]
		if !assert.True(t, ok, "missing %s", want.Flag) {
			continue
		}
		assert.NotEmpty(t, got.Usage, want.Flag)
		got.Usage = ""
		assert.Equal(t, want, got)
	}
	assert.Equal(t, "Minimum level logged: debug, info, warn or error.", byFlag["--log-level"].Usage)
}
