package placement

// countableQuantitiesFilter rejects an MC whose ceiling or usage of a counted resource
// is no quantity the engine can count (ParseQuantity): what it has left is unknown.
type countableQuantitiesFilter struct{}

func (countableQuantitiesFilter) Name() string { return "CountableQuantities" }

func (countableQuantitiesFilter) check(j *judgement) (Reason, string) {
	if err := j.capacity().err; err != nil {
		return ReasonNoSchedulingData, err.Error()
	}
	return "", ""
}
