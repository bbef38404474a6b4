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
func (m *Model) choose(key string, verdicts []Verdict) int {
	tolerance := m.cfg.Tolerance
	if m.cfg.Weigher == WeigherDominant {
		tolerance = m.cfg.DominantTolerance
	}
	best := math.Inf(-1)
	for i := range verdicts {
		if v := &verdicts[i]; v.Reason == "" && v.Score > best {
			best = v.Score
		}
	}
	chosen := -1
	if tolerance == 0 {
		for i := range verdicts {
			v := &verdicts[i]
			if v.Reason != "" || v.Score < best {
				continue
			}
			if chosen < 0 || before(v.MC, verdicts[chosen].MC) {
				chosen = i
			}
		}
		return chosen
	}
	seed := fnvString(fnvOffset, key)
	// A 0 byte between the cluster's ID and the MC's: FNV-1a's xor with it is a no-op.
	seed *= fnvPrime
	var top uint64
	for i := range verdicts {
		v := &verdicts[i]
		if v.Reason != "" || v.Score < best-tolerance {
			continue
		}
		// Rendezvous hashing: each cluster ranks the contenders its own way, by a hash of
		// its ID and theirs.
		h := fnvString(seed, v.MC.key)
		if chosen < 0 || h > top || (h == top && v.MC.key < verdicts[chosen].MC.key) {
			chosen, top = i, h
		}
	}
	return chosen
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
