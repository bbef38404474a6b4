package placement

import "math"

// choose picks among feasible MCs and returns the index of the chosen one, or -1: every
// MC within the weigher's tolerance of the best score is a contender, and the cluster's
// rendezvous hash over them picks one. The choice is deterministic for a cluster and a
// snapshot, yet different clusters deciding from the same snapshot spread over the
// contenders instead of all taking the best MC and losing the etag race to each other.
// With no tolerance, the best score wins; ties go to the MC with fewer pending
// reservations, then to the lowest lowercased resource ID. key is the cluster's
// lowercased resource ID.
func (m *Model) choose(cluster uint64, mcs []*MC, verdicts []verdict) int {
	tolerance := m.cfg.Tolerance
	if m.cfg.Weigher == WeigherDominant {
		tolerance = m.cfg.DominantTolerance
	}
	best := math.Inf(-1)
	for i := range verdicts {
		if v := &verdicts[i]; v.reason == 0 && v.score > best {
			best = v.score
		}
	}
	chosen := -1
	if tolerance == 0 {
		for i := range verdicts {
			v := &verdicts[i]
			if v.reason != 0 || v.score < best {
				continue
			}
			if chosen < 0 || before(mcs[i], mcs[chosen]) {
				chosen = i
			}
		}
		return chosen
	}
	var top uint64
	for i := range verdicts {
		v := &verdicts[i]
		if v.reason != 0 || v.score < best-tolerance {
			continue
		}
		if h := rendezvous(cluster, mcs[i].hash); chosen < 0 || h > top || (h == top && mcs[i].key < mcs[chosen].key) {
			chosen, top = i, h
		}
	}
	return chosen
}

// rendezvous is a cluster's weight for one MC, from the hashes of their lowercased IDs;
// the contender of highest weight wins (rendezvous hashing), so each cluster ranks the
// contenders its own way. The MC's hash is made once per document version (NewMC), and
// SplitMix64's finaliser spreads every bit of the pair over the weight.
func rendezvous(cluster, mc uint64) uint64 {
	z := cluster ^ (mc * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// before orders two equally scored MCs: fewer reservations first, then the lower ID.
func before(a, b *MC) bool {
	if len(a.pending) != len(b.pending) {
		return len(a.pending) < len(b.pending)
	}
	return a.key < b.key
}

// FNV-1a, 64 bits, written out so that hashing a cluster against a thousand contenders
// allocates nothing and hashes the cluster's ID once.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}
