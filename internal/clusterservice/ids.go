package clusterservice

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Paths of the two CS collections hcpsched records references into.
const (
	ClustersPath        = "/api/aro_hcp/v1alpha1/clusters"
	ProvisionShardsPath = "/api/aro_hcp/v1alpha1/provision_shards"
)

// ErrInvalidID is wrapped by every identifier or href that fails to parse.
var ErrInvalidID = errors.New("invalid identifier")

var (
	// CS cluster identifiers are 32 characters of lowercase base32. hcpsched generates them
	// itself (NewClusterID), so the rule can be exact.
	clusterIDPattern = regexp.MustCompile(`^[0-9a-z]{32}$`)
	// Identifiers hcpsched did not mint are looser, and any path-safe one is accepted:
	// ARO-HCP registers shards under ids it derives itself, UUIDs for example, and the
	// cluster references in its oldest documents (legacy clusters_mgmt ones) come in other
	// shapes too, UUIDs and short ids.
	pathSafeIDPattern = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$`)

	idEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)
)

// NewClusterID returns a fresh CS cluster identifier: 20 random bytes as 32 characters of
// lowercase base32hex, the shape CS itself generates. The backend assigns it before the
// create call so that a retried create is recognisable as a 409 on the same id.
func NewClusterID() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it aborts the program instead.
	return strings.ToLower(idEncoding.EncodeToString(b[:]))
}

// ValidateClusterID reports whether id is a well-formed CS cluster identifier.
func ValidateClusterID(id string) error {
	if !clusterIDPattern.MatchString(id) {
		return fmt.Errorf("cluster id %q is not 32 lowercase letters or digits: %w", id, ErrInvalidID)
	}
	return nil
}

// validateClusterReference reports whether id can name a cluster to read: any path-safe
// id, since clusters hcpsched did not create may carry ids of other shapes.
func validateClusterReference(id string) error {
	if !pathSafeIDPattern.MatchString(id) {
		return fmt.Errorf("cluster id %q is not 1-64 letters, digits, '-' or '_': %w", id, ErrInvalidID)
	}
	return nil
}

// ValidateShardID reports whether id is a well-formed CS provision shard identifier.
func ValidateShardID(id string) error {
	if !pathSafeIDPattern.MatchString(id) {
		return fmt.Errorf("provision shard id %q is not 1-64 letters, digits, '-' or '_': %w", id, ErrInvalidID)
	}
	return nil
}

// collection is a CS collection whose objects' paths hcpsched writes and reads: its path,
// its name in errors, and the rule its ids follow.
type collection struct {
	path, what string
	validate   func(id string) error
}

var (
	clusters        = collection{path: ClustersPath, what: "cluster", validate: ValidateClusterID}
	provisionShards = collection{path: ProvisionShardsPath, what: "provision shard", validate: ValidateShardID}
	// legacyClusters names its ids "cluster" like clusters: the two address one cluster.
	legacyClusters = collection{path: LegacyClustersPath, what: "cluster", validate: validateClusterReference}
)

func (c collection) href(id string) (string, error) {
	if err := c.validate(id); err != nil {
		return "", err
	}
	return c.path + "/" + id, nil
}

func (c collection) parse(href string) (string, error) {
	id, err := cutHREF(href, c.path, c.what)
	if err != nil {
		return "", err
	}
	if err := c.validate(id); err != nil {
		return "", fmt.Errorf("%s href %q: %w", c.what, href, err)
	}
	return id, nil
}

// ClusterHREF returns the path CS uses for a cluster, the form hcpsched stores as
// pendingClusterServiceID.
func ClusterHREF(id string) (string, error) { return clusters.href(id) }

// ParseClusterHREF returns the bare id in a cluster path.
func ParseClusterHREF(href string) (string, error) { return clusters.parse(href) }

// LegacyClustersPath is the clusters_mgmt collection that ARO-HCP's oldest cluster
// documents point into. The clusters_mgmt and aro_hcp APIs address one cluster by one id
// (ARO-HCP's own client reaches a clusters_mgmt reference through aro_hcp by swapping
// the prefix), so such a reference maps to the cluster hcpsched knows.
const LegacyClustersPath = "/api/clusters_mgmt/v1/clusters"

// ParseAnyClusterHREF returns the bare id of an aro_hcp cluster path or of a legacy
// clusters_mgmt one; legacy says which it was.
func ParseAnyClusterHREF(href string) (id string, legacy bool, err error) {
	if strings.HasPrefix(href, LegacyClustersPath+"/") {
		id, err := legacyClusters.parse(href)
		return id, true, err
	}
	id, err = clusters.parse(href)
	return id, false, err
}

// ShardHREF returns the path CS uses for a provision shard, the form the fleet records.
func ShardHREF(id string) (string, error) { return provisionShards.href(id) }

// ParseShardHREF returns the bare id in a provision shard path.
func ParseShardHREF(href string) (string, error) { return provisionShards.parse(href) }

func cutHREF(href, collection, what string) (string, error) {
	id, ok := strings.CutPrefix(href, collection+"/")
	if !ok {
		return "", fmt.Errorf("%s href %q does not start with %q: %w", what, href, collection+"/", ErrInvalidID)
	}
	return id, nil
}
