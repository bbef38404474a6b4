// Package preservation runs every ARO-HCP fixture through controllers' writes on a store
// and checks, on the stored JSON trees, that each write changed its owned fields as its
// change says, stamped cosmosMetadata, and left every other field with the bytes the
// store held before: the acceptance test of "a foreign field is never rewritten".
package preservation

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/dev/docwritetest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// Write is one controller's write of one document type: its owned fields, as the
// controller declares them to docwrite, and the change it makes.
type Write struct {
	Controller string
	// TypeSuffix selects the fixtures the write applies to: those whose resourceType
	// ends in it, compared case-insensitively (ARO-HCP spells types in several cases).
	TypeSuffix string
	Owned      docwrite.Fields
	// apply writes through docwrite from the cached copy of before (full or lean) and
	// returns the outcome and what a full decode of before, changed, encodes to.
	apply func(ctx context.Context, c database.Container, before database.Item, lean bool) (docwrite.Outcome, []byte, error)
}

// Of is the write of a document of type P by controller.
func Of[P any](controller, typeSuffix string, owned docwrite.Fields, change func(*api.Document[P]) error) Write {
	return Write{Controller: controller, TypeSuffix: typeSuffix, Owned: owned,
		apply: func(ctx context.Context, c database.Container, before database.Item, lean bool) (docwrite.Outcome, []byte, error) {
			expected, err := database.DecodeItem[P](before)
			if err != nil {
				return 0, nil, err
			}
			if err := change(expected); err != nil {
				return 0, nil, err
			}
			want, err := api.Encode(expected)
			if err != nil {
				return 0, nil, err
			}
			var cached *api.Document[P]
			if lean {
				stripped, err := docwritetest.StripUndeclared(before.Body, reflectType[P]())
				if err != nil {
					return 0, nil, err
				}
				if cached, err = api.Decode[P](stripped); err != nil {
					return 0, nil, err
				}
			} else if cached, err = database.DecodeItem[P](before); err != nil {
				return 0, nil, err
			}
			res, err := docwrite.New(c, docwrite.NoCache[P]{}).Update(ctx, cached, owned, change)
			return res.Outcome, want, err
		}}
}

func reflectType[P any]() reflect.Type { return reflect.TypeFor[api.Document[P]]() }

// Run stores every fixture that a write applies to in c, once with the cache holding
// the whole document and once with a lean cache, runs the writes that apply to it in
// order, each from the document as the one before left it, and checks each write.
// It deletes each document again, so that c can be shared by stores whose containers
// are costly to make. Every write must apply to at least one fixture.
func Run(t *testing.T, c database.Container, writes []Write) {
	t.Helper()
	c = &counting{Container: c}
	used := map[int]bool{}
	for _, f := range arohcp.All() {
		_, _, resourceType := api.Identify(f.Data)
		var steps []int
		for i, w := range writes {
			if strings.HasSuffix(strings.ToLower(resourceType), strings.ToLower(w.TypeSuffix)) {
				steps = append(steps, i)
				used[i] = true
			}
		}
		if len(steps) == 0 {
			continue
		}
		for _, lean := range []bool{false, true} {
			mode := "full cache"
			if lean {
				mode = "lean cache"
			}
			t.Run(f.Name+"/"+mode, func(t *testing.T) {
				runFixture(t, c, f, lean, writes, steps)
			})
		}
	}
	for i, w := range writes {
		assert.True(t, used[i], "the write of %s applies to no fixture", w.Controller)
	}
}

func runFixture(t *testing.T, c database.Container, f arohcp.Fixture, lean bool, writes []Write, steps []int) {
	var env struct {
		PartitionKey string `json:"partitionKey"`
	}
	require.NoError(t, json.Unmarshal(f.Data, &env))
	ctx := t.Context()
	created, err := c.Create(ctx, env.PartitionKey, f.Data)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Delete(context.WithoutCancel(ctx), env.PartitionKey, created.ID, "") })
	before := created
	counter, _ := c.(*counting)
	for n, i := range steps {
		w := writes[i]
		if counter != nil {
			counter.take()
		}
		outcome, want, err := w.apply(ctx, c, before, lean)
		if counter != nil {
			sent := counter.take()
			t.Logf("write %d, %s's: %s; %d bytes of operations against a %d-byte document (%.3f)",
				n+1, w.Controller, sent, sent.patchBytes, len(before.Body), float64(sent.patchBytes)/float64(len(before.Body)))
		}
		require.NoError(t, err, "%s's write", w.Controller)
		require.Equal(t, docwrite.Written, outcome, "%s's write", w.Controller)
		after, err := c.Get(ctx, env.PartitionKey, created.ID)
		require.NoError(t, err)
		label := fmt.Sprintf("write %d, %s's", n+1, w.Controller)
		diffs, err := docwritetest.Differences(before.Body, after.Body, w.Owned)
		require.NoError(t, err)
		assert.Empty(t, diffs, "%s changed fields it does not own (owned: %s)", label, strings.Join(w.Owned, ", "))
		owned, err := docwritetest.OwnedDifferences(want, after.Body, w.Owned)
		require.NoError(t, err)
		assert.Empty(t, owned, "%s did not leave its owned fields as its change says", label)
		before = after
	}
}

// counting remembers how each write reached the store: patches of how many operations,
// point reads, replaces.
type counting struct {
	database.Container
	mu sync.Mutex
	writeCount
}

type writeCount struct {
	patchOps       []int
	patchBytes     int
	gets, replaces int
}

func (c *counting) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	c.mu.Lock()
	c.patchOps = append(c.patchOps, len(ops))
	for _, op := range ops {
		c.patchBytes += len(op.Kind) + len(op.Path) + len(op.Value)
	}
	c.mu.Unlock()
	return c.Container.Patch(ctx, pk, id, ops, opts)
}

func (c *counting) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	c.mu.Lock()
	c.replaces++
	c.mu.Unlock()
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}

func (c *counting) Get(ctx context.Context, pk, id string) (database.Item, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	return c.Container.Get(ctx, pk, id)
}

// take returns the counts so far and starts again from zero.
func (c *counting) take() writeCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.writeCount
	c.writeCount = writeCount{}
	return out
}

func (w writeCount) String() string {
	return fmt.Sprintf("patches of %v operations, %d point reads, %d replaces", w.patchOps, w.gets, w.replaces)
}
