package placement

import (
	"hash/fnv"
	"math"
	"sort"
	"strings"
)

// choose picks among feasible MCs and returns the index of the chosen one, or -1: every
// MC within tolerance of the best score is a contender, and the cluster's rendezvous
// hash over them picks one. The choice is deterministic for a cluster and a cache
// snapshot, yet different clusters deciding from the same snapshot spread over the
// contenders instead of all taking the best MC and losing the etag race to each other.
// With no tolerance, the best score wins and ties go to the lowest lowercased resource
// ID.
func choose(cluster Cluster, candidates []Candidate, verdicts []Verdict, tolerance float64) int {
	best := math.Inf(-1)
	for _, v := range verdicts {
		if v.Reason == "" && v.Score > best {
			best = v.Score
		}
	}
	var contenders []int
	for i, v := range verdicts {
		if v.Reason == "" && v.Score >= best-tolerance {
			contenders = append(contenders, i)
		}
	}
	if len(contenders) == 0 {
		return -1
	}
	sort.Slice(contenders, func(a, b int) bool { return lowerID(candidates[contenders[a]]) < lowerID(candidates[contenders[b]]) })
	if tolerance == 0 {
		return contenders[0]
	}
	chosen, top := -1, uint64(0)
	for _, i := range contenders {
		if h := rendezvous(cluster.ResourceID, lowerID(candidates[i])); chosen < 0 || h > top {
			chosen, top = i, h
		}
	}
	return chosen
}

// rendezvous is the cluster's weight for one MC; the contender of highest weight wins
// (rendezvous hashing), so each cluster ranks the contenders its own way.
func rendezvous(clusterID, mcID string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.ToLower(clusterID)))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(mcID))
	return h.Sum64()
}
