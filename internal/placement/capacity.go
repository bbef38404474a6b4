package placement

import (
	"fmt"
	"strings"

	"github.com/hcpsched/hcpsched/internal/api"
)

// tally is what an MC has left of each counted resource, in milli-units, and whether
// the cluster being placed is among its reservations; err says a quantity could not be
// counted, and then nothing else is known.
type tally struct {
	available map[string]int64
	holds     bool
	err       error
}

// tally is ceiling − usage − what not-ready HCPs and reservations hold, per counted
// resource. The filters before it have made sure st has a ceiling and observed
// resources, or st is a document the metrics read whatever the filters say of it.
func (e *evaluation) tally(st *api.SchedulingStatus) tally {
	committed, holds := e.committed(st)
	out := map[string]int64{}
	for _, r := range e.cfg.Resources {
		var ceiling, usage int64
		var err1, err2 error
		if st.ScaleCeiling != nil {
			ceiling, err1 = quantityOf(st.ScaleCeiling.Capacity, r.Name)
		}
		if st.ObservedResources != nil {
			usage, err2 = quantityOf(st.ObservedResources.Usage, r.Name)
		}
		if err1 != nil || err2 != nil {
			return tally{err: fmt.Errorf("unparsable quantity for %s", r.Name)}
		}
		out[r.Name] = ceiling - usage - committed[r.Name]
	}
	return tally{available: out, holds: holds}
}

// committed sums what the MC's not-ready HCPs and reservations hold, each cluster once
// (a cluster can briefly be both), and says whether this cluster is among the
// reservations.
func (e *evaluation) committed(st *api.SchedulingStatus) (map[string]int64, bool) {
	seen := map[string]bool{}
	holds := false
	total := map[string]int64{}
	add := func(id string, reservation bool) {
		key := strings.ToLower(id)
		if key == "" || seen[key] {
			return
		}
		seen[key] = true
		if reservation && api.ResourceIDsEqual(id, e.cluster.ResourceID) {
			holds = true
		}
		single, known := false, false
		if e.lookup != nil {
			single, known = e.lookup(id)
		}
		for _, r := range e.cfg.Resources {
			total[r.Name] += e.cost(r, known && single)
		}
	}
	for _, id := range st.NotReadyResourceIDs {
		add(id, false)
	}
	for _, id := range st.PendingAssignedClusters {
		add(id, true)
	}
	return total, holds
}

// cost is what an HCP consumes of r, in milli-units.
func (e *evaluation) cost(r ResourceCost, singleReplica bool) int64 {
	if singleReplica {
		return r.SingleReplica.MilliValue()
	}
	return r.HA.MilliValue()
}

// Capacity reports what an MC has left of each counted resource, in milli-units, and
// how many reservations it holds, whatever the filters say of it; metrics use it. ok is
// false when the MC has no scheduling data, an unparsable quantity, or usage that lacks
// a counted resource while HCPs run (it would overstate what is left).
func Capacity(c Candidate, cfg Config, lookup SingleReplicaLookup) (available map[string]int64, reservations int, ok bool) {
	st := schedulingStatus(c)
	if st == nil {
		return nil, 0, false
	}
	if _, missing := missingUsage(st, cfg.Resources); missing {
		return nil, 0, false
	}
	e := evaluation{cfg: cfg, lookup: lookup}
	t := e.tally(st)
	if t.err != nil {
		return nil, 0, false
	}
	for _, id := range st.PendingAssignedClusters {
		if id != "" {
			reservations++
		}
	}
	return t.available, reservations, true
}
