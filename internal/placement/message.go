package placement

import (
	"fmt"
	"strings"

	"github.com/hcpsched/hcpsched/internal/api"
)

// MaxMessageLength bounds the SPC condition message: a region may have hundreds of MCs.
const MaxMessageLength = 1024

// Message explains a decision in one line for the SPC's CapacityAvailable condition,
// naming each MC's reason, MCs in resource-ID order.
func (d Decision) Message() string {
	if d.Outcome == OutcomeNoManagementClusters {
		return "no management clusters are registered"
	}
	if d.Chosen != nil {
		return "placed on " + shortName(d.Chosen.ID())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "0 of %d management clusters fit:", d.Len())
	for i := range d.Len() {
		v := d.Verdict(i)
		part := fmt.Sprintf(" %s: %s", shortName(v.ManagementCluster()), v.Reason)
		if detail := v.Detail(); detail != "" {
			part += " (" + detail + ")"
		}
		if i < d.Len()-1 {
			part += ";"
		}
		rest := fmt.Sprintf(" ... and %d more", d.Len()-i)
		if b.Len()+len(part) > MaxMessageLength-len(rest) {
			b.WriteString(rest)
			break
		}
		b.WriteString(part)
	}
	return b.String()
}

// shortName is "stamp <name>" for fleet MC IDs, the ID itself otherwise.
func shortName(mcID string) string {
	rid, err := api.ParseResourceID(mcID)
	if err == nil && len(rid.Types) > 0 && strings.EqualFold(rid.Types[0], "stamps") {
		return "stamp " + rid.Names[0]
	}
	return mcID
}
