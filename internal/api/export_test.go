package api

import "reflect"

// Internals the external tests hold to their references or look into.
var (
	ValidJSON       = validJSON
	MaxNestingDepth = maxNestingDepth
	MaxSharedLevels = maxSharedLevels
)

// ContainerSpans is what scanJSON records of data: where each container starts and
// ends, in the order they open, and whether data is valid.
func ContainerSpans(data []byte) (starts, ends []int, valid bool) {
	spans, valid := scanJSON(data, nil, true)
	for _, s := range spans {
		starts = append(starts, s.start)
		ends = append(ends, s.end)
	}
	return starts, ends, valid
}

// SharedLevels is how many levels DecodeLean holds for documents to share in the field
// of level type L named (in JSON) field.
func SharedLevels[L any](field string) int {
	p := leanPlanFor(reflect.TypeFor[L]())
	s := p.fields[p.byName[field]].shared
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byRaw)
}

// BadInternLevel is tagged intern where DecodeLean cannot intern.
type BadInternLevel struct {
	N int `json:"n" hcpsched:"intern"`
	Object
}

// PlanBadInternLevel plans BadInternLevel's lean decode.
func PlanBadInternLevel() { leanPlanFor(reflect.TypeFor[BadInternLevel]()) }
