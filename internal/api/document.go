package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hcpsched/hcpsched/internal/rawjson"
)

// Containers of the ARO-HCP database that hcpsched reads and writes. The kube-applier
// container of each management cluster is named by its ManagementCluster document.
const (
	ResourcesContainer = "Resources"
	FleetContainer     = "Fleet"
)

// SoftDeleteTTL is how long a soft-deleted document stays visible in the change feed,
// in seconds, matching what ARO-HCP writes.
const SoftDeleteTTL = 30

var cosmosIDNamespace = uuid.MustParse("bf1ee0a1-0147-41ed-a083-d3cbbf7bea99")

// CosmosID derives a document's id from its resource ID the way ARO-HCP does, so both
// projects address the same item.
func CosmosID(resourceID string) string {
	return uuid.NewSHA1(cosmosIDNamespace, []byte(strings.ToLower(resourceID))).String()
}

// CosmosMetadata is properties.cosmosMetadata. Older documents lack it or parts of it.
type CosmosMetadata struct {
	ResourceID string `json:"resourceID,omitempty"`
	// ETag is the _etag the last writer read before replacing: one version stale.
	ETag            string `json:"etag,omitempty"`
	InstanceVersion int64  `json:"instanceVersion,omitempty"`
	PartitionKey    string `json:"partitionKey,omitempty" hcpsched:"intern"`
	Object
}

func (m *CosmosMetadata) UnmarshalJSON(b []byte) error { return decodeObject(b, m) }
func (m CosmosMetadata) MarshalJSON() ([]byte, error)  { return encodeObject(&m) }

// metadataHolder is implemented by every properties type.
type metadataHolder interface {
	metadataField() **CosmosMetadata
}

// Document is the envelope every ARO-HCP container uses around a typed properties object.
type Document[P any] struct {
	ID                string     `json:"id"`
	PartitionKey      string     `json:"partitionKey,omitempty" hcpsched:"intern"`
	ResourceID        string     `json:"resourceID,omitempty"`
	ResourceType      string     `json:"resourceType,omitempty" hcpsched:"intern"`
	DeletionTimestamp *time.Time `json:"deletionTimestamp,omitempty"`
	TTL               int        `json:"ttl,omitempty"`
	Properties        P          `json:"properties"`
	// Cosmos system properties. Cosmos ignores them on writes; hcpsched reads _etag for
	// If-Match and _ts for change-feed lag.
	ETag      string `json:"_etag,omitempty"`
	Timestamp int64  `json:"_ts,omitempty"`
	// LSN is _lsn, the partition's write sequence number, which Cosmos adds to
	// change-feed items only (0 elsewhere); caches order a document's writes by it.
	LSN int64 `json:"_lsn,omitempty"`
	Object
}

func (d *Document[P]) UnmarshalJSON(b []byte) error { return decodeObject(b, d) }
func (d Document[P]) MarshalJSON() ([]byte, error)  { return encodeObject(&d) }

// NewDocument builds the envelope of a new document for resourceID in a container whose
// partition key is partitionKey (it is lowercased, as ARO-HCP stores it).
func NewDocument[P any](resourceID *ResourceID, partitionKey string, properties P) *Document[P] {
	d := &Document[P]{
		ID:           CosmosID(resourceID.String()),
		PartitionKey: strings.ToLower(partitionKey),
		ResourceID:   resourceID.String(),
		ResourceType: resourceID.ResourceType(),
		Properties:   properties,
	}
	*d.metadata() = &CosmosMetadata{ResourceID: d.ResourceID, PartitionKey: d.PartitionKey}
	return d
}

func (d *Document[P]) metadata() **CosmosMetadata {
	if h, ok := any(&d.Properties).(metadataHolder); ok {
		return h.metadataField()
	}
	panic(fmt.Sprintf("api: %T does not carry cosmosMetadata", d.Properties))
}

// Metadata returns properties.cosmosMetadata, or nil for documents that predate it.
func (d *Document[P]) Metadata() *CosmosMetadata { return *d.metadata() }

// InstanceVersion is the write counter; absent or 0 reads as 1, as ARO-HCP reads it.
func (d *Document[P]) InstanceVersion() int64 {
	if m := d.Metadata(); m != nil && m.InstanceVersion > 0 {
		return m.InstanceVersion
	}
	return 1
}

// ParsedResourceID returns the document's resource ID, taken from the envelope, then
// cosmosMetadata, as ARO-HCP's read path does for older documents.
func (d *Document[P]) ParsedResourceID() (*ResourceID, error) {
	id := d.ResourceID
	if id == "" {
		if m := d.Metadata(); m != nil {
			id = m.ResourceID
		}
	}
	if id == "" {
		return nil, errors.New("no resource ID in the envelope or cosmosMetadata")
	}
	return ParseResourceID(id)
}

// IsDeleted reports a soft delete: the document only lingers for the change feed.
func (d *Document[P]) IsDeleted() bool { return d.DeletionTimestamp != nil }

// PrepareCreate stamps a new document's metadata: instanceVersion 1, no etag.
func (d *Document[P]) PrepareCreate() {
	m := d.ensureMetadata()
	m.ETag = ""
	m.InstanceVersion = 1
}

// PrepareReplace stamps the metadata of a read-modify-write: cosmosMetadata.etag becomes
// the _etag that was read and instanceVersion goes up by one, so change-feed readers that
// gate on it (ARO-HCP's and ours) see the write.
func (d *Document[P]) PrepareReplace() {
	next := d.InstanceVersion() + 1
	m := d.ensureMetadata()
	m.ETag = d.ETag
	m.InstanceVersion = next
}

// MarkDeleted turns the document into a soft delete, ARO-HCP style: deletionTimestamp and
// a short ttl, so the delete travels through the change feed before Cosmos expires it.
func (d *Document[P]) MarkDeleted(now time.Time) {
	t := now.UTC().Truncate(time.Second)
	d.DeletionTimestamp = &t
	d.TTL = SoftDeleteTTL
}

func (d *Document[P]) ensureMetadata() *CosmosMetadata {
	mp := d.metadata()
	if *mp == nil {
		*mp = &CosmosMetadata{}
	}
	m := *mp
	if m.ResourceID == "" {
		m.ResourceID = d.ResourceID
	}
	if m.PartitionKey == "" {
		m.PartitionKey = d.PartitionKey
	}
	return m
}

// DecodeError names the document that failed to decode, so a bad item in a shared
// database can be found and fixed.
type DecodeError struct {
	ID         string
	ResourceID string
	Err        error
}

func (e *DecodeError) Error() string {
	name := "document"
	switch {
	case e.ResourceID != "" && e.ID != "":
		name = fmt.Sprintf("document %s (%s)", e.ID, e.ResourceID)
	case e.ResourceID != "":
		name = fmt.Sprintf("document %s", e.ResourceID)
	case e.ID != "":
		name = fmt.Sprintf("document %s", e.ID)
	}
	return fmt.Sprintf("decoding %s: %v", name, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Identify reads only the envelope's id, resourceID and resourceType, tolerating anything
// else (even a truncated document), so that callers can route or report a document before
// decoding it.
func Identify(data []byte) (id, resourceID, resourceType string) {
	// The members are sliced, not decoded: every change-feed item of every pump passes
	// through here before anything else, and a token decoder walked the whole body.
	for key, value := range rawjson.Members(data) {
		switch key {
		case "id":
			id = rawjson.String(value)
		case "resourceID":
			resourceID = rawjson.String(value)
		case "resourceType":
			resourceType = rawjson.String(value)
		}
	}
	return id, resourceID, resourceType
}

// Decode reads a stored document. Unknown fields at every level hcpsched types are kept,
// and the resource ID must parse.
func Decode[P any](data []byte) (*Document[P], error) {
	fail := func(err error) (*Document[P], error) {
		id, rid, _ := Identify(data)
		return nil, &DecodeError{ID: id, ResourceID: rid, Err: err}
	}
	d := new(Document[P])
	// json.Unmarshal validates the whole document once and then hands each level to its
	// UnmarshalJSON, which relies on that validation.
	if err := json.Unmarshal(data, d); err != nil {
		return fail(err)
	}
	if err := checkDecoded(d); err != nil {
		return fail(err)
	}
	return d, nil
}

// checkDecoded is what every decoder requires of a document besides its JSON: an id and
// a resource ID that parses.
func checkDecoded[P any](d *Document[P]) error {
	if d.ID == "" {
		return errors.New("missing id")
	}
	if _, err := d.ParsedResourceID(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidResourceID, err)
	}
	return nil
}

// Encode writes a document for storage.
func Encode[P any](d *Document[P]) ([]byte, error) {
	b, err := d.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding document %s (%s): %w", d.ID, d.ResourceID, err)
	}
	return b, nil
}
