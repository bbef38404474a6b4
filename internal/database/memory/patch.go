package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hcpsched/hcpsched/internal/database"
)

// errPatch is why an operation of a patch cannot apply: a 400 from Cosmos.
type errPatch struct{ msg string }

func (e *errPatch) Error() string { return e.msg }

func patchErrorf(format string, args ...any) error {
	return &errPatch{msg: fmt.Sprintf(format, args...)}
}

// applyPatch applies a validated patch to a stored document and returns the new body.
// It decodes only the objects and arrays on each operation's path: every value off the
// paths is carried over as the very bytes it was stored as.
func applyPatch(body []byte, ops []database.PatchOperation) ([]byte, error) {
	root := json.RawMessage(body)
	for i, op := range ops {
		segments := database.PointerNames(op.Path)
		if strings.HasPrefix(segments[0], "_") {
			return nil, patchErrorf("patch operation %d: the system property %q cannot be patched", i, segments[0])
		}
		if op.Path == "/id" || op.Path == "/partitionKey" {
			return nil, patchErrorf("patch operation %d: %s is the id or the partition key and cannot be patched", i, op.Path)
		}
		next, err := edit(root, segments, op)
		if err != nil {
			return nil, patchErrorf("patch operation %d (%s %s): %v", i, op.Kind, op.Path, err)
		}
		root = next
	}
	return root, nil
}

func firstByte(raw json.RawMessage) byte {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 {
		return 0
	}
	return trimmed[0]
}

// edit applies op at segments below raw, which must be an object or an array, and
// returns raw re-encoded.
func edit(raw json.RawMessage, segments []string, op database.PatchOperation) (json.RawMessage, error) {
	key := segments[0]
	switch firstByte(raw) {
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		if len(segments) > 1 {
			child, ok := obj[key]
			if !ok || !isContainer(child) {
				return nil, fmt.Errorf("%q does not exist or is not an object or array; a patch creates only the path's last segment", key)
			}
			updated, err := edit(child, segments[1:], op)
			if err != nil {
				return nil, err
			}
			obj[key] = updated
		} else if err := editObject(obj, key, op); err != nil {
			return nil, err
		}
		return json.Marshal(obj)
	case '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
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
		} else {
			var err error
			if arr, err = editArray(arr, key, op); err != nil {
				return nil, err
			}
		}
		return json.Marshal(arr)
	}
	return nil, fmt.Errorf("the parent of %q is not an object or array", key)
}

func isContainer(raw json.RawMessage) bool {
	b := firstByte(raw)
	return b == '{' || b == '['
}

// index parses an array index; end allows the array's length (an append).
func index(arr []json.RawMessage, key string, end bool) (int, error) {
	i, err := strconv.Atoi(key)
	if err != nil || i < 0 || strings.HasPrefix(key, "+") {
		return 0, fmt.Errorf("%q is not an array index", key)
	}
	if i > len(arr) || (!end && i == len(arr)) {
		return 0, fmt.Errorf("index %d is out of the array's bounds (length %d)", i, len(arr))
	}
	return i, nil
}

func editObject(obj map[string]json.RawMessage, key string, op database.PatchOperation) error {
	cur, exists := obj[key]
	switch op.Kind {
	case database.PatchSet, database.PatchAdd:
		obj[key] = op.Value
	case database.PatchReplace:
		if !exists {
			return errors.New("replace needs an existing path")
		}
		obj[key] = op.Value
	case database.PatchRemove:
		if !exists {
			return errors.New("remove needs an existing path")
		}
		delete(obj, key)
	case database.PatchIncrement:
		if !exists {
			obj[key] = op.Value
			return nil
		}
		sum, err := increment(cur, op.Value)
		if err != nil {
			return err
		}
		obj[key] = sum
	default:
		return fmt.Errorf("unknown operation %q", op.Kind)
	}
	return nil
}

func editArray(arr []json.RawMessage, key string, op database.PatchOperation) ([]json.RawMessage, error) {
	if op.Kind == database.PatchAdd {
		if key == "-" {
			return append(arr, op.Value), nil
		}
		i, err := index(arr, key, true)
		if err != nil {
			return nil, err
		}
		return append(arr[:i], append([]json.RawMessage{op.Value}, arr[i:]...)...), nil
	}
	i, err := index(arr, key, false)
	if err != nil {
		return nil, err
	}
	switch op.Kind {
	case database.PatchSet, database.PatchReplace:
		arr[i] = op.Value
	case database.PatchRemove:
		arr = append(arr[:i], arr[i+1:]...)
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
func increment(cur, by json.RawMessage) (json.RawMessage, error) {
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
