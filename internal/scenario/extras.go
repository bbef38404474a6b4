package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// extraField is the key of the fields seeded into documents: ARO-HCP fields hcpsched
// has never heard of, at every level it writes.
const extraField = "hcpschedScenarioUnknownField"

// seededField is one field seeded at the start of a run, which must still be there, with
// the same value, at its end.
type seededField struct {
	container    string
	partitionKey string
	resourceID   string
	// path leads to the object holding the field; empty is the document itself.
	path  []string
	value any
}

func (s seededField) String() string {
	return s.resourceID + " " + strings.Join(append(slices.Clone(s.path), extraField), ".")
}

// withExtras returns doc with an unknown field added to every object of levels that the
// document has, and the fields it added.
func withExtras[P any](doc *api.Document[P], container string, levels ...[]string) (*api.Document[P], []seededField, error) {
	body, err := api.Encode(doc)
	if err != nil {
		return nil, nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(body, &tree); err != nil {
		return nil, nil, err
	}
	var seeded []seededField
	for _, path := range levels {
		obj, ok := objectAt(tree, path)
		if !ok {
			continue
		}
		value := map[string]any{"seededBy": "hcpsched scenario", "level": strings.Join(path, "."), "n": float64(len(seeded) + 1)}
		obj[extraField] = value
		seeded = append(seeded, seededField{container: container, partitionKey: doc.PartitionKey, resourceID: doc.ResourceID, path: path, value: value})
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return nil, nil, err
	}
	out, err := api.Decode[P](b)
	if err != nil {
		return nil, nil, err
	}
	return out, seeded, nil
}

func objectAt(tree map[string]any, path []string) (map[string]any, bool) {
	obj := tree
	for _, k := range path {
		next, ok := obj[k].(map[string]any)
		if !ok {
			return nil, false
		}
		obj = next
	}
	return obj, true
}

// seedStored adds unknown fields to every stored document of a type, each with an
// etag-guarded replace that is redone from a fresh read when a controller wrote first.
func seedStored[P any](ctx context.Context, c database.Container, resourceType string, levels ...[]string) ([]seededField, error) {
	docs, err := database.ListDecoded[P](ctx, c, resourceType)
	if err != nil {
		return nil, err
	}
	var all []seededField
	for _, listed := range docs {
		seeded, err := seedOne[P](ctx, c, listed.PartitionKey, listed.ResourceID, levels)
		if err != nil {
			return nil, fmt.Errorf("seeding %s: %w", listed.ResourceID, err)
		}
		all = append(all, seeded...)
	}
	return all, nil
}

func seedOne[P any](ctx context.Context, c database.Container, pk, resourceID string, levels [][]string) ([]seededField, error) {
	const attempts = 10
	for range attempts {
		doc, err := database.Get[P](ctx, c, pk, resourceID)
		if err != nil {
			return nil, err
		}
		seededDoc, seeded, err := withExtras(doc, c.Name(), levels...)
		if err != nil {
			return nil, err
		}
		seededDoc.ETag = doc.ETag
		_, err = database.Replace(ctx, c, seededDoc)
		if errors.Is(err, database.ErrPreconditionFailed) {
			continue
		}
		return seeded, err
	}
	return nil, fmt.Errorf("still losing etag races after %d attempts", attempts)
}

// lostFields are the seeded fields a store no longer holds as they were seeded.
func lostFields(ctx context.Context, store database.Store, seeded []seededField) ([]string, error) {
	var lost []string
	for _, s := range seeded {
		item, err := store.Container(s.container).Get(ctx, s.partitionKey, api.CosmosID(s.resourceID))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", s.resourceID, err)
		}
		var tree map[string]any
		if err := json.Unmarshal(item.Body, &tree); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", s.resourceID, err)
		}
		obj, ok := objectAt(tree, s.path)
		if !ok || !reflect.DeepEqual(obj[extraField], s.value) {
			lost = append(lost, s.String())
		}
	}
	return lost, nil
}
