package versionsim_test

import (
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/versionsim"
)

func TestDesiredVersion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version *api.ClusterVersion
		want    string
		wantErr bool
	}{
		{name: "the fixture's cluster: stable, no X.Y", version: &api.ClusterVersion{ChannelGroup: "stable"}, want: "4.20.8"},
		{name: "no version at all", version: nil, want: "4.20.8"},
		{name: "no channel group means stable", version: &api.ClusterVersion{ID: "4.19"}, want: "4.19.18"},
		{name: "X.Y from the cluster", version: &api.ClusterVersion{ID: "4.21", ChannelGroup: "fast"}, want: "4.21.3"},
		{name: "X.Y.Z is read as its X.Y", version: &api.ClusterVersion{ID: "4.20.0", ChannelGroup: "candidate"}, want: "4.20.10"},
		{name: "nightly is not supported", version: &api.ClusterVersion{ID: "4.20", ChannelGroup: "nightly"}, wantErr: true},
		{name: "an unknown channel group", version: &api.ClusterVersion{ID: "4.20", ChannelGroup: "eus"}, wantErr: true},
		{name: "an X.Y the table does not hold", version: &api.ClusterVersion{ID: "4.99", ChannelGroup: "stable"}, wantErr: true},
		{name: "a malformed version.id", version: &api.ClusterVersion{ID: "latest", ChannelGroup: "stable"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := frontend.Cluster(1, false, time.Now())
			require.NoError(t, err)
			c.Properties.CustomerProperties.Version = tc.version
			got, err := versionsim.DesiredVersion(c, versionsim.DefaultMinor, versionsim.DefaultReleases())
			if tc.wantErr {
				assert.True(t, errors.Is(err, versionsim.ErrNoRelease), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestMinorOf(t *testing.T) {
	for in, want := range map[string]string{"4.20": "4.20", "4.20.8": "4.20", "v4.19": "4.19", "5.0.1": "5.0"} {
		got, err := versionsim.MinorOf(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "4", "4.", ".20", "4.x", "4.20.8.1", "4.-1", "04.20", "4.20.8-rc.1"} {
		_, err := versionsim.MinorOf(bad)
		assert.Error(t, err, bad)
	}
}

var minorPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func FuzzMinorOf(f *testing.F) {
	for _, seed := range []string{"4.20", "4.20.8", "v4.19", "", "4..1", "99999999999999999999.1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := versionsim.MinorOf(in)
		if err != nil {
			return
		}
		assert.Regexp(t, minorPattern, got)
		again, err := versionsim.MinorOf(got)
		require.NoError(t, err)
		assert.Equal(t, got, again, "X.Y is its own minor")
	})
}
