package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/rawjson"
)

// errPatch is why an operation of a patch cannot apply: a 400 from Cosmos.
type errPatch struct{ msg string }

func (e *errPatch) Error() string { return e.msg }

func patchErrorf(format string, args ...any) error {
	return &errPatch{msg: fmt.Sprintf(format, args...)}
}

// applyPatch applies a validated patch to a stored document and returns the new body.
// It takes apart only the objects and arrays on each operation's path, by slicing the
// stored bytes (valid, compact JSON: stage stored them): every value off the paths is
// carried over as the very bytes it was stored as, and every member keeps its place.
func applyPatch(body []byte, ops []database.PatchOperation) ([]byte, error) {
	root := body
	for i, op := range ops {
		segments := database.PointerNames(op.Path)
		if strings.HasPrefix(segments[0], "_") {
			return nil, patchErrorf("patch operation %d: the system property %q cannot be patched", i, segments[0])
		}
		if op.Path == "/id" || op.Path == "/partitionKey" {
			return nil, patchErrorf("patch operation %d: %s is the id or the partition key and cannot be patched", i, op.Path)
		}
		if len(op.Value) > 0 {
			// Stored documents are compact; so is what a patch puts in them.
			var compact bytes.Buffer
			if err := json.Compact(&compact, op.Value); err != nil {
				return nil, patchErrorf("patch operation %d (%s %s): the value is not JSON: %v", i, op.Kind, op.Path, err)
			}
			op.Value = compact.Bytes()
		}
		next, err := edit(root, segments, op)
		if err != nil {
			return nil, patchErrorf("patch operation %d (%s %s): %v", i, op.Kind, op.Path, err)
		}
		root = next
	}
	return root, nil
}

func firstByte(raw []byte) byte {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 {
		return 0
	}
	return trimmed[0]
}

// members is a JSON object as its members in document order, each value the raw bytes
// it was read as.
type members struct {
	keys   []string
	values [][]byte
}

// parseMembers splits a JSON object. A key that appears twice keeps its first place and
// its last value, as a decode into a map keeps it.
func parseMembers(raw []byte) (members, error) {
	keys, values, err := rawjson.Object(raw)
	if err != nil {
		return members{}, err
	}
	m := members{keys: make([]string, 0, len(keys)), values: make([][]byte, 0, len(keys))}
	for i, k := range keys {
		m.set(k, values[i])
	}
	return m, nil
}

// index is where key is, or -1.
func (m *members) index(key string) int {
	return slices.Index(m.keys, key)
}

// get is key's value, if the object has key.
func (m *members) get(key string) ([]byte, bool) {
	if i := m.index(key); i >= 0 {
		return m.values[i], true
	}
	return nil, false
}

// set replaces key's value in its place, or adds key at the end.
func (m *members) set(key string, value []byte) {
	if i := m.index(key); i >= 0 {
		m.values[i] = value
		return
	}
	m.keys = append(m.keys, key)
	m.values = append(m.values, value)
}

// remove deletes key, reporting whether it was there.
func (m *members) remove(key string) bool {
	i := m.index(key)
	if i < 0 {
		return false
	}
	m.keys = slices.Delete(m.keys, i, i+1)
	m.values = slices.Delete(m.values, i, i+1)
	return true
}

func (m *members) appendTo(dst []byte) []byte {
	dst = append(dst, '{')
	for i, k := range m.keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(rawjson.AppendString(dst, k), ':')
		dst = append(dst, m.values[i]...)
	}
	return append(dst, '}')
}

func appendArray(dst []byte, elems [][]byte) []byte {
	dst = append(dst, '[')
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e...)
	}
	return append(dst, ']')
}

// edit applies op at segments below raw, which must be an object or an array, and
// returns raw with the change made.
func edit(raw []byte, segments []string, op database.PatchOperation) ([]byte, error) {
	key := segments[0]
	switch firstByte(raw) {
	case '{':
		obj, err := parseMembers(raw)
		if err != nil {
			return nil, err
		}
		if len(segments) > 1 {
			i := obj.index(key)
			if i < 0 || !isContainer(obj.values[i]) {
				return nil, fmt.Errorf("%q does not exist or is not an object or array; a patch creates only the path's last segment", key)
			}
			updated, err := edit(obj.values[i], segments[1:], op)
			if err != nil {
				return nil, err
			}
			obj.values[i] = updated
		} else if err := editObject(&obj, key, op); err != nil {
			return nil, err
		}
		return obj.appendTo(make([]byte, 0, len(raw)+len(op.Value)+len(key)+4)), nil
	case '[':
		arr, err := rawjson.Array(raw)
		if err != nil {
			return nil, err
		}
		if len(segments) > 1 {
			i, err := index(arr, key, false)
			if err != nil {
				return nil, err
			}
			if !isContainer(arr[i]) {
				return nil, fmt.Errorf("element %d is not an object or array", i)
			}
			updated, err := edit(arr[i], segments[1:], op)
			if err != nil {
				return nil, err
			}
			arr[i] = updated
		} else if arr, err = editArray(arr, key, op); err != nil {
			return nil, err
		}
		return appendArray(make([]byte, 0, len(raw)+len(op.Value)+1), arr), nil
	}
	return nil, fmt.Errorf("the parent of %q is not an object or array", key)
}

func isContainer(raw []byte) bool {
	b := firstByte(raw)
	return b == '{' || b == '['
}

// index parses an array index; end allows the array's length (an append).
func index(arr [][]byte, key string, end bool) (int, error) {
	i, err := strconv.Atoi(key)
	if err != nil || i < 0 || strings.HasPrefix(key, "+") {
		return 0, fmt.Errorf("%q is not an array index", key)
	}
	if i > len(arr) || (!end && i == len(arr)) {
		return 0, fmt.Errorf("index %d is out of the array's bounds (length %d)", i, len(arr))
	}
	return i, nil
}

func editObject(obj *members, key string, op database.PatchOperation) error {
	i := obj.index(key)
	switch op.Kind {
	case database.PatchSet, database.PatchAdd:
		obj.set(key, op.Value)
	case database.PatchReplace:
		if i < 0 {
			return errors.New("replace needs an existing path")
		}
		obj.values[i] = op.Value
	case database.PatchRemove:
		if !obj.remove(key) {
			return errors.New("remove needs an existing path")
		}
	case database.PatchIncrement:
		if i < 0 {
			obj.set(key, op.Value)
			return nil
		}
		sum, err := increment(obj.values[i], op.Value)
		if err != nil {
			return err
		}
		obj.values[i] = sum
	default:
		return fmt.Errorf("unknown operation %q", op.Kind)
	}
	return nil
}

func editArray(arr [][]byte, key string, op database.PatchOperation) ([][]byte, error) {
	if op.Kind == database.PatchAdd {
		if key == "-" {
			return append(arr, op.Value), nil
		}
		i, err := index(arr, key, true)
		if err != nil {
			return nil, err
		}
		return slices.Insert(arr, i, []byte(op.Value)), nil
	}
	i, err := index(arr, key, false)
	if err != nil {
		return nil, err
	}
	switch op.Kind {
	case database.PatchSet, database.PatchReplace:
		arr[i] = op.Value
	case database.PatchRemove:
		arr = slices.Delete(arr, i, i+1)
	case database.PatchIncrement:
		sum, err := increment(arr[i], op.Value)
		if err != nil {
			return nil, err
		}
		arr[i] = sum
	default:
		return nil, fmt.Errorf("unknown operation %q", op.Kind)
	}
	return arr, nil
}

// increment adds the integer by to the number cur: exactly while both are integers
// that fit an int64, in floating point otherwise, as Cosmos does.
func increment(cur, by []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(cur))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("the value %s is not a number and cannot be incremented", cur)
	}
	delta, err := strconv.ParseInt(string(by), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("increment %s is not an integer", by)
	}
	if i, err := n.Int64(); err == nil {
		sum := i + delta
		if (delta > 0 && sum > i) || (delta <= 0 && sum <= i) {
			return json.RawMessage(strconv.FormatInt(sum, 10)), nil
		}
	}
	f, err := n.Float64()
	if err != nil {
		return nil, err
	}
	sum := f + float64(delta)
	if math.IsInf(sum, 0) {
		return nil, fmt.Errorf("incrementing %s by %d overflows", cur, delta)
	}
	return json.Marshal(sum)
}
