package placement

import (
	"github.com/hcpsched/hcpsched/internal/api"
)

// FallbackReason says why per-HCP costs could not be taken from the HCPResourceRequirements
// document, so placement used its configured costs instead. The values are metric label
// values; "" means the document was used.
type FallbackReason string

const (
	// FallbackNoDocument: the cache has no requirements document (or only its soft delete).
	FallbackNoDocument FallbackReason = "no_document"
	// FallbackNotCurrent: DataCurrent is not True, for instance NoData when no MC had a
	// current report with a ready HCP.
	FallbackNotCurrent FallbackReason = "not_current"
	// FallbackNoSamples: the averages are over no HCP at all.
	FallbackNoSamples FallbackReason = "no_samples"
	// FallbackMissingResource: a counted resource is in neither average.
	FallbackMissingResource FallbackReason = "missing_resource"
	// FallbackInvalidQuantity: an average of a counted resource is not a quantity placement
	// can count (unparsable, negative or beyond int64 milli-units).
	FallbackInvalidQuantity FallbackReason = "invalid_quantity"
	// FallbackZeroCost: a counted resource averages to nothing. An HCP always costs some of
	// every counted resource, so a zero says the averages are wrong, and charging nothing
	// would let placement fill an MC without limit.
	FallbackZeroCost FallbackReason = "zero_cost"
)

// FallbackReasons lists every reason, so that metrics can be initialised to zero.
var FallbackReasons = []FallbackReason{
	FallbackNoDocument, FallbackNotCurrent, FallbackNoSamples,
	FallbackMissingResource, FallbackInvalidQuantity, FallbackZeroCost,
}

// CostsFromRequirements reads, for each named resource, what one HCP costs according to an
// HCPResourceRequirements document: the larger of its averageUsage and averageRequests, in
// milli-units, in the order of resources. The larger is taken for the reason placement
// subtracts max(usage, requests) from an MC: an HCP holds what its pods request even while
// it uses less. A resource present in one average only costs that average. When the
// document cannot be used it returns nil and a FallbackReason saying why; one unusable
// resource makes the whole document unusable, since mixing its costs with configured ones
// would compare the resources on different terms.
//
// The averages mix every kind of HCP and are rounded down (see
// api.HCPResourceRequirementsStatus), so callers should not take a swift-nic cost from
// here in place of the per-cluster NIC rule.
func CostsFromRequirements(doc *api.HCPResourceRequirements, resources []string) ([]int64, FallbackReason) {
	if doc == nil || doc.IsDeleted() {
		return nil, FallbackNoDocument
	}
	status := doc.Properties.Status
	if status == nil || !api.IsConditionTrue(status.Conditions, api.HCPResourceRequirementsConditionDataCurrent) {
		return nil, FallbackNotCurrent
	}
	if status.SampleSize <= 0 {
		return nil, FallbackNoSamples
	}
	costs := make([]int64, len(resources))
	for i, name := range resources {
		usage, inUsage := status.AverageUsage[name]
		requests, inRequests := status.AverageRequests[name]
		if !inUsage && !inRequests {
			return nil, FallbackMissingResource
		}
		u, okU := averageMilli(usage, inUsage)
		r, okR := averageMilli(requests, inRequests)
		if !okU || !okR {
			return nil, FallbackInvalidQuantity
		}
		cost := max(u, r)
		if cost == 0 {
			return nil, FallbackZeroCost
		}
		costs[i] = cost
	}
	return costs, ""
}

// averageMilli is one average of a resource in milli-units; an absent average is 0, a
// present one must be a quantity ParseQuantity accepts.
func averageMilli(value string, present bool) (int64, bool) {
	if !present {
		return 0, true
	}
	q, err := ParseQuantity(value)
	if err != nil {
		return 0, false
	}
	return q.MilliValue(), true
}
