package placement

// schedulingDataFilter rejects an MC without the scheduling data the engine counts
// from: a scheduling document with observed resources and a scale ceiling for every
// counted resource. The filters after it may rely on those being there.
type schedulingDataFilter struct{ staticFilter }

func (schedulingDataFilter) Name() string { return "SchedulingData" }

func (schedulingDataFilter) check(j *judgement) (Reason, string) {
	st := j.mc.status
	if st == nil || st.ObservedResources == nil || st.ScaleCeiling == nil {
		return ReasonNoSchedulingData, "no scheduling document"
	}
	for _, name := range j.mc.model.names {
		if _, ok := st.ScaleCeiling.Capacity[name]; !ok {
			return ReasonNoSchedulingData, "no scale ceiling for " + name
		}
	}
	return "", ""
}
