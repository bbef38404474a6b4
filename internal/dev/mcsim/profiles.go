package mcsim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hcpsched/hcpsched/internal/api"
)

// ParseStampNodes reads "stamp=nodes,stamp=nodes", the per-MC node counts that differ
// from the default (a tight MC has fewer nodes).
func ParseStampNodes(s string) (map[string]int, error) {
	out := map[string]int{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for pair := range strings.SplitSeq(s, ",") {
		stamp, n, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || stamp == "" {
			return nil, fmt.Errorf("%q is not stamp=nodes", pair)
		}
		nodes, err := strconv.Atoi(n)
		if err != nil || nodes < 0 {
			return nil, fmt.Errorf("%q: node count must be a non-negative integer", pair)
		}
		out[strings.ToLower(stamp)] = nodes
	}
	return out, nil
}

// ProfilesByStamp gives every MC base, with the node count of stampNodes for its stamp
// when it has one.
func ProfilesByStamp(base Profile, stampNodes map[string]int) func(mc *api.ResourceID) Profile {
	return func(mc *api.ResourceID) Profile {
		p := base
		if stamp, err := api.FleetPartitionKey(mc); err == nil {
			if n, ok := stampNodes[stamp]; ok {
				p.Nodes = n
			}
		}
		return p
	}
}
