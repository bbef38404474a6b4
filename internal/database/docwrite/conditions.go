package docwrite

import (
	"reflect"
	"slices"
	"strings"
)

// A condition list is owned one condition at a time: "properties.status.conditions[Ready]"
// owns the element of properties.status.conditions whose "type" is Ready, as the data-flow
// document spells a Write row, and leaves every other condition of the list to its own
// writer. The list's order is part of what the others own: SetCondition updates an
// element in place and appends a new one, so it never reorders them.

// ConditionField is the owned field of the one condition of type conditionType in the
// condition list at path.
func ConditionField(path, conditionType string) string {
	return path + "[" + conditionType + "]"
}

// ownedConditions returns the condition types owned in the list at path.
func ownedConditions(path string, owned Fields) []string {
	var types []string
	for _, o := range owned {
		if rest, ok := strings.CutPrefix(o, path+"["); ok && strings.HasSuffix(rest, "]") {
			types = append(types, strings.TrimSuffix(rest, "]"))
		}
	}
	return types
}

// conditionDifference compares two condition lists without the owned conditions: path
// when anything else differs, "" otherwise. A missing list is an empty one.
func conditionDifference(path string, a, b any, types []string) string {
	if !reflect.DeepEqual(othersThan(a, types), othersThan(b, types)) {
		return orRoot(path)
	}
	return ""
}

// othersThan is the list v without the elements whose type is one of types; a value that
// is not a list is kept whole, so that replacing the list by something else differs.
func othersThan(v any, types []string) any {
	if v == nil {
		return []any{}
	}
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := []any{}
	for _, el := range list {
		if m, ok := el.(map[string]any); ok {
			if t, ok := m["type"].(string); ok && slices.Contains(types, t) {
				continue
			}
		}
		out = append(out, el)
	}
	return out
}
