package clusterbody

import (
	"fmt"
	"regexp"
)

// VersionPrefix starts every Cluster Service OpenShift version ID.
const VersionPrefix = "openshift-v"

// DefaultChannelGroup is the channel group of a cluster whose document names none, and
// the one whose version IDs carry no channel suffix.
const DefaultChannelGroup = "stable"

var (
	// desiredVersionPattern is a full semantic version X.Y.Z with an optional
	// pre-release, as ARO-HCP's version controller stores it (a blang semver rendered as a
	// string). Numeric parts have no leading zeros, as semver requires. Build metadata is
	// not allowed: a Cluster Service version ID has no place for it.
	desiredVersionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	// channelGroupPattern: a channel group becomes a version ID suffix, so it must be
	// one word (stable, fast, candidate, nightly).
	channelGroupPattern = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

// VersionID is the Cluster Service version ID of a control plane at desired (the SPC's
// spec.control_plane_version.desired_version) in channelGroup (the cluster's
// customerProperties.version.channelGroup): "openshift-v" + X.Y.Z, then the pre-release
// if any, then "-<channel group>" unless the group is stable or empty. So 4.20.8 in
// stable is openshift-v4.20.8 and 4.21.0-rc.1 in candidate is
// openshift-v4.21.0-rc.1-candidate. A desired version that is not a full X.Y.Z is an
// error: ARO-HCP's version controller only stores full versions, and a bare X.Y would
// ask Cluster Service for a version it does not have.
func VersionID(desired, channelGroup string) (string, error) {
	if err := validateDesiredVersion(desired); err != nil {
		return "", err
	}
	if err := validateChannelGroup(channelGroup); err != nil {
		return "", err
	}
	id := VersionPrefix + desired
	if channelGroup != "" && channelGroup != DefaultChannelGroup {
		id += "-" + channelGroup
	}
	return id, nil
}

func validateDesiredVersion(desired string) error {
	if desired == "" {
		return fmt.Errorf("no desired version")
	}
	if !desiredVersionPattern.MatchString(desired) {
		return fmt.Errorf("desired version %q is not a full version X.Y.Z with an optional -pre-release", desired)
	}
	return nil
}

func validateChannelGroup(channelGroup string) error {
	if channelGroup != "" && !channelGroupPattern.MatchString(channelGroup) {
		return fmt.Errorf("channel group %q is not one lowercase word", channelGroup)
	}
	return nil
}
