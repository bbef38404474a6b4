// Package placement is the pure placement engine: given a cluster and every management
// cluster (MC) with its cached scheduling document, it decides where the cluster's hosted
// control plane goes. It does no I/O. Feasibility first (filters, each with a reason),
// then ranking (weighers), then a deterministic choice; the controller applies the
// decision as an etag-guarded reservation, which is the check at apply time.
package placement

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Defaults, defined once. docs/placement.md is tested against them.
const (
	// DefaultHACost is what a highly available HCP consumes of the default resource.
	DefaultHACost = "3"
	// DefaultSingleReplicaCost is what a single-replica HCP consumes of it.
	DefaultSingleReplicaCost = "1"
	// DefaultMaxCapacityAge is how old observedResources.lastReportedAt may be.
	DefaultMaxCapacityAge = 5 * time.Minute
	// DefaultWeigher ranks by most available first.
	DefaultWeigher = WeigherSpread
	// DefaultPendingMultiplier is the score, in units of the first resource, that each
	// pending reservation on an MC costs it.
	DefaultPendingMultiplier = 1.0
	// DefaultTolerance makes every MC within this many units of the first resource of the
	// best score a candidate; the cluster's hash picks among them, so concurrent
	// placements spread instead of all racing for the single best MC. One HA placement
	// lowers its MC's score by 4 (its cost and a pending reservation), so a tolerance
	// below that leaves, at the end of every round of placements, a single contender
	// that twenty workers race for: at 3, `make bench` measured 0.9 lost races (412) per
	// placement with 20 workers on 50 MCs, at 12 about 0.2. The price is an imbalance of
	// at most 12 swift NICs, four HA clusters, between MCs.
	DefaultTolerance = 12.0
	// DefaultDominantTolerance is the dominant weigher's tolerance, in percentage points
	// of the dominant resource's ceiling: MCs whose dominant share, after placing the
	// cluster, is within this of the best share placements by hash, for the same reason
	// as DefaultTolerance. On a 96-NIC MC one HA HCP takes about 3 points of NICs, and
	// an average HCP (HCPResourceRequirements) about 3 of a 128-core MC's CPU.
	DefaultDominantTolerance = 5.0
	// DefaultCostSource takes every per-HCP cost from the flags.
	DefaultCostSource = CostSourceFlags
)

// Where per-HCP costs come from.
const (
	// CostSourceFlags: --placement-resource-costs, for every counted resource.
	CostSourceFlags = "flags"
	// CostSourceRequirements: ARO-HCP's HCPResourceRequirements document for every counted
	// resource but swift NICs (whose cost follows the 0/1/3 rule), the flags when the
	// document cannot be used (FallbackReason says why).
	CostSourceRequirements = "hcpresourcerequirements"
)

// ClockSkewAllowance is how far in the future a capacity report's lastReportedAt may lie
// and still count as just taken: the agent on the MC, the fleet and the backend each read
// their own clock. Beyond it the report is not believed: the engine makes the MC
// StaleCapacityData, the fleet does not mirror it, and its age reads as +Inf, since a
// report dated ahead would otherwise stay fresh for ever. NTP keeps Azure hosts within a
// second of each other; a minute tolerates a badly drifting node while keeping a report
// fresh at most a minute beyond the maximum capacity age. A constant, not a setting:
// three processes must agree on it.
const ClockSkewAllowance = time.Minute

// ReportedInFuture says whether a capacity report taken at reportedAt lies further in
// the future of now than the clock-skew allowance. The engine, the fleet and the metrics
// share it so that they agree on which reports are believed.
func ReportedInFuture(reportedAt, now time.Time) bool {
	return reportedAt.Sub(now) > ClockSkewAllowance
}

// Weighers that rank feasible MCs.
const (
	// WeigherSpread prefers the MC with the most of the first resource left after placing.
	WeigherSpread = "spread"
	// WeigherBinPack prefers the MC with the least left, filling MCs one by one.
	WeigherBinPack = "binpack"
	// WeigherDominant prefers the MC whose most used counted resource, as a share of its
	// ceiling after placing, is the least used (dominant-resource ranking).
	WeigherDominant = "dominant"
)

// Weighers lists every weigher, for flags and docs.
var Weighers = []string{WeigherSpread, WeigherBinPack, WeigherDominant}

// ResourceCost is one resource placement counts, and what an HCP consumes of it. For
// swift NICs these are the costs of a SWIFT cluster; a cluster without VNet integration
// costs none.
type ResourceCost struct {
	Name          string
	HA            resource.Quantity
	SingleReplica resource.Quantity
}

// Config tunes the engine. Use DefaultConfig and change what you need.
type Config struct {
	// Resources are checked in order; the first one is the one weighers rank by.
	Resources         []ResourceCost
	MaxCapacityAge    time.Duration
	Weigher           string
	PendingMultiplier float64
	Tolerance         float64
	// DominantTolerance is Tolerance for the dominant weigher, in percentage points.
	DominantTolerance float64
	// CostSource is CostSourceFlags or CostSourceRequirements.
	CostSource string
}

// DefaultConfig counts swift NICs only: 3 for an HA HCP, 1 for a single-replica one.
func DefaultConfig() Config {
	return Config{
		Resources: []ResourceCost{{
			Name:          api.SwiftNIC,
			HA:            resource.MustParse(DefaultHACost),
			SingleReplica: resource.MustParse(DefaultSingleReplicaCost),
		}},
		MaxCapacityAge:    DefaultMaxCapacityAge,
		Weigher:           DefaultWeigher,
		PendingMultiplier: DefaultPendingMultiplier,
		Tolerance:         DefaultTolerance,
		DominantTolerance: DefaultDominantTolerance,
		CostSource:        DefaultCostSource,
	}
}

// Validate reports configuration the engine cannot use.
func (c Config) Validate() error {
	if len(c.Resources) == 0 {
		return fmt.Errorf("placement: at least one resource must be counted")
	}
	seen := map[string]bool{}
	for _, r := range c.Resources {
		if r.Name == "" || seen[r.Name] {
			return fmt.Errorf("placement: resource names must be unique and non-empty, got %q", r.Name)
		}
		seen[r.Name] = true
		if r.HA.Sign() <= 0 || r.SingleReplica.Sign() <= 0 {
			return fmt.Errorf("placement: costs of %s must be positive", r.Name)
		}
	}
	if !slices.Contains(Weighers, c.Weigher) {
		return fmt.Errorf("placement: unknown weigher %q (want one of %s)", c.Weigher, strings.Join(Weighers, ", "))
	}
	if c.CostSource != CostSourceFlags && c.CostSource != CostSourceRequirements {
		return fmt.Errorf("placement: unknown cost source %q (want %s or %s)", c.CostSource, CostSourceFlags, CostSourceRequirements)
	}
	if c.MaxCapacityAge <= 0 || c.Tolerance < 0 || c.DominantTolerance < 0 || c.PendingMultiplier < 0 {
		return fmt.Errorf("placement: capacity age must be positive; tolerances and pending multiplier must not be negative")
	}
	return nil
}
