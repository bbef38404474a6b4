package database

import (
	"context"
	"fmt"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
)

// DecodeItem decodes a stored item into a typed document.
func DecodeItem[P any](item Item) (*api.Document[P], error) {
	return api.Decode[P](item.Body)
}

// Get point-reads a typed document by resource ID.
func Get[P any](ctx context.Context, c Container, partitionKey, resourceID string) (*api.Document[P], error) {
	item, err := c.Get(ctx, partitionKey, api.CosmosID(resourceID))
	if err != nil {
		return nil, err
	}
	return DecodeItem[P](item)
}

// GetLean point-reads a typed document keeping its declared fields only (api.DecodeLean),
// for a reader that never writes the document back whole: a fraction of the decode's
// cost and garbage.
func GetLean[P any](ctx context.Context, c Container, partitionKey, resourceID string) (*api.Document[P], error) {
	item, err := c.Get(ctx, partitionKey, api.CosmosID(resourceID))
	if err != nil {
		return nil, err
	}
	return api.DecodeLean[P](item.Body)
}

// Create stores a new typed document (instanceVersion 1) and returns what was stored.
func Create[P any](ctx context.Context, c Container, doc *api.Document[P]) (*api.Document[P], error) {
	item, err := CreateItem(ctx, c, doc)
	if err != nil {
		return nil, err
	}
	return DecodeItem[P](item)
}

// CreateItem is Create without decoding the store's answer, for a caller that decodes it
// its own way (docwrite, as its cache decodes).
func CreateItem[P any](ctx context.Context, c Container, doc *api.Document[P]) (Item, error) {
	doc.PrepareCreate()
	body, err := api.Encode(doc)
	if err != nil {
		return Item{}, err
	}
	return c.Create(ctx, doc.PartitionKey, body)
}

// Replace writes doc back under If-Match on the _etag it was read with, bumping
// instanceVersion. doc must be the caller's own copy (see api.Document.DeepCopy); it is
// stamped in place.
func Replace[P any](ctx context.Context, c Container, doc *api.Document[P]) (*api.Document[P], error) {
	item, err := ReplaceItem(ctx, c, doc)
	if err != nil {
		return nil, err
	}
	return DecodeItem[P](item)
}

// ReplaceItem is Replace without decoding the store's answer, for a caller that decodes
// it its own way (docwrite, as its cache decodes).
func ReplaceItem[P any](ctx context.Context, c Container, doc *api.Document[P]) (Item, error) {
	if doc.ETag == "" {
		return Item{}, &OpError{Op: "replace", Container: c.Name(), ID: doc.ID, PartitionKey: doc.PartitionKey, Kind: ErrIfMatchRequired}
	}
	doc.PrepareReplace()
	body, err := api.Encode(doc)
	if err != nil {
		return Item{}, err
	}
	return c.Replace(ctx, doc.PartitionKey, doc.ID, body, doc.ETag)
}

// SoftDelete deletes the way ARO-HCP does: deletionTimestamp, a short ttl and a bumped
// instanceVersion, written under If-Match on the item as read, so that change-feed
// readers see the delete before Cosmos expires the document. Every field is kept.
func SoftDelete(ctx context.Context, c Container, item Item, now time.Time) (Item, error) {
	doc, err := DecodeItem[api.RawProperties](item)
	if err != nil {
		return Item{}, fmt.Errorf("soft delete %s/%s: %w", c.Name(), item.ID, err)
	}
	if item.ETag == "" {
		return Item{}, &OpError{Op: "soft delete", Container: c.Name(), ID: item.ID, PartitionKey: item.PartitionKey, Kind: ErrIfMatchRequired}
	}
	doc.ETag = item.ETag
	doc.MarkDeleted(now)
	doc.PrepareReplace()
	body, err := api.Encode(doc)
	if err != nil {
		return Item{}, err
	}
	return c.Replace(ctx, item.PartitionKey, item.ID, body, item.ETag)
}

// ListDecoded lists and decodes every document of a resource type in a container, across
// partitions; the first failure ends it.
func ListDecoded[P any](ctx context.Context, c Container, resourceType string) ([]*api.Document[P], error) {
	var out []*api.Document[P]
	for item, err := range c.List(ctx, ListOptions{ResourceType: resourceType}) {
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", resourceType, err)
		}
		doc, err := DecodeItem[P](item)
		if err != nil {
			return nil, fmt.Errorf("decoding %s %s: %w", resourceType, item.ID, err)
		}
		out = append(out, doc)
	}
	return out, nil
}
