package candidates_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// benchmarkMCs is how many MCs the snapshot benchmarks hold: issue 17's target fleet.
const benchmarkMCs = 1000

// BenchmarkSnapshotCurrent measures what a decision pays for its view of 1,000 MCs:
// nothing changed since the last view; or one MC's scheduling document changed (the
// common case under load: every placement writes a reservation), parsed again and
// published, and the publishing alone.
func BenchmarkSnapshotCurrent(b *testing.B) {
	w := newWorld(b)
	keys := make([]string, benchmarkMCs)
	for i := range benchmarkMCs {
		rid := w.mc(api.ManagementClusterResourceID(fmt.Sprint(i)))
		// Each MC lists a few clusters the cache does not know, as a busy MC does.
		w.scheduling(rid, report{ceiling: 96, usage: 30, requests: 30,
			notReady: []string{clusterID(fmt.Sprint("nr-", i)).Key()},
			pending:  []string{clusterID(fmt.Sprint("p-", i)).Key(), clusterID(fmt.Sprint("q-", i)).Key()}})
		keys[i] = rid.Key()
	}
	s, _ := w.start(placement.DefaultConfig())
	require.Len(b, s.Current().MCs, benchmarkMCs)

	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		var v *candidates.View
		for b.Loop() {
			v = s.Current()
		}
		require.Len(b, v.MCs, benchmarkMCs)
	})
	b.Run("one scheduling document changed, parse and publish", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.Refresh(keys[i%benchmarkMCs])
			s.Current()
			i++
		}
	})
	b.Run("one scheduling document changed, publish", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			b.StopTimer()
			s.Refresh(keys[i%benchmarkMCs])
			b.StartTimer()
			s.Current()
			i++
		}
	})
}
