package placement

import "github.com/hcpsched/hcpsched/internal/api"

// score ranks a feasible MC by what is left of the first resource once this cluster is
// placed (spread: more is better; bin-pack: less is better), less a penalty per pending
// reservation: MCs with many placements in flight have the most uncertain numbers.
func (e *evaluation) score(v Verdict, st *api.SchedulingStatus, need int64) float64 {
	left := float64(v.Available[e.cfg.Resources[0].Name]-need) / 1000
	if e.cfg.Weigher == WeigherBinPack {
		left = -left
	}
	pending := 0
	for _, id := range st.PendingAssignedClusters {
		if id != "" && !api.ResourceIDsEqual(id, e.cluster.ResourceID) {
			pending++
		}
	}
	return left - e.cfg.PendingMultiplier*float64(pending)
}
