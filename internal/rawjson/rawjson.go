// Package rawjson takes apart JSON that is known to be valid (this project's own
// encodings, or bytes encoding/json has already validated) by slicing it, without
// decoding or validating it again. docwrite's diff splits a document one nesting level
// at a time along the changed path; encoding/json's decoder would validate each level
// anew, so the cost of a write grew with the document's size times its depth.
//
// Input that is not valid JSON is not detected in general; truncated input fails with
// an error rather than a panic.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"unicode/utf8"
)

// errTruncated is returned for a value that ends before it closes.
var errTruncated = errors.New("rawjson: unexpected end of JSON input")

// SkipSpace returns the index of the first byte at or after i that is not JSON white space.
func SkipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// SkipValue returns the end of the JSON value that starts at i (len(data) when it does
// not end). data must be valid JSON; a truncated value ends at len(data).
//
// Every decode runs it over each level's members, the nested ones included, so it jumps
// to the bytes that matter instead of looking at each one in turn: quotes (found with
// bytes.IndexByte) within strings, brackets and quotes within containers.
func SkipValue(data []byte, i int) int {
	if i >= len(data) {
		return len(data)
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			for j < len(data) && !structuralByte[data[j]] {
				j++
			}
			if j == len(data) {
				break
			}
			switch data[j] {
			case '"':
				j = skipString(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	default: // number, true, false, null
		j := i
		for j < len(data) && !scalarEndByte[data[j]] {
			j++
		}
		return j
	}
}

// skipString returns the end of the string starting at i (a quote): after the first
// quote not escaped, that is not preceded by an odd run of backslashes.
func skipString(data []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data)
		}
		j += k
		backslashes := 0
		for b := j - 1; b > i && data[b] == '\\'; b-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return j + 1
		}
		j++
	}
}

var (
	// structuralByte marks what SkipValue looks for inside a container.
	structuralByte = byteSet(`"{}[]`)
	// scalarEndByte marks what ends a number or a literal.
	scalarEndByte = byteSet(",}] \t\r\n")
)

func byteSet(chars string) (set [256]bool) {
	for i := range len(chars) {
		set[chars[i]] = true
	}
	return set
}

// Object returns the members of the JSON object data in document order: each key,
// decoded, and its value as a slice of data (not a copy, white space trimmed). A key
// that appears twice appears twice.
func Object(data []byte) (keys []string, values [][]byte, err error) {
	err = walkObject(data, func(key string, value []byte) bool {
		if keys == nil {
			// Room for the members of most objects of a document, so that the slices
			// are not grown member by member.
			keys, values = make([]string, 0, 8), make([][]byte, 0, 8)
		}
		keys, values = append(keys, key), append(values, value)
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	return keys, values, nil
}

// Members yields the members of the JSON object data in document order, as Object
// returns them, and stops quietly where the object ends or stops making sense: a
// truncated or malformed document still yields the members before the damage.
func Members(data []byte) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		_ = walkObject(data, yield)
	}
}

// walkObject calls yield with each member of the JSON object data until yield returns
// false, and says what is wrong with data where it is not a whole object.
func walkObject(data []byte, yield func(key string, value []byte) bool) error {
	return walkMembers(data, func(key, value []byte) bool { return yield(string(key), value) })
}

// walkMembers is walkObject with each key as bytes: the key as written when decoding
// would not change it, so a caller that only compares keys makes no string of each.
func walkMembers(data []byte, yield func(key, value []byte) bool) error {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return fmt.Errorf("rawjson: expected a JSON object, found %s", describe(data, i))
	}
	i = SkipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		if data[i] != '"' {
			return fmt.Errorf("rawjson: expected an object key, found %s", describe(data, i))
		}
		keyEnd := SkipValue(data, i)
		if keyEnd > len(data) || data[keyEnd-1] != '"' || keyEnd-i < 2 {
			return errTruncated
		}
		quoted := data[i:keyEnd]
		key, err := keyBytes(quoted)
		if err != nil {
			return err
		}
		i = SkipSpace(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return errTruncated
		}
		i = SkipSpace(data, i+1)
		if i >= len(data) {
			return errTruncated
		}
		end := SkipValue(data, i)
		if end == i {
			return fmt.Errorf("rawjson: field %s has no value", quoted)
		}
		if end == len(data) && !closes(data[i:end]) {
			return errTruncated
		}
		if !yield(key, data[i:end]) {
			return nil
		}
		i = skipComma(data, end)
	}
	if i >= len(data) {
		return errTruncated
	}
	return nil
}

// closes reports whether a value that runs to the end of the input is whole: a string or
// container must end with its closing character (a scalar simply ends there).
func closes(v []byte) bool {
	switch v[0] {
	case '"':
		return len(v) >= 2 && v[len(v)-1] == '"'
	case '{':
		return v[len(v)-1] == '}'
	case '[':
		return v[len(v)-1] == ']'
	}
	return true
}

// Array returns the elements of the JSON array data, each a slice of data (not a copy,
// white space trimmed).
func Array(data []byte) ([][]byte, error) {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, fmt.Errorf("rawjson: expected a JSON array, found %s", describe(data, i))
	}
	var elems [][]byte
	i = SkipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		end := SkipValue(data, i)
		if end == i {
			return nil, fmt.Errorf("rawjson: expected an array element, found %s", describe(data, i))
		}
		elems = append(elems, data[i:end])
		i = skipComma(data, end)
	}
	if i >= len(data) {
		return nil, errTruncated
	}
	return elems, nil
}

// Fields returns the raw values of the named members of the JSON object data, one per
// name in the order given (nil for a name the object lacks; the last value of a key that
// appears twice). It reads past the other members without taking them apart: for the
// envelope fields of a stored document (id, _etag, _lsn), which otherwise cost a decode
// of the whole body.
func Fields(data []byte, names ...string) ([][]byte, error) {
	out := make([][]byte, len(names))
	err := walkMembers(data, func(key, value []byte) bool {
		for j, name := range names {
			if string(key) == name {
				out[j] = value
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// String decodes a JSON string value; anything else (a number, null, nil) is "".
func String(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func skipComma(data []byte, i int) int {
	i = SkipSpace(data, i)
	if i < len(data) && data[i] == ',' {
		i = SkipSpace(data, i+1)
	}
	return i
}

// keyBytes is a quoted object key decoded: the bytes between the quotes as they are,
// unless the key has an escape or bytes that are not UTF-8 (which encoding/json
// replaces), which alone go through encoding/json.
func keyBytes(quoted []byte) ([]byte, error) {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner, nil
	}
	var key string
	if err := json.Unmarshal(quoted, &key); err != nil {
		return nil, fmt.Errorf("rawjson: object key %s: %w", quoted, err)
	}
	return []byte(key), nil
}

func describe(data []byte, i int) string {
	if i >= len(data) {
		return "the end of the input"
	}
	return fmt.Sprintf("%q", data[i])
}

// escaped holds the bytes encoding/json escapes in a string: control characters,
// non-ASCII (checked as UTF-8 there), '"', '\\' and, for HTML, '<', '>' and '&'. One table
// load per byte instead of seven comparisons: every string of every document the codec
// encodes (twice per write, for the patch) passes through AppendString.
var escaped = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&'
	}
	return t
}()

// AppendString appends s as a JSON string, the bytes encoding/json writes for it. A
// string of printable ASCII with nothing to escape (resource IDs, names, enum values,
// object keys: nearly every string hcpsched writes) is copied between quotes; any other
// goes through encoding/json, whose escaping (of <, > and &, too) the bytes then match.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if escaped[s[i]] {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
