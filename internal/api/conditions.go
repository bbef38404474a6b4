package api

import "time"

// Condition statuses.
const (
	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)

// FindCondition returns the condition of a type, or nil.
func FindCondition(conditions []Condition, conditionType string) *Condition {
	for i := range conditions {
		if conditions[i].Type == conditionType {
			return &conditions[i]
		}
	}
	return nil
}

// IsConditionTrue reports whether the condition exists and is True.
func IsConditionTrue(conditions []Condition, conditionType string) bool {
	c := FindCondition(conditions, conditionType)
	return c != nil && c.Status == ConditionTrue
}

// SetCondition sets a condition the way metav1 does: lastTransitionTime moves only when
// the status changes, and nothing changes when status, reason and message are the same.
// It reports whether anything changed, so callers write only when needed.
func SetCondition(conditions *[]Condition, c Condition, now time.Time) bool {
	existing := FindCondition(*conditions, c.Type)
	if existing == nil {
		c.LastTransitionTime = now.UTC().Truncate(time.Second)
		*conditions = append(*conditions, c)
		return true
	}
	if existing.Status == c.Status && existing.Reason == c.Reason && existing.Message == c.Message && existing.ObservedGeneration == c.ObservedGeneration {
		return false
	}
	if existing.Status != c.Status {
		existing.LastTransitionTime = now.UTC().Truncate(time.Second)
	}
	existing.Status, existing.Reason, existing.Message, existing.ObservedGeneration = c.Status, c.Reason, c.Message, c.ObservedGeneration
	return true
}
