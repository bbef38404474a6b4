package docwrite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/docwritetest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

const (
	fixtureScheduling = "constructed/fleet-scheduling-stamp-1-observed.json"
	fixtureSPCNoMeta  = "serviceprovidercluster-without-cosmosmetadata.json"
	fixtureSPCStatus  = "serviceprovidercluster-status-managementclusterresourceid.json"
	fixtureDeleting   = "realcosmos-hcpcluster-deleting-with-legacy-fields.json"
	// foreignKey is added to every object of a fixture, so that a write from a lean
	// cached copy has something of every level to lose.
	foreignKey = "zForeign"
)

// patchRun is what one Update did against a store that holds a fixture.
type patchRun struct {
	outcome        Outcome
	sent           []string
	before, after  []byte
	etag           string
	replaces, gets int
}

// withForeignFields adds {"zForeign":{"kept":true}} to every struct-typed object of body
// (a ManagementCluster or a document of type P), at every depth.
func withForeignFields[P any](t *testing.T, body []byte) []byte {
	t.Helper()
	b, err := docwritetest.WithForeignFields(body, reflect.TypeFor[api.Document[P]](), foreignKey)
	require.NoError(t, err)
	return b
}

// runPatch stores fixture (with foreign fields at every level when foreign is set),
// caches it full or lean, and applies change through a Writer.
func runPatch[P any](t *testing.T, fixture string, foreign, lean bool, owned Fields, change func(*api.Document[P]) error) patchRun {
	t.Helper()
	body := arohcp.Get(fixture)
	if foreign {
		body = withForeignFields[P](t, body)
	}
	var env struct {
		PartitionKey string `json:"partitionKey"`
	}
	require.NoError(t, json.Unmarshal(body, &env))
	c := &countingContainer{Container: memory.New().Container("c")}
	item, err := c.Container.Create(t.Context(), env.PartitionKey, body)
	require.NoError(t, err)
	var cached *api.Document[P]
	if lean {
		cached = docwritetest.Lean[P](t, item.Body)
	} else {
		cached, err = database.DecodeItem[P](item)
		require.NoError(t, err)
	}
	res, err := New(c, NoCache[P]{}).Update(t.Context(), cached, owned, change)
	require.NoError(t, err)
	stored, err := c.Container.Get(t.Context(), env.PartitionKey, item.ID)
	require.NoError(t, err)
	run := patchRun{outcome: res.Outcome, before: item.Body, after: stored.Body, etag: item.ETag, replaces: c.replaces, gets: c.gets}
	for _, ops := range c.sent {
		for _, op := range ops {
			run.sent = append(run.sent, opString(op))
		}
	}
	for _, g := range c.guards {
		assert.Equal(t, item.ETag, g.IfMatch, "every patch is If-Match on the cached etag")
		assert.Empty(t, g.Condition)
	}
	return run
}

func opString(op database.PatchOperation) string {
	if op.Kind == database.PatchRemove {
		return fmt.Sprintf("%s %s", op.Kind, op.Path)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, op.Value); err != nil {
		return fmt.Sprintf("%s %s %s", op.Kind, op.Path, op.Value)
	}
	return fmt.Sprintf("%s %s %s", op.Kind, op.Path, b.String())
}

func readyCondition(status, reason, message string, at time.Time) func(*api.ManagementCluster) error {
	return func(d *api.ManagementCluster) error {
		api.SetCondition(&d.Properties.Status.Conditions, api.Condition{Type: api.ManagementClusterConditionReady, Status: status, Reason: reason, Message: message}, at)
		return nil
	}
}

// The patch a change becomes, for a cache that holds the whole document and for one
// that holds only what hcpsched declares: the same operations, and afterwards every
// field outside the owned ones, foreign fields at every level included, keeps its bytes.
func TestUpdateSendsThePatchOfTheChangedOwnedLeaves(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	meta := []string{`set /properties/cosmosMetadata/etag $ETAG`}
	version := func(v int) string { return fmt.Sprintf("set /properties/cosmosMetadata/instanceVersion %d", v) }
	type run func(t *testing.T, foreign, lean bool) patchRun
	mc := func(owned Fields, change func(*api.ManagementCluster) error) (Fields, run) {
		return owned, func(t *testing.T, foreign, lean bool) patchRun {
			return runPatch(t, fixtureMC, foreign, lean, owned, change)
		}
	}
	sched := func(owned Fields, change func(*api.ManagementClusterScheduling) error) (Fields, run) {
		return owned, func(t *testing.T, foreign, lean bool) patchRun {
			return runPatch(t, fixtureScheduling, foreign, lean, owned, change)
		}
	}
	spc := func(fixture string, owned Fields, change func(*api.ServiceProviderCluster) error) (Fields, run) {
		return owned, func(t *testing.T, foreign, lean bool) patchRun {
			return runPatch(t, fixture, foreign, lean, owned, change)
		}
	}
	pending := Fields{"properties.status.pendingAssignedClusters"}
	withPending := func(ids ...string) func(*api.ManagementClusterScheduling) error {
		return func(s *api.ManagementClusterScheduling) error {
			s.Properties.Status.PendingAssignedClusters = ids
			return nil
		}
	}
	cases := []struct {
		name string
		mk   func() (Fields, run)
		want []string
	}{
		{
			name: "one owned leaf",
			mk: func() (Fields, run) {
				return mc(Fields{"properties.spec.schedulingPolicy"}, func(d *api.ManagementCluster) error {
					d.Properties.Spec.SchedulingPolicy = api.Unschedulable
					return nil
				})
			},
			want: []string{`set /properties/spec/schedulingPolicy "Unschedulable"`},
		},
		{
			name: "an owned condition changes leaf by leaf, in place, beside the others",
			mk: func() (Fields, run) {
				return mc(Fields{ConditionField("properties.status.conditions", api.ManagementClusterConditionReady)},
					readyCondition(api.ConditionFalse, api.ManagementClusterReasonRegistrationIncomplete, "waiting", at))
			},
			want: []string{
				`set /properties/status/conditions/2/status "False"`,
				`set /properties/status/conditions/2/lastTransitionTime "2026-09-01T10:00:00Z"`,
				`set /properties/status/conditions/2/reason "RegistrationIncomplete"`,
				`set /properties/status/conditions/2/message "waiting"`,
			},
		},
		{
			name: "a new owned condition is appended",
			mk: func() (Fields, run) {
				return mc(Fields{ConditionField("properties.status.conditions", "Draining")}, func(d *api.ManagementCluster) error {
					api.SetCondition(&d.Properties.Status.Conditions, api.Condition{Type: "Draining", Status: api.ConditionTrue, Reason: "R", Message: "m"}, at)
					return nil
				})
			},
			want: []string{`add /properties/status/conditions/- {"type":"Draining","status":"True","lastTransitionTime":"2026-09-01T10:00:00Z","reason":"R","message":"m"}`},
		},
		{
			name: "an owned condition that goes away is removed by index",
			mk: func() (Fields, run) {
				return mc(Fields{ConditionField("properties.status.conditions", "MaestroRegistered")}, func(d *api.ManagementCluster) error {
					d.Properties.Status.Conditions = slices.DeleteFunc(d.Properties.Status.Conditions, func(c api.Condition) bool { return c.Type == "MaestroRegistered" })
					return nil
				})
			},
			want: []string{`remove /properties/status/conditions/1`},
		},
		{
			name: "a list that did not exist is set whole",
			mk:   func() (Fields, run) { return sched(pending, withPending("/a", "/b")) },
			want: []string{`set /properties/status/pendingAssignedClusters ["/a","/b"]`},
		},
		{
			name: "a map of an owned path with several changed keys is set whole: a map decodes every key",
			mk: func() (Fields, run) {
				return sched(Fields{"properties.status.observedResources.usage"}, func(s *api.ManagementClusterScheduling) error {
					s.Properties.Status.ObservedResources.Usage = api.ResourceList{"cpu": "1", "memory": "2Ki", "aro.openshift.io/swift-nic": "3"}
					return nil
				})
			},
			want: []string{`set /properties/status/observedResources/usage {"aro.openshift.io/swift-nic":"3","cpu":"1","memory":"2Ki"}`},
		},
		{
			name: "one changed key of a map is one set, its name escaped as a JSON pointer",
			mk: func() (Fields, run) {
				return sched(Fields{"properties.status.observedResources.usage"}, func(s *api.ManagementClusterScheduling) error {
					s.Properties.Status.ObservedResources.Usage["aro.openshift.io/swift-nic"] = "10"
					return nil
				})
			},
			want: []string{`set /properties/status/observedResources/usage/aro.openshift.io~1swift-nic "10"`},
		},
		{
			name: "an owned object that exists is changed leaf by leaf, never set whole",
			mk: func() (Fields, run) {
				return sched(Fields{"properties.status.scaleCeiling"}, func(s *api.ManagementClusterScheduling) error {
					s.Properties.Status.ScaleCeiling.LastReportedAt = at
					s.Properties.Status.ScaleCeiling.Capacity["cpu"] = "1"
					return nil
				})
			},
			want: []string{
				`set /properties/status/scaleCeiling/lastReportedAt "2026-09-01T10:00:00Z"`,
				`set /properties/status/scaleCeiling/capacity/cpu "1"`,
			},
		},
		{
			name: "an owned object that empties out is removed",
			mk: func() (Fields, run) {
				return sched(Fields{"properties.status.scaleCeiling"}, func(s *api.ManagementClusterScheduling) error {
					s.Properties.Status.ScaleCeiling = nil
					return nil
				})
			},
			want: []string{`remove /properties/status/scaleCeiling`},
		},
		{
			name: "a document without cosmosMetadata gets the whole object, as PrepareReplace writes it",
			mk: func() (Fields, run) {
				return spc(fixtureSPCNoMeta, Fields{"properties.spec.managementClusterResourceID"}, func(s *api.ServiceProviderCluster) error {
					s.Properties.Spec.ManagementClusterResourceID = "/mc"
					return nil
				})
			},
			want: []string{`set /properties/spec/managementClusterResourceID "/mc"`},
		},
		{
			name: "an object on the way to an owned path that did not exist is set",
			mk: func() (Fields, run) {
				return spc(fixtureSPCStatus, Fields{"properties.status.placement.conditions[CapacityAvailable]"}, func(s *api.ServiceProviderCluster) error {
					if s.Properties.Status == nil {
						s.Properties.Status = &api.ServiceProviderClusterStatus{}
					}
					s.Properties.Status.Placement = &api.PlacementStatus{}
					api.SetCondition(&s.Properties.Status.Placement.Conditions, api.Condition{Type: "CapacityAvailable", Status: api.ConditionTrue, Reason: "Available", Message: ""}, at)
					return nil
				})
			},
			want: []string{`set /properties/status/placement {"conditions":[{"type":"CapacityAvailable","status":"True","lastTransitionTime":"2026-09-01T10:00:00Z","reason":"Available","message":""}]}`},
		},
	}
	metaFor := map[string][]string{
		"a document without cosmosMetadata gets the whole object, as PrepareReplace writes it": {
			`set /properties/cosmosMetadata {"resourceID":"/subscriptions/6b690bec-0c16-4ecb-8f67-781caf40bba7/resourceGroups/resourceGroupName/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/feature-flag-test/serviceProviderClusters/default","etag":$ETAG,"instanceVersion":2,"partitionKey":"6b690bec-0c16-4ecb-8f67-781caf40bba7"}`,
		},
		"an object on the way to an owned path that did not exist is set": {`set /properties/cosmosMetadata/etag $ETAG`, version(2)},
	}
	for _, tc := range cases {
		for _, mode := range []struct {
			name          string
			foreign, lean bool
		}{{"full", false, false}, {"full with foreign fields", true, false}, {"lean with foreign fields in the store", true, true}} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				owned, r := tc.mk()
				got := r(t, mode.foreign, mode.lean)
				require.Equal(t, Written, got.outcome)
				etag, err := json.Marshal(got.etag)
				require.NoError(t, err)
				want := append([]string(nil), tc.want...)
				if m, ok := metaFor[tc.name]; ok {
					want = append(want, m...)
				} else {
					want = append(want, append(meta, version(int(instanceVersionOf(t, got.before))+1))...)
				}
				for i := range want {
					want[i] = strings.ReplaceAll(want[i], "$ETAG", string(etag))
				}
				assert.ElementsMatch(t, want, got.sent, "the operations (their order follows the stored key order)")
				assert.Zero(t, got.replaces+got.gets, "a patch needs no read and no Replace")
				docwritetest.AssertPreserved(t, got.before, got.after, owned)
			})
		}
	}
}

func instanceVersionOf(t *testing.T, body []byte) int64 {
	t.Helper()
	d, err := api.Decode[api.RawProperties](body)
	require.NoError(t, err)
	return d.InstanceVersion()
}

// Appending to and removing from an owned list that exists.
func TestUpdateOfAnOwnedListThatExists(t *testing.T) {
	t.Parallel()
	owned := Fields{"properties.status.pendingAssignedClusters"}
	c := &countingContainer{Container: memory.New().Container(api.FleetContainer)}
	item, err := c.Container.Create(t.Context(), "1", arohcp.Get(fixtureScheduling))
	require.NoError(t, err)
	doc, err := database.DecodeItem[api.ManagementClusterSchedulingProperties](item)
	require.NoError(t, err)
	w := New(c, NoCache[api.ManagementClusterSchedulingProperties]{})
	step := func(ids ...string) *api.ManagementClusterScheduling {
		t.Helper()
		res, err := w.Update(t.Context(), doc, owned, func(s *api.ManagementClusterScheduling) error {
			s.Properties.Status.PendingAssignedClusters = ids
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, Written, res.Outcome)
		return res.Stored
	}
	doc = step("/a")
	doc = step("/a", "/b", "/c")
	doc = step("/a", "/c")
	doc = step("/c", "/a")
	var sent []string
	for _, ops := range c.sent {
		sent = append(sent, opString(ops[0]))
	}
	assert.Equal(t, []string{
		`set /properties/status/pendingAssignedClusters ["/a"]`,
		`set /properties/status/pendingAssignedClusters ["/a","/b","/c"]`, // two adds are one set of a list of strings
		`remove /properties/status/pendingAssignedClusters/1`,
		`set /properties/status/pendingAssignedClusters ["/c","/a"]`,
	}, sent)
	assert.Equal(t, []string{"/c", "/a"}, doc.Properties.Status.PendingAssignedClusters)
	assert.Equal(t, int64(594+4), doc.InstanceVersion())
}

// diffOps on JSON, the way the store sees documents, without Go types (so no value
// that exists is ever set whole, except an owned array that cannot be said otherwise).
func TestDiffOps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		before, after string
		owned         Fields
		want          []string
		wantErr       string
	}{
		{
			name:   "a key with / and ~ is escaped",
			before: `{"p":{"a/b":{"c~d":1}}}`,
			after:  `{"p":{"a/b":{"c~d":2}}}`,
			owned:  Fields{"p"},
			want:   []string{`set /p/a~1b/c~0d 2`},
		},
		{
			name:   "a value of another kind is set",
			before: `{"p":{"x":{"y":1}}}`,
			after:  `{"p":{"x":[1]}}`,
			owned:  Fields{"p.x"},
			want:   []string{`set /p/x [1]`},
		},
		{
			name:   "a key gone is removed; null and absent are the same",
			before: `{"p":{"x":1,"y":null}}`,
			after:  `{"p":{"z":null}}`,
			owned:  Fields{"p"},
			want:   []string{`remove /p/x`},
		},
		{
			name:   "a key set to null where there was a value",
			before: `{"p":{"x":1}}`,
			after:  `{"p":{"x":null}}`,
			owned:  Fields{"p.x"},
			want:   []string{`set /p/x null`},
		},
		{
			name:   "arrays of equal length change per index",
			before: `{"p":[{"a":1,"b":1},{"a":1}]}`,
			after:  `{"p":[{"a":1,"b":2},{"a":1}]}`,
			owned:  Fields{"p"},
			want:   []string{`set /p/0/b 2`},
		},
		{
			name:   "an array that grew at the end",
			before: `{"p":[1]}`,
			after:  `{"p":[1,2,{"x":3}]}`,
			owned:  Fields{"p"},
			want:   []string{`add /p/- 2`, `add /p/- {"x":3}`},
		},
		{
			name:   "one element removed",
			before: `{"p":[1,2,3]}`,
			after:  `{"p":[1,3]}`,
			owned:  Fields{"p"},
			want:   []string{`remove /p/1`},
		},
		{
			name:   "anything else sets the whole owned array",
			before: `{"p":[1,2,3]}`,
			after:  `{"p":[3]}`,
			owned:  Fields{"p"},
			want:   []string{`set /p [3]`},
		},
		{
			name:   "owned conditions: removed, changed in place after the shift, appended",
			before: `{"c":[{"type":"A","s":1},{"type":"X","s":1},{"type":"B","s":1}]}`,
			after:  `{"c":[{"type":"X","s":1},{"type":"B","s":2},{"type":"D","s":1}]}`,
			owned:  Fields{"c[A]", "c[B]", "c[D]"},
			want:   []string{`remove /c/0`, `set /c/1/s 2`, `add /c/- {"type":"D","s":1}`},
		},
		{
			name:    "owned conditions that moved cannot be a patch",
			before:  `{"c":[{"type":"A"},{"type":"X"}]}`,
			after:   `{"c":[{"type":"X"},{"type":"A"}]}`,
			owned:   Fields{"c[A]"},
			wantErr: "owned conditions moved",
		},
		{
			name:   "a new object on the way to an owned path",
			before: `{"p":{"q":1}}`,
			after:  `{"p":{"q":1,"s":{"t":{"u":1}}}}`,
			owned:  Fields{"p.s.t.u"},
			want:   []string{`set /p/s {"t":{"u":1}}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, confined([]byte(tc.before), []byte(tc.after), tc.owned), "the case's change is confined")
			ops, err := diffOps([]byte(tc.before), []byte(tc.after), tc.owned, nil)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, op := range ops {
				got = append(got, opString(op))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// A change that needs more than ten operations is written as a Replace of a fresh read
// of the same version; a read that shows another version loses the race.
func TestUpdateOfMoreThanTenOperationsReplacesAFreshRead(t *testing.T) {
	t.Parallel()
	owned := Fields{"properties.status"}
	// Every condition's status, reason and message changes: 9 leaves, 11 operations
	// with the metadata.
	change := func(d *api.ManagementCluster) error {
		for i := range d.Properties.Status.Conditions {
			c := &d.Properties.Status.Conditions[i]
			c.Status, c.Reason, c.Message = api.ConditionFalse, "R", "m"
		}
		return nil
	}
	tests := []struct {
		name                 string
		failGet, failReplace error
		// stale: the document is written after it was cached.
		stale        bool
		wantOutcome  Outcome
		wantReplaces int
	}{
		{name: "the fresh read is the cached version: replaced", wantOutcome: Written, wantReplaces: 1},
		{name: "the document changed since it was cached", stale: true, wantOutcome: LostRace},
		{name: "the document went away", failGet: &database.OpError{Op: "get", Kind: database.ErrNotFound}, wantOutcome: LostRace},
		{name: "the replace loses to another writer", failReplace: &database.OpError{Op: "replace", Kind: database.ErrPreconditionFailed}, wantOutcome: LostRace, wantReplaces: 1},
	}
	for _, tc := range tests {
		for _, lean := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lean=%v", tc.name, lean), func(t *testing.T) {
				t.Parallel()
				c := &countingContainer{Container: memory.New().Container(api.FleetContainer)}
				item, err := c.Container.Create(t.Context(), "1", withForeignFields[api.ManagementClusterProperties](t, arohcp.Get(fixtureMC)))
				require.NoError(t, err)
				cached, err := database.DecodeItem[api.ManagementClusterProperties](item)
				require.NoError(t, err)
				if lean {
					cached = docwritetest.Lean[api.ManagementClusterProperties](t, item.Body)
				}
				if tc.stale {
					_, err := c.Container.Patch(t.Context(), "1", item.ID, []database.PatchOperation{{Kind: database.PatchSet, Path: "/properties/other", Value: json.RawMessage(`1`)}}, database.PatchOptions{})
					require.NoError(t, err)
				}
				c.failGetWith, c.failReplaceWith = tc.failGet, tc.failReplace
				cache := &recordingCache[api.ManagementClusterProperties]{}
				var writeCache Cache[api.ManagementClusterProperties] = cache
				if lean {
					leanCache := &leanRecordingCache[api.ManagementClusterProperties]{}
					cache, writeCache = &leanCache.recordingCache, leanCache
				}

				res, err := New(c, writeCache).Update(t.Context(), cached, owned, change)

				require.NoError(t, err)
				assert.Equal(t, tc.wantOutcome, res.Outcome)
				assert.Zero(t, c.patches, "more than ten operations are never sent as a patch")
				assert.Equal(t, 1, c.gets, "one point read of the whole document")
				assert.Equal(t, tc.wantReplaces, c.replaces)
				stored, err := c.Container.Get(t.Context(), "1", item.ID)
				require.NoError(t, err)
				if tc.wantOutcome != Written {
					assert.Empty(t, cache.assumed)
					if !tc.stale {
						assert.Equal(t, item.ETag, stored.ETag, "nothing written")
					}
					return
				}
				require.Len(t, cache.assumed, 1)
				assert.Equal(t, stored.ETag, res.Stored.ETag)
				docwritetest.AssertPreserved(t, item.Body, stored.Body, owned)
				for _, cond := range res.Stored.Properties.Status.Conditions {
					assert.Equal(t, api.ConditionFalse, cond.Status)
				}
				assert.Same(t, res.Stored, cache.assumed[0])
				// The store keeps the foreign fields (AssertPreserved above); the cache is
				// given what it keeps of the answer: all of it when full, none when lean.
				_, kept := res.Stored.Properties.Status.Unknown(foreignKey)
				assert.Equal(t, !lean, kept, "the assumed copy is decoded as the cache decodes")
			})
		}
	}
}

// A change whose patch the differ cannot say (owned conditions reordered) takes the
// Replace of a fresh read too.
func TestUpdateThatIsNoPatchReplacesAFreshRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	owned := Fields{"properties.status.conditions[Ready]", "properties.status.conditions[MaestroRegistered]"}
	res, err := w.writer.Update(t.Context(), w.cached, owned, func(d *api.ManagementCluster) error {
		cs := d.Properties.Status.Conditions
		cs[1], cs[2] = cs[2], cs[1]
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, Written, res.Outcome)
	assert.Equal(t, 0, w.fleet.patches)
	assert.Equal(t, 1, w.fleet.replaces)
	assert.Equal(t, api.ManagementClusterConditionReady, w.stored(t).Properties.Status.Conditions[1].Type)
}

// Applying the operations diffOps returns to before, with the memory store's patch
// applier, yields after on the owned paths and leaves every other byte of before as it
// was.
func FuzzDiffOps(f *testing.F) {
	f.Add(`{"a":1,"b":{"c":[1,2]}}`, `{"a":2,"b":{"c":[1,2,3]},"d":{"e":null}}`, uint8(0))
	f.Add(`{"a":[{"type":"X","v":1},{"type":"Y"}]}`, `{"a":[{"type":"X","v":2}]}`, uint8(1))
	f.Add(`{"a/b":{"~":"x"}}`, `{"a/b":{"~":"y","n":[]}}`, uint8(2))
	f.Add(`{"b":{"c":{"d":1}}}`, `{"b":{"c":"s"}}`, uint8(3))
	f.Fuzz(func(t *testing.T, beforeJSON, afterJSON string, pick uint8) {
		var bv, av any
		if decodeJSON([]byte(beforeJSON), &bv) != nil || decodeJSON([]byte(afterJSON), &av) != nil {
			return
		}
		bm, ok1 := bv.(map[string]any)
		am, ok2 := av.(map[string]any)
		if !ok1 || !ok2 {
			return
		}
		// The owned paths: one of a few shapes, beneath "p".
		ownedSets := []Fields{{"p"}, {"p.a"}, {"p.b.c"}, {"p.a[X]"}, {"p.a/b"}, {"p.a", "p.b"}}
		owned := ownedSets[int(pick)%len(ownedSets)]
		// before's p is bm; after's p is bm with the owned parts taken from am. A foreign
		// sibling of p must come through untouched.
		beforeDoc := map[string]any{"id": "x", "partitionKey": "k", "p": bm, "foreign": bm}
		afterP := deepCopyJSON(bm).(map[string]any)
		for _, o := range owned {
			graft(afterP, am, strings.Split(strings.TrimPrefix(o, "p."), "."))
		}
		afterDoc := map[string]any{"id": "x", "partitionKey": "k", "p": afterP, "foreign": bm}
		before, err := json.Marshal(beforeDoc)
		require.NoError(t, err)
		after, err := json.Marshal(afterDoc)
		require.NoError(t, err)
		if confined(before, after, owned) != nil {
			return // the graft crossed a value of another kind: not a change a writer may make
		}
		ops, err := diffOps(before, after, owned, nil)
		if err != nil {
			require.ErrorContains(t, err, "conditions", "only condition lists may be no patch")
			return
		}
		c := memory.New().Container("c")
		item, err := c.Create(context.Background(), "k", before)
		require.NoError(t, err)
		for len(ops) > 0 {
			n := min(len(ops), database.MaxPatchOperations)
			item, err = c.Patch(context.Background(), "k", "x", ops[:n], database.PatchOptions{})
			require.NoError(t, err, "ops %v", ops[:n])
			ops = ops[n:]
		}
		var got, want any
		require.NoError(t, decodeJSON(item.Body, &got))
		require.NoError(t, decodeJSON(after, &want))
		delete(got.(map[string]any), "_etag")
		for k := range got.(map[string]any) {
			if strings.HasPrefix(k, "_") {
				delete(got.(map[string]any), k)
			}
		}
		assert.True(t, equalIgnoringNulls(want, got), "patched:\n%s\nwant:\n%s", item.Body, after)
		var parts map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(item.Body, &parts))
		var beforeParts map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(before, &beforeParts))
		assert.Equal(t, string(beforeParts["foreign"]), string(parts["foreign"]), "a field outside the owned ones keeps its bytes")
	})
}

// graft copies the value at path (object keys; a "X[T]" segment is the condition of
// type T of list X) from src into dst, creating objects on the way.
func graft(dst, src map[string]any, path []string) {
	key := path[0]
	if name, typ, ok := strings.Cut(key, "["); ok && len(path) == 1 {
		typ = strings.TrimSuffix(typ, "]")
		srcList, _ := src[name].([]any)
		dstList, isList := dst[name].([]any)
		if _, exists := dst[name]; exists && !isList {
			return
		}
		var from any
		for _, e := range srcList {
			if m, ok := e.(map[string]any); ok && m["type"] == typ {
				from = e
			}
		}
		var out []any
		replaced := false
		for _, e := range dstList {
			if m, ok := e.(map[string]any); ok && m["type"] == typ {
				if from != nil && !replaced {
					out = append(out, deepCopyJSON(from))
					replaced = true
				}
				continue
			}
			out = append(out, e)
		}
		if from != nil && !replaced {
			out = append(out, deepCopyJSON(from))
		}
		if out == nil && dstList == nil {
			return
		}
		if out == nil {
			out = []any{}
		}
		dst[name] = out
		return
	}
	if len(path) == 1 {
		if v, ok := src[key]; ok {
			dst[key] = deepCopyJSON(v)
		} else {
			delete(dst, key)
		}
		return
	}
	s, _ := src[key].(map[string]any)
	if s == nil {
		s = map[string]any{}
	}
	d, isObject := dst[key].(map[string]any)
	if !isObject {
		if _, exists := dst[key]; exists && dst[key] != nil {
			return
		}
		d = map[string]any{}
		dst[key] = d
	}
	graft(d, s, path[1:])
}

func deepCopyJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = decodeJSON(b, &out)
	return out
}

// BenchmarkUpdate compares a write of one owned field as a patch with the whole-document
// Replace it was before, on the memory store: the CPU of a write, and the bytes sent.
func BenchmarkUpdate(b *testing.B) {
	const fixture = "realcosmos-hcpcluster-deleting-with-legacy-fields.json"
	owned := Fields{"properties.serviceProviderProperties.pendingClusterServiceID"}
	for _, mode := range []string{"patch", "replace"} {
		b.Run(mode, func(b *testing.B) {
			c := memory.New().Container(api.ResourcesContainer)
			item, err := c.Create(b.Context(), "e8c5a115-842d-4d7e-98ad-cfb2c50b209e", arohcp.Get(fixture))
			require.NoError(b, err)
			cached, err := database.DecodeItem[api.ClusterProperties](item)
			require.NoError(b, err)
			w := New(c, NoCache[api.ClusterProperties]{})
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				change := func(d *api.Cluster) error {
					d.Properties.ServiceProviderProperties.PendingClusterServiceID = fmt.Sprintf("/api/aro_hcp/v1alpha1/clusters/%d", i)
					return nil
				}
				if mode == "patch" {
					res, err := w.Update(b.Context(), cached, owned, change)
					if err != nil || res.Outcome != Written {
						b.Fatal(res.Outcome, err)
					}
					cached = res.Stored
					continue
				}
				// The write before issue 19: the changed copy, confined, replaced whole.
				updated := cached.DeepCopy()
				_ = change(updated)
				before, _ := api.Encode(cached)
				after, _ := api.Encode(updated)
				if err := confined(before, after, owned); err != nil {
					b.Fatal(err)
				}
				stored, err := database.Replace(b.Context(), c, updated)
				if err != nil {
					b.Fatal(err)
				}
				cached = stored
			}
		})
	}
}

// BenchmarkDiff is the CPU docwrite spends on a write before anything is sent: the copy
// and its change, both encodings, the ownership check and the patch operations, for one
// owned field of a real ARO-HCP cluster document.
func BenchmarkDiff(b *testing.B) {
	const fixture = "realcosmos-hcpcluster-deleting-with-legacy-fields.json"
	owned := Fields{"properties.serviceProviderProperties.pendingClusterServiceID"}
	cached, err := api.Decode[api.ClusterProperties](arohcp.Get(fixture))
	require.NoError(b, err)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		updated := cached.DeepCopy()
		updated.Properties.ServiceProviderProperties.PendingClusterServiceID = fmt.Sprintf("/api/aro_hcp/v1alpha1/clusters/%d", i)
		before, _ := api.Encode(cached)
		after, _ := api.Encode(updated)
		if err := confined(before, after, owned); err != nil {
			b.Fatal(err)
		}
		ops, err := diffOps(before, after, owned, nil)
		if err != nil || len(ops) != 1 {
			b.Fatal(ops, err)
		}
	}
}
