package placement

import (
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// AddFlags registers the engine's settings on fs, filling cfg (which starts as
// DefaultConfig).
func AddFlags(fs *flag.FlagSet, cfg *Config) {
	*cfg = DefaultConfig()
	fs.Var((*costsFlag)(&cfg.Resources), "placement-resource-costs",
		"Resources placement counts and what an HCP costs of each, as name=HA/single-replica pairs separated by commas; the first is what weighers rank by")
	fs.DurationVar(&cfg.MaxCapacityAge, "placement-max-capacity-age", cfg.MaxCapacityAge, "Oldest capacity report placement trusts")
	fs.StringVar(&cfg.Weigher, "placement-weigher", cfg.Weigher, "How feasible management clusters are ranked, one of "+strings.Join(Weighers, ", ")+
		": spread (most of the first resource left first), binpack (least left first), dominant (lowest share of its ceiling of the most used counted resource first)")
	fs.Float64Var(&cfg.PendingMultiplier, "placement-pending-multiplier", cfg.PendingMultiplier, "Score a management cluster loses per pending reservation, in units of the first resource")
	fs.Float64Var(&cfg.Tolerance, "placement-tolerance", cfg.Tolerance, "Score distance from the best within which management clusters share placements by hash (0: always the best), for spread and binpack")
	fs.Float64Var(&cfg.DominantTolerance, "placement-dominant-tolerance", cfg.DominantTolerance,
		"The dominant weigher's tolerance, in percentage points of the dominant resource's ceiling (0: always the best)")
	fs.StringVar(&cfg.CostSource, "placement-cost-source", cfg.CostSource, "Where per-HCP costs of resources other than swift NICs come from: "+CostSourceFlags+
		" (--placement-resource-costs) or "+CostSourceRequirements+" (ARO-HCP's HCPResourceRequirements document, the flag costs while it cannot be used)")
}

// costsFlag reads "aro.openshift.io/swift-nic=3/1,cpu=2/1".
type costsFlag []ResourceCost

func (f *costsFlag) String() string {
	if f == nil {
		return ""
	}
	parts := make([]string, len(*f))
	for i, r := range *f {
		parts[i] = fmt.Sprintf("%s=%s/%s", r.Name, r.HA.String(), r.SingleReplica.String())
	}
	return strings.Join(parts, ",")
}

func (f *costsFlag) Set(s string) error {
	var out []ResourceCost
	for _, part := range strings.Split(s, ",") {
		name, costs, ok := strings.Cut(strings.TrimSpace(part), "=")
		ha, single, ok2 := strings.Cut(costs, "/")
		if !ok || !ok2 || name == "" {
			return fmt.Errorf("%q is not name=HA/single-replica", part)
		}
		haQ, err := resource.ParseQuantity(ha)
		if err != nil {
			return fmt.Errorf("HA cost of %s: %w", name, err)
		}
		singleQ, err := resource.ParseQuantity(single)
		if err != nil {
			return fmt.Errorf("single-replica cost of %s: %w", name, err)
		}
		out = append(out, ResourceCost{Name: name, HA: haQ, SingleReplica: singleQ})
	}
	*f = out
	return nil
}
