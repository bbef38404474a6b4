package clusterbody

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, desired, channelGroup string
		want                        string
		wantErr                     string
	}{
		{name: "stable", desired: "4.20.8", channelGroup: "stable", want: "openshift-v4.20.8"},
		{name: "no channel group is stable", desired: "4.20.8", want: "openshift-v4.20.8"},
		{name: "candidate", desired: "4.21.19", channelGroup: "candidate", want: "openshift-v4.21.19-candidate"},
		{name: "fast", desired: "4.20.8", channelGroup: "fast", want: "openshift-v4.20.8-fast"},
		{name: "pre-release in candidate", desired: "4.21.0-rc.1", channelGroup: "candidate", want: "openshift-v4.21.0-rc.1-candidate"},
		{name: "pre-release in stable", desired: "4.21.0-ec.2", channelGroup: "stable", want: "openshift-v4.21.0-ec.2"},
		{name: "nightly pre-release", desired: "4.22.0-0.nightly-multi-2025-11-07-082931", channelGroup: "nightly", want: "openshift-v4.22.0-0.nightly-multi-2025-11-07-082931-nightly"},
		{name: "zero patch", desired: "4.19.0", want: "openshift-v4.19.0"},

		{name: "empty", desired: "", wantErr: "no desired version"},
		{name: "bare X.Y", desired: "4.20", wantErr: "not a full version"},
		{name: "bare X", desired: "4", wantErr: "not a full version"},
		{name: "leading v", desired: "v4.20.8", wantErr: "not a full version"},
		{name: "already prefixed", desired: "openshift-v4.20.8", wantErr: "not a full version"},
		{name: "build metadata", desired: "4.20.8+build.1", wantErr: "not a full version"},
		{name: "leading zero", desired: "4.020.8", wantErr: "not a full version"},
		{name: "four parts", desired: "4.20.8.1", wantErr: "not a full version"},
		{name: "empty pre-release", desired: "4.20.8-", wantErr: "not a full version"},
		{name: "empty pre-release identifier", desired: "4.20.8-rc..1", wantErr: "not a full version"},
		{name: "whitespace", desired: " 4.20.8", wantErr: "not a full version"},
		{name: "letters", desired: "four.twenty.eight", wantErr: "not a full version"},
		{name: "channel group with a dash", desired: "4.20.8", channelGroup: "candidate-4.20", wantErr: "channel group"},
		{name: "channel group capitalised", desired: "4.20.8", channelGroup: "Stable", wantErr: "channel group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := VersionID(tt.desired, tt.channelGroup)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// csVersionID is the shape Cluster Service accepts: openshift-vX.Y.Z, an optional
// pre-release, an optional channel group.
var csVersionID = regexp.MustCompile(`^openshift-v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// Whatever a stored document holds, VersionID either refuses it or returns an ID of
// Cluster Service's shape that starts with the desired version itself.
func FuzzVersionID(f *testing.F) {
	for _, seed := range [][2]string{
		{"4.20.8", "stable"}, {"4.21.0-rc.1", "candidate"}, {"4.20", ""}, {"v4.20.8", "fast"},
		{"4.20.8+meta", "stable"}, {"", ""}, {"4.20.8", "Stable"}, {"1.2.3-a-b.c", "nightly"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, desired, channelGroup string) {
		id, err := VersionID(desired, channelGroup)
		if err != nil {
			assert.Empty(t, id)
			return
		}
		assert.Regexp(t, csVersionID, id)
		assert.Equal(t, VersionPrefix+desired, id[:len(VersionPrefix)+len(desired)])
	})
}
