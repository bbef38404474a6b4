package placement

// score ranks a feasible MC; higher is better. holds says the cluster's cost is already
// in what the MC has available (its reservation is there).
//   - spread: what is left of the first resource once this cluster is placed (more is
//     better), less a penalty per pending reservation of other clusters: MCs with many
//     placements in flight have the most uncertain numbers;
//   - binpack: the same with what is left counted the other way (less is better);
//   - dominant: minus the largest share, in percentage points, that any counted
//     resource's use would reach of its ceiling once this cluster is placed: the MC whose
//     most contended resource is least contended wins. Pending reservations break ties
//     (choose) rather than weigh, as in ARO-HCP's contention ranking.
func (m *Model) score(mc *MC, cost []int64, holds bool) float64 {
	need := func(i int) int64 {
		if holds {
			return 0
		}
		return cost[i]
	}
	if m.cfg.Weigher == WeigherDominant {
		share := 0.0
		for i, ceiling := range mc.ceiling {
			if ceiling <= 0 {
				// Nothing of it to share; the fit check has seen that the cluster needs none.
				continue
			}
			used := ceiling - mc.available[i] + need(i)
			share = max(share, 100*float64(used)/float64(ceiling))
		}
		return -share
	}
	left := float64(mc.available[0]-need(0)) / 1000
	if m.cfg.Weigher == WeigherBinPack {
		left = -left
	}
	others := len(mc.pending)
	if holds {
		others--
	}
	return left - m.cfg.PendingMultiplier*float64(others)
}
