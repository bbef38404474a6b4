package versionsim

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/hcpsched/hcpsched/internal/api"
)

// DefaultMinor is the X.Y of a cluster whose customerProperties.version.id is empty, as
// the fixtures' clusters are.
const DefaultMinor = "4.20"

// StableChannelGroup is the channel group of a cluster that names none: ARO-HCP's
// frontend defaults customerProperties.version.channelGroup to it.
const StableChannelGroup = "stable"

// nightlyChannelGroup is a channel group ARO-HCP's version controller refuses.
const nightlyChannelGroup = "nightly"

// ErrNoRelease says that the simulator has no version to offer a cluster; ARO-HCP's
// controller then records IntentFailed and writes nothing, and so does the simulator.
var ErrNoRelease = errors.New("no release to choose")

// Releases stands in for Cincinnati, the OpenShift update service ARO-HCP's
// ControlPlaneDesiredVersion controller asks: for each channel group, the z-stream it
// picks in each X.Y. Upstream takes the tip of the channel <group>-<X.Y> less a
// per-group offset; the table holds the outcome directly. Its numbers are invented:
// they only need to form a version Cluster Service accepts.
type Releases map[string]map[string]int

// DefaultReleases is the simulator's table; stable 4.20 gives 4.20.8, the version the
// research notes show ARO-HCP creating. nightly has no entry: ARO-HCP does not support it.
func DefaultReleases() Releases {
	return Releases{
		"stable":    {"4.18": 24, "4.19": 18, "4.20": 8, "4.21": 2},
		"fast":      {"4.18": 25, "4.19": 19, "4.20": 9, "4.21": 3},
		"candidate": {"4.18": 26, "4.19": 20, "4.20": 10, "4.21": 4, "4.22": 0},
	}
}

// clone copies r so that a caller's later changes do not reach a running simulator.
func (r Releases) clone() Releases {
	out := make(Releases, len(r))
	for group, minors := range r {
		out[group] = maps.Clone(minors)
	}
	return out
}

// DesiredVersion is the X.Y.Z the simulator writes for a cluster: X.Y from
// customerProperties.version.id (X.Y or X.Y.Z), defaultMinor when that is empty, and Z
// from releases for the cluster's channel group. An error wrapping ErrNoRelease says no
// version can be chosen: a nightly or unknown channel group, a malformed version.id, or
// an X.Y the table does not hold.
func DesiredVersion(cluster *api.Cluster, defaultMinor string, releases Releases) (string, error) {
	group, id := StableChannelGroup, ""
	if cp := cluster.Properties.CustomerProperties; cp != nil && cp.Version != nil {
		id = cp.Version.ID
		if cp.Version.ChannelGroup != "" {
			group = cp.Version.ChannelGroup
		}
	}
	if strings.EqualFold(group, nightlyChannelGroup) {
		return "", fmt.Errorf("%w: the %s channel group is not supported, as in ARO-HCP", ErrNoRelease, nightlyChannelGroup)
	}
	minors, ok := releases[group]
	if !ok {
		return "", fmt.Errorf("%w: unknown channel group %q", ErrNoRelease, group)
	}
	if id == "" {
		id = defaultMinor
	}
	minor, err := MinorOf(id)
	if err != nil {
		return "", fmt.Errorf("%w: customerProperties.version.id: %w", ErrNoRelease, err)
	}
	z, ok := minors[minor]
	if !ok {
		return "", fmt.Errorf("%w: no %s release in the %s channel group", ErrNoRelease, minor, group)
	}
	return fmt.Sprintf("%s.%d", minor, z), nil
}

// MinorOf is the X.Y of a version given as X.Y or X.Y.Z, as ARO-HCP reads
// customerProperties.version.id tolerantly.
func MinorOf(version string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", fmt.Errorf("%q is not X.Y or X.Y.Z", version)
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strconv.Itoa(n) != p {
			return "", fmt.Errorf("%q is not X.Y or X.Y.Z", version)
		}
		nums[i] = n
	}
	return fmt.Sprintf("%d.%d", nums[0], nums[1]), nil
}
