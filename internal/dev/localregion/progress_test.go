package localregion

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// contradictions lists what a progress line would claim that cannot be: each counter
// is a stage of the pipeline that needs the one before it (see the legend), and a
// cluster with a reservation is one its MC has not reported yet.
func contradictions(s snapshot) []string {
	var out []string
	check := func(lowName string, low int, highName string, high int) {
		if low > high {
			out = append(out, fmt.Sprintf("%s %d > %s %d", lowName, low, highName, high))
		}
	}
	check("placed", s.placed, "created", s.created)
	check("desired version", s.versioned, "created", s.created)
	check("pinned in CS", s.inCS, "placed", s.placed)
	check("pinned in CS", s.inCS, "desired version", s.versioned)
	check("observed", s.observed, "pinned in CS", s.inCS)
	check("observed + pending reservations", s.observed+s.pending, "created", s.created)
	return out
}

// TestProgressCountersNeverContradict moves a world through the pipeline in random
// orders while the observer reads it, the world taking steps between the observer's
// reads as the real region does, and checks every line the observer would print: no
// counter exceeds the one it depends on, and none is behind what the world already
// showed when the read began or ahead of what it showed when the read ended.
func TestProgressCountersNeverContradict(t *testing.T) {
	for seed := range uint64(50) {
		w := newWorld(t, 2, 6, seed)
		obs := w.observer()
		for i := 0; ; i++ {
			before := w.truth()
			done := w.settledWorld()
			s, err := obs.snapshot(t.Context())
			require.NoError(t, err)
			after := w.truth()
			require.Empty(t, contradictions(s), "seed %d, read %d: %s", seed, i, line(s))
			for _, c := range []struct {
				name                 string
				got, lowest, highest int
			}{
				{"placed", s.placed, before.placed, after.placed},
				{"desired version", s.versioned, before.versioned, after.versioned},
				{"pinned in CS", s.inCS, before.inCS, after.inCS},
				{"observed", s.observed, before.observed, after.observed},
			} {
				require.True(t, c.lowest <= c.got && c.got <= c.highest,
					"seed %d, read %d: %s %d, but the world had %d when the read began and %d when it ended", seed, i, c.name, c.got, c.lowest, c.highest)
			}
			if done {
				require.True(t, s.settled(6), "seed %d: the world is through, and so is the line: %s", seed, line(s))
				break
			}
			require.Less(t, i, 1000, "seed %d: the world never settled", seed)
		}
	}
}

// line is the progress line of s.
func line(s snapshot) string {
	var b bytes.Buffer
	render(&b, s, s.created, 0)
	l, _, _ := strings.Cut(b.String(), "\n")
	return l
}

// Stamps 10 and 11 come after 9, in the progress bars and in the final table.
func TestStampsInNumericOrder(t *testing.T) {
	w := newWorld(t, 11, 0, 1)
	w.stepsPerRead = 0
	s, err := w.observer().snapshot(t.Context())
	require.NoError(t, err)
	var progress, table bytes.Buffer
	render(&progress, s, 0, time.Second)
	renderPlacements(&table, s)
	want := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}
	assert.Equal(t, want, column(t, progress.String(), `(?m)^  stamp (\S+)`), progress.String())
	assert.Equal(t, want, column(t, table.String(), `(?m)^(\d+) `), table.String())
}

func column(t *testing.T, text, pattern string) []string {
	var out []string
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// settleWatcher is drive's output in interactive mode: once the region has settled it
// adds a reservation of a cluster the run did not make, which unsettles it, then drops
// it again, and stops the run once the region has settled a second time.
type settleWatcher struct {
	bytes.Buffer
	w      *world
	cancel func()
	phase  int
}

func (s *settleWatcher) Write(p []byte) (int, error) {
	n, err := s.Buffer.Write(p)
	text := s.String()
	foreign := "/subscriptions/00000000-0000-4000-8000-999999999999/resourceGroups/elsewhere/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/foreign"
	reserve := func(add bool) {
		ctx := context.Background()
		fleet := s.w.store.Container(api.FleetContainer)
		mc := s.w.mcs[0]
		doc, err := database.Get[api.ManagementClusterSchedulingProperties](ctx, fleet, "1", api.SchedulingResourceID(mc).String())
		require.NoError(s.w.t, err)
		if add {
			doc.Properties.Status.PendingAssignedClusters = append(doc.Properties.Status.PendingAssignedClusters, foreign)
		} else {
			doc.Properties.Status.PendingAssignedClusters = slices.DeleteFunc(doc.Properties.Status.PendingAssignedClusters, func(id string) bool { return id == foreign })
		}
		_, err = database.Replace(ctx, fleet, doc)
		require.NoError(s.w.t, err)
	}
	switch {
	case s.phase == 0 && strings.Count(text, "settled: 3 clusters in ") == 1:
		reserve(true)
		s.phase++
	case s.phase == 1 && strings.Contains(text, "no longer settled"):
		reserve(false)
		s.phase++
	case s.phase == 2 && strings.Count(text, "settled: 3 clusters in ") == 2:
		s.cancel()
		s.phase++
	}
	return n, err
}

// Without --exit-when-settled the region says once when it has settled, and again after
// it was unsettled.
func TestInteractiveRunSaysWhenSettled(t *testing.T) {
	w := newWorld(t, 2, 0, 1)
	w.follow, w.stepsPerRead = true, 20
	obs := w.observer()
	o := DefaultOptions()
	o.Clusters, o.CreateInterval, o.ProgressEvery = 3, 5*time.Millisecond, 10*time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	out := &settleWatcher{w: w, cancel: cancel}
	sup := newSupervisor(t.TempDir())
	defer sup.stopAll()
	require.NoError(t, drive(ctx, o, out, obs.store, obs.csURL, sup, nil, nil))
	text := out.String()
	end := text[max(len(text)-1500, 0):]
	assert.Equal(t, 3, out.phase, "settled, unsettled and settled again; the output ends with:\n%s", end)
	assert.True(t, regexp.MustCompile(`(?m)^settled: 3 clusters in [0-9.]+m?s: placed, created in Cluster Service and observed; no reservation left$`).MatchString(text), end)
	assert.Equal(t, 2, strings.Count(text, "settled: 3 clusters in "), "once per time it settles, not on every progress line")
	assert.Equal(t, 1, strings.Count(text, "no longer settled"))
}

// On a timeout the run names every cluster that is not through and where it stopped, at
// most unsettledLines of them.
func TestTimeoutNamesEachUnsettledCluster(t *testing.T) {
	o, store, csURL, sup := driveEnv(t)
	o.Clusters, o.CreateInterval, o.Timeout = 25, time.Millisecond, time.Second
	var out bytes.Buffer
	err := drive(t.Context(), o, &out, store, csURL, sup, nil, nil)
	require.ErrorContains(t, err, "timed out after 1s before the region settled")
	text := out.String()
	for n := 1; n <= 20; n++ {
		assert.Regexp(t, fmt.Sprintf(`(?m)^  /subscriptions/%s/resourceGroups/rg-local-%d/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/hcp-local-%d: no ServiceProviderCluster yet`,
			frontend.SubscriptionID(n), n, n), text)
	}
	assert.NotContains(t, text, "hcp-local-21:", "at most 20 clusters are listed")
	assert.Contains(t, text, "  and 5 more\n")
}

// Each unsettled cluster's line says the step it is stuck at, read from the same
// snapshot as the counters.
func TestUnsettledReasons(t *testing.T) {
	w := newWorld(t, 2, 9, 1)
	w.stepsPerRead = 0
	// Cluster i (from 0) goes to cluster i's MC, stamp i%2+1.
	w.advance(1, stepSPC)
	setCondition(t, w, 1, "False", "InsufficientCapacity", "no management cluster has capacity: 1: InsufficientCapacity (swift NICs 0 < 3)")
	w.advance(2, stepSPC)
	w.advance(3, stepSPC, stepReserve, stepPlace)
	w.advance(4, stepSPC, stepVersion, stepReserve, stepPlace)
	w.advance(5, through[:5]...)
	w.advance(6, through...)
	w.advance(7, through...)
	w.mu.Lock()
	w.apply(w.clusters[7], stepReserve) // a reservation left behind after the observation
	w.mu.Unlock()
	w.advance(8, through...)

	s, err := w.observer().snapshot(t.Context())
	require.NoError(t, err)
	var b bytes.Buffer
	renderUnsettled(&b, s, 10)
	id := func(i int) string { return w.clusters[i].rid.String() }
	assert.Equal(t, strings.Join([]string{
		"not settled:",
		"  1 cluster not created yet (10 wanted)",
		"  " + id(0) + ": no ServiceProviderCluster yet",
		"  " + id(1) + ": not placed: CapacityAvailable=False InsufficientCapacity: no management cluster has capacity: 1: InsufficientCapacity (swift NICs 0 < 3)",
		"  " + id(2) + ": not placed: no CapacityAvailable condition yet",
		"  " + id(3) + ": placed on stamp 2, waiting for its desired control plane version",
		"  " + id(4) + ": placed on stamp 1, not created in Cluster Service",
		"  " + id(5) + ": created in Cluster Service on stamp 2, not in its capacity report yet",
		"  " + id(7) + ": observed on stamp 2, but a reservation remains on stamp 2",
		"",
	}, "\n"), b.String())
}

// setCondition writes cluster i's CapacityAvailable condition, as placement does.
func setCondition(t *testing.T, w *world, i int, status, reason, message string) {
	ctx := t.Context()
	resources := w.store.Container(api.ResourcesContainer)
	rid := w.clusters[i].rid
	pk, err := api.ResourcesPartitionKey(rid)
	require.NoError(t, err)
	doc, err := database.Get[api.ServiceProviderClusterProperties](ctx, resources, pk, api.ServiceProviderClusterID(rid))
	require.NoError(t, err)
	doc.Properties.Status = &api.ServiceProviderClusterStatus{Placement: &api.PlacementStatus{Conditions: []api.Condition{{
		Type: placement.ConditionCapacityAvailable, Status: status, Reason: reason, Message: message, LastTransitionTime: time.Now(),
	}}}}
	_, err = database.Replace(ctx, resources, doc)
	require.NoError(t, err)
}
