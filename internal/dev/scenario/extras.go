package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// extraField is the key of the fields seeded into documents: ARO-HCP fields hcpsched
// has never heard of, at every level it writes.
const extraField = "hcpschedScenarioUnknownField"

// foreignConditionType is a condition another ARO-HCP component keeps in the same array
// as hcpsched's own. It must not end in "Registered", which the fleet reads as a
// registration.
const foreignConditionType = "HcpschedScenarioForeign"

// seededField is one value seeded at the start of a run, which must still be there,
// unchanged, at its end.
type seededField struct {
	container    string
	partitionKey string
	resourceID   string
	// kind names what was seeded, for the run's counts: "cluster", "condition element"...
	kind string
	// path leads to the object holding the field; empty is the document itself. A step
	// "name[key=value]" is the element of array name whose key is value.
	path []string
	// key is the field; extraField unless the seed is a foreign ARO-HCP field.
	key   string
	value any
}

func (s seededField) String() string {
	return s.resourceID + " " + strings.Join(append(slices.Clone(s.path), s.key), ".")
}

// seedPlan says what to seed into one kind of document.
type seedPlan struct {
	kind string
	// objects each get an extraField, where the document has them.
	objects [][]string
	// conditions are the objects holding a "conditions" array: every element gets an
	// extraField, and a foreign condition is appended.
	conditions [][]string
	// foreign are ARO-HCP fields, set where absent: a path to the object, the key, the value.
	foreign []foreignField
}

type foreignField struct {
	path  []string
	key   string
	value any
}

// Seed plans of the documents the run seeds: every level hcpsched writes, and every array
// of its documents that other components share with it.
var (
	clusterSeeds = seedPlan{kind: "cluster", objects: [][]string{nil, {"properties"}, {"properties", "serviceProviderProperties"}}}
	mcSeeds      = seedPlan{
		kind:       "management cluster",
		objects:    [][]string{nil, {"properties"}, {"properties", "spec"}, {"properties", "status"}},
		conditions: [][]string{{"properties", "status"}},
	}
	schedulingSeeds = seedPlan{
		kind:       "scheduling",
		objects:    [][]string{nil, {"properties"}, {"properties", "status"}, {"properties", "status", "scaleCeiling"}, {"properties", "status", "observedResources"}},
		conditions: [][]string{{"properties", "status"}},
	}
	// An SPC carries ARO-HCP's version fields, arrays among them, next to hcpsched's
	// placement fields (fixtures/aro-hcp: serviceprovidercluster-*.json).
	spcSeeds = seedPlan{
		kind:       "service provider cluster",
		objects:    [][]string{nil, {"properties"}, {"properties", "spec"}, {"properties", "status"}, {"properties", "status", "placement"}},
		conditions: [][]string{{"properties", "status", "placement"}},
		foreign: []foreignField{
			{path: []string{"properties", "spec"}, key: "control_plane_version", value: map[string]any{"desired_version": "4.21.19"}},
			{path: []string{"properties", "status"}, key: "control_plane_version", value: map[string]any{
				"active_versions": []any{map[string]any{"version": "4.21.19", "state": "Completed", extraField: "in an array element"}},
			}},
			{path: []string{"properties", "status"}, key: "desiredVersionChannels", value: []any{"candidate-4.21", "candidate-4.22"}},
		},
	}
)

// seedTree adds plan's fields to a decoded document and returns what it added.
func seedTree(tree map[string]any, base seededField, plan seedPlan) []seededField {
	var seeded []seededField
	add := func(kind string, path []string, key string, value any) {
		s := base
		s.kind, s.path, s.key, s.value = kind, path, key, value
		seeded = append(seeded, s)
	}
	value := func(level string) map[string]any {
		// Nested arrays too: a writer that round-trips objects but not arrays shows here.
		return map[string]any{"seededBy": "hcpsched scenario", "level": level, "n": float64(len(seeded) + 1),
			"list": []any{map[string]any{"a": float64(1)}, []any{"b", float64(2)}}}
	}
	for _, path := range plan.objects {
		if obj, ok := objectAt(tree, path); ok {
			v := value(strings.Join(path, "."))
			obj[extraField] = v
			add(plan.kind, path, extraField, v)
		}
	}
	for _, f := range plan.foreign {
		obj, ok := objectAt(tree, f.path)
		if !ok {
			continue
		}
		if _, present := obj[f.key]; !present {
			obj[f.key] = f.value
		}
		add(plan.kind+" ARO-HCP field", f.path, f.key, obj[f.key])
	}
	for _, path := range plan.conditions {
		obj, ok := objectAt(tree, path)
		if !ok {
			continue
		}
		conditions, _ := obj["conditions"].([]any)
		for _, c := range conditions {
			element, ok := c.(map[string]any)
			typ, _ := element["type"].(string)
			if !ok || typ == "" || typ == foreignConditionType {
				continue
			}
			v := value(strings.Join(path, ".") + ".conditions[" + typ + "]")
			element[extraField] = v
			add("condition element", append(slices.Clone(path), "conditions[type="+typ+"]"), extraField, v)
		}
		v := value(strings.Join(path, ".") + ".conditions[" + foreignConditionType + "]")
		obj["conditions"] = append(conditions, map[string]any{
			"type": foreignConditionType, "status": api.ConditionTrue, "reason": "SeededByScenario",
			"message": "a condition of another ARO-HCP component", "lastTransitionTime": "2026-01-01T00:00:00Z",
			extraField: v,
		})
		add("foreign condition", append(slices.Clone(path), "conditions[type="+foreignConditionType+"]"), extraField, v)
	}
	return seeded
}

// withExtras returns doc with plan's fields added, and the fields it added.
func withExtras[P any](doc *api.Document[P], container string, plan seedPlan) (*api.Document[P], []seededField, error) {
	body, err := api.Encode(doc)
	if err != nil {
		return nil, nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(body, &tree); err != nil {
		return nil, nil, err
	}
	seeded := seedTree(tree, seededField{container: container, partitionKey: doc.PartitionKey, resourceID: doc.ResourceID}, plan)
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

// objectAt follows path through tree; see seededField.path.
func objectAt(tree map[string]any, path []string) (map[string]any, bool) {
	obj := tree
	for _, step := range path {
		name, selector, isElement := strings.Cut(step, "[")
		if !isElement {
			next, ok := obj[step].(map[string]any)
			if !ok {
				return nil, false
			}
			obj = next
			continue
		}
		key, want, _ := strings.Cut(strings.TrimSuffix(selector, "]"), "=")
		elements, _ := obj[name].([]any)
		found := false
		for _, e := range elements {
			if m, ok := e.(map[string]any); ok && m[key] == want {
				obj, found = m, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return obj, true
}

// seedStored adds plan's fields to every stored document of a type, each with an
// etag-guarded replace that is redone from a fresh read when a controller wrote first.
func seedStored[P any](ctx context.Context, c database.Container, resourceType string, plan seedPlan) ([]seededField, error) {
	docs, err := database.ListDecoded[P](ctx, c, resourceType)
	if err != nil {
		return nil, err
	}
	var all []seededField
	for _, listed := range docs {
		seeded, err := seedOne[P](ctx, c, listed.PartitionKey, listed.ResourceID, plan)
		if err != nil {
			return nil, fmt.Errorf("seeding %s: %w", listed.ResourceID, err)
		}
		all = append(all, seeded...)
	}
	return all, nil
}

// seedAttempts bounds the read-modify-writes of one seeding: under injected faults most
// fail for a reason that the next try does not share.
const seedAttempts = 20

func seedOne[P any](ctx context.Context, c database.Container, pk, resourceID string, plan seedPlan) ([]seededField, error) {
	var seeded []seededField
	err := retryWrite(ctx, func() error {
		var err error
		seeded, err = seedOnce[P](ctx, c, pk, resourceID, plan)
		return err
	})
	return seeded, err
}

// retryWrite runs attempt, a read-modify-write, until it succeeds, the document is gone
// or ctx ends, at most seedAttempts times with a doubling back-off: under injected faults
// most failures are not the next attempt's.
func retryWrite(ctx context.Context, attempt func() error) error {
	var last error
	backoff := 20 * time.Millisecond
	for range seedAttempts {
		err := attempt()
		if err == nil || errors.Is(err, database.ErrNotFound) || ctx.Err() != nil {
			return err
		}
		last = err
		if !sleepCtx(ctx, backoff) {
			return ctx.Err()
		}
		backoff = min(2*backoff, time.Second)
	}
	return fmt.Errorf("%d attempts failed, the last: %w", seedAttempts, last)
}

func seedOnce[P any](ctx context.Context, c database.Container, pk, resourceID string, plan seedPlan) ([]seededField, error) {
	doc, err := database.Get[P](ctx, c, pk, resourceID)
	if err != nil {
		return nil, err
	}
	seededDoc, seeded, err := withExtras(doc, c.Name(), plan)
	if err != nil {
		return nil, err
	}
	seededDoc.ETag = doc.ETag
	if _, err := database.Replace(ctx, c, seededDoc); err != nil {
		return nil, err
	}
	return seeded, nil
}

// seededTypes are the resource types the run seeds, by container: lostFields lists them
// rather than reading each document on its own, which under load takes minutes.
var seededTypes = map[string][]string{
	api.ResourcesContainer: {api.ClusterResourceType, api.ServiceProviderClusterResourceType},
	api.FleetContainer:     {api.ManagementClusterResourceType, api.ManagementClusterSchedulingResourceType},
}

// lostFields are the seeded fields a store no longer holds as they were seeded.
func lostFields(ctx context.Context, store database.Store, seeded []seededField) ([]string, error) {
	bodies := map[string][]byte{}
	for container, types := range seededTypes {
		for _, t := range types {
			for item, err := range store.Container(container).List(ctx, database.ListOptions{ResourceType: t}) {
				if err != nil {
					return nil, fmt.Errorf("listing %s: %w", t, err)
				}
				bodies[container+"/"+item.ID] = item.Body
			}
		}
	}
	trees := map[string]map[string]any{}
	var lost []string
	for _, s := range seeded {
		key := s.container + "/" + api.CosmosID(s.resourceID)
		tree, decoded := trees[key]
		if !decoded {
			body, listed := bodies[key]
			if !listed {
				// Not of a listed type, or gone: a point read says which.
				item, err := store.Container(s.container).Get(ctx, s.partitionKey, api.CosmosID(s.resourceID))
				if errors.Is(err, database.ErrNotFound) {
					lost = append(lost, s.String()+" (the document is gone)")
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("reading %s: %w", s.resourceID, err)
				}
				body = item.Body
			}
			if err := json.Unmarshal(body, &tree); err != nil {
				return nil, fmt.Errorf("decoding %s: %w", s.resourceID, err)
			}
			trees[key] = tree
		}
		obj, ok := objectAt(tree, s.path)
		if !ok || !reflect.DeepEqual(obj[s.key], s.value) {
			lost = append(lost, s.String())
		}
	}
	return lost, nil
}

// seededKinds counts the seeded fields by kind, for the run's "did it exercise it" check.
func seededKinds(seeded []seededField) map[string]int {
	out := map[string]int{}
	for _, s := range seeded {
		out[s.kind]++
	}
	return out
}
