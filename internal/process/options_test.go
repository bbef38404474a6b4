package process

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewOptionsDefaults(t *testing.T) {
	o := NewOptions("fleet")
	assert.Equal(t, "fleet", o.Component)
	assert.Equal(t, ":8080", o.MetricsAddress)
	assert.Equal(t, ":8081", o.HealthAddress)
	assert.Equal(t, slog.LevelInfo, o.LogLevel)
	assert.True(t, o.LeaderElect)
	assert.Equal(t, "hcpsched-fleet", o.LeaderElectionLeaseName)
	assert.NotEmpty(t, o.LeaderElectionIdentity, "defaults to the host name")
	assert.Equal(t, 15*time.Second, o.LeaderElectionLeaseDuration)
	assert.Equal(t, 10*time.Second, o.LeaderElectionRenewDeadline)
	assert.Equal(t, 2*time.Second, o.LeaderElectionRetryPeriod)
	assert.Equal(t, 30*time.Second, o.ShutdownTimeout)
	assert.NoError(t, o.Validate())
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		modify  func(o *Options)
		wantErr []string
	}{
		{name: "defaults", modify: func(*Options) {}},
		{name: "no leader election ignores its settings", modify: func(o *Options) {
			o.LeaderElect = false
			o.LeaderElectionIdentity = ""
			o.LeaderElectionLeaseDuration = 0
		}},
		{name: "empty addresses", modify: func(o *Options) { o.MetricsAddress, o.HealthAddress = "", "" },
			wantErr: []string{"--metrics-address", "--health-address"}},
		{name: "zero shutdown timeout", modify: func(o *Options) { o.ShutdownTimeout = 0 },
			wantErr: []string{"--shutdown-timeout"}},
		{name: "lease not longer than renew deadline", modify: func(o *Options) { o.LeaderElectionLeaseDuration = o.LeaderElectionRenewDeadline },
			wantErr: []string{"--leader-election-lease-duration (10s) must be greater than --leader-election-renew-deadline (10s)"}},
		{name: "renew deadline too close to retry period", modify: func(o *Options) { o.LeaderElectionRetryPeriod = 9 * time.Second },
			wantErr: []string{"--leader-election-renew-deadline"}},
		{name: "sub-second lease", modify: func(o *Options) {
			o.LeaderElectionLeaseDuration, o.LeaderElectionRenewDeadline, o.LeaderElectionRetryPeriod = 900*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond
		}, wantErr: []string{"at least 1s"}},
		{name: "leader election ignores the shard settings", modify: func(o *Options) {
			o.Sharding.Shards, o.Sharding.LeaseContainer = -1, ""
		}},
		{name: "leaderless without shards ignores their timing", modify: func(o *Options) {
			o.LeaderElect, o.Sharding.Shards, o.Sharding.LeaseDuration = false, 0, 0
		}},
		{name: "leaderless shard count out of range", modify: func(o *Options) { o.LeaderElect, o.Sharding.Shards = false, 100 },
			wantErr: []string{"--shards must be between 0 and 99, got 100"}},
		{name: "leaderless shard timing", modify: func(o *Options) {
			o.LeaderElect = false
			o.Sharding.LeaseContainer = ""
			o.Sharding.LeaseDuration, o.Sharding.RenewDeadline, o.Sharding.RetryPeriod = 5*time.Second, 5*time.Second, 6*time.Second
		}, wantErr: []string{"--shard-lease-container", "--shard-renew-deadline (5s) must be greater than --shard-retry-period (6s)",
			"--shard-lease-duration (5s) must be greater than --shard-renew-deadline (5s)"}},
		{name: "missing identity and lease name", modify: func(o *Options) { o.LeaderElectionIdentity, o.LeaderElectionLeaseName = "", "" },
			wantErr: []string{"--leader-election-identity", "--leader-election-lease-name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions("test")
			o.LeaderElectionIdentity = "pod-0"
			tt.modify(&o)
			err := o.Validate()
			if len(tt.wantErr) == 0 {
				require.NoError(t, err)
				return
			}
			for _, want := range tt.wantErr {
				assert.ErrorContains(t, err, want)
			}
		})
	}
}

func TestShardedAndShardConfig(t *testing.T) {
	o := NewOptions("backend")
	o.LeaderElectionIdentity = "pod-0"
	assert.False(t, o.Sharded(), "with leader election one replica works every key")
	o.LeaderElect = false
	require.True(t, o.Sharded(), "leaderless mode shards by default")
	a, b := o.ShardConfig(), o.ShardConfig()
	assert.Equal(t, "backend", a.Group)
	assert.Equal(t, 16, a.Shards)
	assert.Regexp(t, `^pod-0-[0-9a-f]{8}$`, a.Identity)
	assert.NotEqual(t, a.Identity, b.Identity, "two processes on one host get different identities")
	o.Sharding.Shards = 0
	assert.False(t, o.Sharded(), "--shards=0 turns sharding off")
}

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{in: "debug", want: slog.LevelDebug},
		{in: "INFO", want: slog.LevelInfo},
		{in: "warn", want: slog.LevelWarn},
		{in: "warning", want: slog.LevelWarn},
		{in: " error ", want: slog.LevelError},
		{in: "info+2", wantErr: true},
		{in: "trace", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseLevel(tt.in)
		if tt.wantErr {
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	opts := testOptions()
	opts.ShutdownTimeout = -time.Second
	_, err := New(opts, nil, nil)
	assert.ErrorContains(t, err, "--shutdown-timeout")
}

func TestLeaderElectionNeedsNamespaceOutsideAPod(t *testing.T) {
	opts := testOptions()
	opts.LeaderElect = true
	opts.LeaderElectionIdentity = "pod-0"
	opts.KubeClient = newFakeClient()
	_, err := New(opts, newRegistry(), testLogger(t))
	if fileExists(serviceAccountNamespaceFile) {
		t.Skip("running in a pod: the namespace is known")
	}
	assert.ErrorContains(t, err, "--leader-election-namespace is required")
}
