package placement

// countableQuantitiesFilter rejects an MC whose ceiling, usage or requests of a counted
// resource is no quantity the engine can count (ParseQuantity): what it has left is
// unknown.
type countableQuantitiesFilter struct{ staticFilter }

func (countableQuantitiesFilter) Name() string { return "CountableQuantities" }

func (countableQuantitiesFilter) check(j *judgement) (Reason, string) {
	if !j.mc.counted {
		return ReasonNoSchedulingData, j.mc.countErr
	}
	return "", ""
}
