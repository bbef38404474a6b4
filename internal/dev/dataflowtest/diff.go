package dataflowtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// Diff lists the leaf paths whose values differ between two documents (before nil: a
// Create, every leaf of after). Paths drop the "properties." prefix, array elements are
// "[]", and a condition (an element with a "type") is "conditions[<type>]".
func Diff(before, after []byte) ([]string, error) {
	var b, a any
	if before != nil {
		if err := decode(before, &b); err != nil {
			return nil, fmt.Errorf("decoding the stored document: %w", err)
		}
	}
	if err := decode(after, &a); err != nil {
		return nil, fmt.Errorf("decoding the written document: %w", err)
	}
	// Cosmos stamps its system properties on every write; no controller writes them.
	bm, _ := b.(map[string]any)
	am, _ := a.(map[string]any)
	arohcp.WithoutSystemProperties(bm)
	arohcp.WithoutSystemProperties(am)
	seen := map[string]bool{}
	diff("", bm, am, seen)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(p, "properties"), "."))
	}
	slices.Sort(out)
	// A change of properties itself (absent before) has the empty path; its leaves are
	// listed anyway.
	return slices.DeleteFunc(out, func(p string) bool { return p == "" }), nil
}

func decode(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func diff(path string, before, after any, out map[string]bool) {
	if reflect.DeepEqual(before, after) {
		return
	}
	switch a := after.(type) {
	case map[string]any:
		b, _ := before.(map[string]any)
		// An object emptied by the write changed the leaves it lost; one that appears
		// empty is a change of its own path.
		if len(a) == 0 && len(b) == 0 {
			out[path] = true
			return
		}
		for k, v := range a {
			diff(join(path, k), b[k], v, out)
		}
		for k, v := range b {
			if _, ok := a[k]; !ok {
				diff(join(path, k), v, nil, out)
			}
		}
	case []any:
		b, _ := before.([]any)
		if len(a) == 0 {
			out[path] = true
			return
		}
		diffArray(path, b, a, out)
	case nil:
		// Removed: its old leaves are the changed paths.
		switch b := before.(type) {
		case map[string]any:
			if len(b) == 0 {
				out[path] = true
			}
			for k, v := range b {
				diff(join(path, k), v, nil, out)
			}
		case []any:
			diffArray(path, b, nil, out)
		default:
			out[path] = true
		}
	default:
		out[path] = true
	}
}

// diffArray compares conditions by type and other arrays element by element.
func diffArray(path string, before, after []any, out map[string]bool) {
	if bt, at := byType(before), byType(after); bt != nil && at != nil {
		for t, v := range at {
			diff(path+"["+t+"]", bt[t], v, out)
		}
		for t, v := range bt {
			if _, ok := at[t]; !ok {
				diff(path+"["+t+"]", v, nil, out)
			}
		}
		return
	}
	for i := range max(len(before), len(after)) {
		var b, a any
		if i < len(before) {
			b = before[i]
		}
		if i < len(after) {
			a = after[i]
		}
		diff(path+"[]", b, a, out)
	}
}

// byType indexes an array of conditions by type; nil when some element is not one.
func byType(arr []any) map[string]any {
	m := map[string]any{}
	for _, e := range arr {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		t, ok := obj["type"].(string)
		if !ok {
			return nil
		}
		m[t] = obj
	}
	return m
}
