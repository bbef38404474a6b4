package fakeclusterservice

import (
	"crypto/rand"
	"encoding/base32"
	"regexp"
	"strings"
)

// The fake keeps its own copy of CS's identifier rules instead of importing the client's
// helpers: if both sides shared one implementation, a bug in it could never be caught here.

// ClustersPath is the collection of clusters, for faults aimed at cluster requests.
const ClustersPath = apiPrefix + "/clusters"

const (
	apiPrefix       = "/api/aro_hcp/v1alpha1"
	clustersPath    = ClustersPath
	shardsPath      = apiPrefix + "/provision_shards"
	errorsPath      = apiPrefix + "/errors"
	errorCodePrefix = "CLUSTERS-MGMT-"
)

// idEncoding mirrors the alphabet of OCM identifiers: lowercase base32hex without padding.
var idEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

var (
	clusterIDPattern = regexp.MustCompile(`^[0-9a-z]{32}$`)
	// Shard identifiers are looser because ARO-HCP registers shards under ids it derives
	// itself (UUIDs, for example), not only ids that CS generated.
	shardIDPattern = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$`)
)

// newID returns a 32-character identifier of the same shape CS generates: 20 random bytes,
// base32hex-encoded, lowercase.
func newID() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it aborts the program instead.
	return strings.ToLower(idEncoding.EncodeToString(b[:]))
}

func clusterHREF(id string) string { return clustersPath + "/" + id }

func shardHREF(id string) string { return shardsPath + "/" + id }
