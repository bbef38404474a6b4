package placement_test

import (
	"testing"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestCountableQuantitiesFilter(t *testing.T) {
	unparsable := "unparsable quantity for " + api.SwiftNIC
	checkFilter(t, placement.FilterCountableQuantities, []filterCase{
		{name: "ceiling and usage count", spec: mcSpec{ceiling: "30", usage: "1500m"}},
		{name: "a ceiling that is no quantity", spec: mcSpec{badQuantity: true},
			wantReason: placement.ReasonNoSchedulingData, wantDetail: unparsable},
		{name: "an empty usage value is no quantity", spec: mcSpec{rawUsage: api.ResourceList{api.SwiftNIC: ""}},
			wantReason: placement.ReasonNoSchedulingData, wantDetail: unparsable},
		{name: "a negative usage", spec: mcSpec{usage: "-1"},
			wantReason: placement.ReasonNoSchedulingData, wantDetail: unparsable},
		{name: "a ceiling beyond what int64 milli-units hold", spec: mcSpec{ceiling: "9223372036854775808"},
			wantReason: placement.ReasonNoSchedulingData, wantDetail: unparsable},
		{name: "an absent usage counts as zero", spec: mcSpec{rawUsage: api.ResourceList{}}},
		{name: "a second counted resource that is no quantity", cfg: withCPU(),
			spec:       mcSpec{extraCeiling: api.ResourceList{"cpu": "64"}, extraUsage: api.ResourceList{"cpu": "some"}},
			wantReason: placement.ReasonNoSchedulingData, wantDetail: "unparsable quantity for cpu"},
		{name: "a resource that is not counted is not read", spec: mcSpec{extraUsage: api.ResourceList{"memory": "lots"}}},
		{name: "whether it fits is another filter's business", spec: mcSpec{ceiling: "3", usage: "3"}},
	})
}
