package placement_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// docs/placement.md states every default, reason and outcome; this keeps it true.
func TestDocsMatchCode(t *testing.T) {
	b, err := os.ReadFile("../../docs/placement.md")
	require.NoError(t, err)
	doc := string(b)
	cfg := placement.DefaultConfig()
	row := func(setting, value string) string { return fmt.Sprintf("| %s | `%s` |", setting, value) }
	for _, want := range []string{
		row("counted resources", cfg.Resources[0].Name),
		row("HA cost", cfg.Resources[0].HA.String()),
		row("single-replica cost", cfg.Resources[0].SingleReplica.String()),
		row("maximum capacity age", cfg.MaxCapacityAge.String()),
		row("clock-skew allowance", placement.ClockSkewAllowance.String()),
		row("weigher", cfg.Weigher),
		row("pending multiplier", fmt.Sprint(cfg.PendingMultiplier)),
		row("tolerance", fmt.Sprint(cfg.Tolerance)),
		row("dominant tolerance", fmt.Sprint(cfg.DominantTolerance)),
		row("cost source", cfg.CostSource),
		fmt.Sprintf("at most %d characters", placement.MaxMessageLength),
	} {
		assert.Contains(t, doc, want)
	}
	assert.Len(t, cfg.Resources, 1, "the defaults table lists one counted resource")
	for _, r := range []placement.Reason{placement.ReasonUnschedulable, placement.ReasonNotReady, placement.ReasonNoSchedulingData, placement.ReasonStaleCapacityData, placement.ReasonInsufficientCapacity} {
		assert.Contains(t, doc, "| `"+string(r)+"` |", "reason %s", r)
	}
	for _, o := range placement.Outcomes {
		assert.Contains(t, doc, "| `"+string(o)+"` |", "outcome %s", o)
		assert.Contains(t, doc, "`"+o.ConditionReason()+"`")
	}
	assert.True(t, strings.Contains(doc, "`"+placement.ConditionCapacityAvailable+"`"))
	for _, w := range placement.Weighers {
		assert.Contains(t, doc, "`"+w+"`", "weigher %s", w)
	}
	for _, s := range []string{placement.CostSourceFlags, placement.CostSourceRequirements} {
		assert.Contains(t, doc, "`"+s+"`", "cost source %s", s)
	}
	for _, r := range placement.FallbackReasons {
		assert.Contains(t, doc, "`"+string(r)+"`", "fallback reason %s", r)
	}

	// The details the page quotes for reports that are not believed are the engine's.
	future := time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC)
	cpu := api.ResourceList{"cpu": "64"}
	for _, s := range []mcSpec{
		{stamp: "1", reportedAgo: now.Sub(future), extraCeiling: cpu},
		{stamp: "1", extraCeiling: cpu, rawUsage: api.ResourceList{}, readyIDs: []string{otherCluster(1)}},
	} {
		v := placement.Decide(placement.Cluster{ResourceID: clusterID, Swift: true}, candidates(s), *withCPU(), nil, now).Verdict(0)
		require.Equal(t, placement.ReasonStaleCapacityData, v.Reason)
		assert.Contains(t, doc, "`"+v.Detail()+"`")
	}
}

// The filters table of docs/placement.md has one row per filter, in the order the engine
// runs them, so that the first rejection the page implies is the one an MC gets.
func TestDocsNameEveryFilterInOrder(t *testing.T) {
	b, err := os.ReadFile("../../docs/placement.md")
	require.NoError(t, err)
	const header = "| Filter | Reason | Rejects an MC when |"
	_, table, found := strings.Cut(string(b), header)
	require.True(t, found, "docs/placement.md has a table under %q", header)
	var documented []string
	for _, line := range strings.Split(table, "\n")[1:] {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			break
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		documented = append(documented, strings.Trim(strings.TrimSpace(strings.Split(line, "|")[1]), "`"))
	}
	var names []string
	for _, f := range placement.Filters() {
		names = append(names, f.Name())
	}
	assert.Equal(t, names, documented)
}
