package api

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hcpsched/hcpsched/internal/rawjson"
)

// Object remembers one JSON object exactly as it was read: every key, in order, with its raw
// value. Other ARO-HCP components own most fields of the documents hcpsched writes, so each
// struct level hcpsched decodes embeds an Object and is encoded through it: keys the struct
// does not declare pass through byte-for-byte, and declared keys whose value did not change
// keep their original bytes (a foreign timestamp with seven fractional digits stays as it was).
//
// It is one pointer, nil in documents decoded lean (DecodeLean) or built in code: every
// level of every cached document embeds one. Copies of a struct share what it points to,
// so copy documents with DeepCopy, never by value, before changing unknown fields.
type Object struct {
	o *objectData
}

type objectData struct {
	keys []string
	raw  map[string]json.RawMessage
}

func (o Object) keys() []string {
	if o.o == nil {
		return nil
	}
	return o.o.keys
}

func (o Object) raw() map[string]json.RawMessage {
	if o.o == nil {
		return nil
	}
	return o.o.raw
}

// Unknown returns the raw value of a key the owning struct does not declare, if present.
func (o *Object) Unknown(key string) (json.RawMessage, bool) {
	v, ok := o.raw()[key]
	return v, ok
}

// SetUnknown sets or replaces a key the owning struct does not declare. Tests and migration
// code use it; controllers change only declared fields. It replaces the map entry, never
// the bytes of a value, so copies may share values (see DeepCopy).
func (o *Object) SetUnknown(key string, value json.RawMessage) {
	if o.o == nil {
		o.o = &objectData{}
	}
	if o.o.raw == nil {
		o.o.raw = map[string]json.RawMessage{}
	}
	if _, ok := o.o.raw[key]; !ok {
		o.o.keys = append(o.o.keys, key)
	}
	o.o.raw[key] = value
}

var objectType = reflect.TypeFor[Object]()

type structField struct {
	index     int
	name      string
	omitEmpty bool
	omitZero  bool
	// preserving marks fields whose values are themselves codec levels (or slices of
	// them): they reproduce their own original bytes, so this level need not keep a copy
	// of them or compare against it. That keeps a cached document at a small multiple of
	// its size instead of one copy per nesting level.
	preserving bool
	// leaf says how the value is written when it is not a level: directly for the plain
	// kinds most fields are, else through encoding/json.
	leaf leafKind
}

// leafKind is a field type the encoder writes without encoding/json: a string, integer
// or boolean type with no JSON or text marshaler of its own, or a pointer to one.
type leafKind uint8

const (
	leafOther leafKind = iota
	leafString
	leafInt
	leafUint
	leafBool
	// leafStrings is a []string (lists of resource IDs: reservations, ready HCPs).
	leafStrings
	// leafTime is a time.Time, written by its own MarshalJSON without encoding/json's
	// reflection and second pass over the marshaler's output.
	leafTime
)

var (
	stringsType       = reflect.TypeFor[[]string]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func leafKindOf(t reflect.Type, opts string) leafKind {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		return leafTime
	case stringsType:
		return leafStrings
	}
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return leafOther
	}
	for o := range strings.SplitSeq(opts, ",") {
		if o == "string" {
			return leafOther
		}
	}
	switch t.Kind() {
	case reflect.String:
		return leafString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return leafInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return leafUint
	case reflect.Bool:
		return leafBool
	}
	return leafOther
}

type structInfo struct {
	objectIndex int
	fields      []structField
	byName      map[string]int
	// sizeHint is a little more than the longest encoding of the type so far.
	sizeHint atomic.Int64
}

var structInfos sync.Map // reflect.Type -> *structInfo

func isPreserving(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return isLevel(t)
}

func infoFor(t reflect.Type) *structInfo {
	if v, ok := structInfos.Load(t); ok {
		return v.(*structInfo)
	}
	info := &structInfo{objectIndex: -1, byName: map[string]int{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type == objectType {
			info.objectIndex = i
			continue
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		sf := structField{index: i, name: name, preserving: isPreserving(f.Type), leaf: leafKindOf(f.Type, opts)}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				sf.omitEmpty = true
			case "omitzero":
				sf.omitZero = true
			}
		}
		info.byName[name] = len(info.fields)
		info.fields = append(info.fields, sf)
	}
	if info.objectIndex < 0 {
		panic(fmt.Sprintf("api: %s does not embed api.Object", t))
	}
	structInfos.Store(t, info)
	return info
}

// decodeObject fills the struct pointed to by ptr from a JSON object, one level deep: each
// declared field is decoded by encoding/json (so nested levels use their own UnmarshalJSON),
// and the whole object is remembered in the struct's Object.
func decodeObject(data []byte, ptr any) error {
	v := reflect.ValueOf(ptr).Elem()
	info := infoFor(v.Type())
	keys, raw, err := splitObject(data)
	if err != nil {
		return err
	}
	if raw == nil { // JSON null: leave the zero value, remember nothing
		return nil
	}
	for _, key := range keys {
		i, ok := info.byName[key]
		if !ok {
			continue
		}
		f := info.fields[i]
		if err := json.Unmarshal(raw[key], v.Field(f.index).Addr().Interface()); err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
		if f.preserving && string(raw[key]) != "null" {
			raw[key] = nil // the decoded value remembers itself
		}
	}
	v.Field(info.objectIndex).Set(reflect.ValueOf(Object{o: &objectData{keys: keys, raw: raw}}))
	return nil
}

// splitObject returns the keys of a JSON object in document order and their raw values,
// compacted. A duplicate key keeps its last value, as encoding/json does.
//
// It slices the input (rawjson.Object) instead of decoding it token by token: document bodies are
// large and this runs once per nesting level, so a token decoder would dominate relists.
// The input must already be valid JSON: encoding/json validates before it calls an
// UnmarshalJSON method, and Decode validates the whole document first. Truncated input
// still fails cleanly rather than panicking.
func splitObject(data []byte) ([]string, map[string]json.RawMessage, error) {
	i := rawjson.SkipSpace(data, 0)
	if i >= len(data) {
		return nil, nil, errors.New("unexpected end of JSON object")
	}
	switch data[i] {
	case 'n':
		return nil, nil, nil
	case '{':
	default:
		return nil, nil, fmt.Errorf("expected a JSON object, found %s", describeValue(data[i]))
	}
	members, values, err := rawjson.Object(data)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	raw := make(map[string]json.RawMessage, len(members))
	for n, key := range members {
		value := values[n]
		if bytes.ContainsAny(value, " \t\r\n") {
			var compact bytes.Buffer
			if err := json.Compact(&compact, value); err != nil {
				return nil, nil, fmt.Errorf("field %q: %w", key, err)
			}
			value = compact.Bytes()
		} else {
			value = append(json.RawMessage(nil), value...)
		}
		if _, seen := raw[key]; !seen {
			keys = append(keys, key)
		}
		raw[key] = value
	}
	return keys, raw, nil
}

func describeValue(b byte) string {
	switch b {
	case '[':
		return "'['"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// encodeObject writes the struct pointed to by ptr as a JSON object: first the keys it was
// read with, in their original order, then declared fields that are new. A declared field
// whose value is semantically unchanged keeps its original bytes; one that is now empty and
// marked omitempty/omitzero disappears, as encoding/json would omit it.
func encodeObject(ptr any) ([]byte, error) {
	v := reflect.ValueOf(ptr).Elem()
	info := infoFor(v.Type())
	// The buffer starts at the size this type last encoded to: grown by doubling from a
	// guess, a document's buffers came to about three times its size.
	out, err := appendObject(make([]byte, 0, max(info.sizeHint.Load(), 64)), v)
	if n := int64(len(out)); err == nil && n > info.sizeHint.Load() {
		info.sizeHint.Store(n + n/8)
	}
	return out, err
}

// appendObject is encodeObject appending to dst. A whole document is written into one
// buffer: a nested level is appended in place, not encoded apart and copied into its
// parent (and, through encoding/json, checked and compacted again) at every level above
// it, and plain strings, integers and booleans are written directly. Every controller
// write encodes its document twice (docwrite), so this is on every write's path.
func appendObject(dst []byte, v reflect.Value) ([]byte, error) {
	info := infoFor(v.Type())
	o := v.Field(info.objectIndex).Interface().(Object)
	keys, raw := o.keys(), o.raw()

	dst = append(dst, '{')
	open := len(dst)
	key := func(dst []byte, k string) []byte {
		if len(dst) > open {
			dst = append(dst, ',')
		}
		return append(rawjson.AppendString(dst, k), ':')
	}
	var err error
	for _, k := range keys {
		i, ok := info.byName[k]
		if !ok {
			dst = append(key(dst, k), raw[k]...)
			continue
		}
		f := info.fields[i]
		fv := v.Field(f.index)
		present := !f.omitted(fv)
		original := raw[k]
		switch {
		case f.preserving && original == nil && present:
			if dst, err = appendField(key(dst, k), f, fv); err != nil {
				return nil, err
			}
		case f.preserving && original == nil:
			if fv.Kind() == reflect.Slice && !fv.IsNil() {
				dst = append(key(dst, k), "[]"...) // read as [], still empty: keep saying so
			}
		case !present:
			// Still present if the original said the same thing (for example "[]" for an
			// omitempty list): dropping it would change the document for its other readers.
			if b, _ := json.Marshal(fv.Interface()); jsonEqual(b, original) {
				dst = append(key(dst, k), original...)
			}
		default:
			dst = key(dst, k)
			start := len(dst)
			if dst, err = appendField(dst, f, fv); err != nil {
				return nil, err
			}
			if jsonEqual(dst[start:], original) {
				dst = append(dst[:start], original...)
			}
		}
	}
	for _, f := range info.fields {
		if _, had := raw[f.name]; had {
			continue
		}
		fv := v.Field(f.index)
		if f.omitted(fv) {
			continue
		}
		if dst, err = appendField(key(dst, f.name), f, fv); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// omitted reports whether the field's value is left out, as encoding/json leaves out an
// empty omitempty or a zero omitzero field.
func (f structField) omitted(fv reflect.Value) bool {
	return (f.omitEmpty && isEmptyValue(fv)) || (f.omitZero && fv.IsZero())
}

// appendField appends the value of one declared field.
func appendField(dst []byte, f structField, fv reflect.Value) ([]byte, error) {
	if f.preserving {
		if out, ok, err := appendLevel(dst, fv); ok {
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.name, err)
			}
			return out, nil
		}
	}
	if f.leaf != leafOther {
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				return append(dst, "null"...), nil
			}
			fv = fv.Elem()
		}
		switch f.leaf {
		case leafString:
			return rawjson.AppendString(dst, fv.String()), nil
		case leafInt:
			return strconv.AppendInt(dst, fv.Int(), 10), nil
		case leafUint:
			return strconv.AppendUint(dst, fv.Uint(), 10), nil
		case leafBool:
			return strconv.AppendBool(dst, fv.Bool()), nil
		case leafTime:
			b, err := fv.Interface().(time.Time).MarshalJSON()
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.name, err)
			}
			return append(dst, b...), nil
		case leafStrings:
			if fv.IsNil() {
				return append(dst, "null"...), nil
			}
			dst = append(dst, '[')
			for i, s := range fv.Interface().([]string) {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = rawjson.AppendString(dst, s)
			}
			return append(dst, ']'), nil
		}
	}
	b, err := json.Marshal(fv.Interface())
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", f.name, err)
	}
	return append(dst, b...), nil
}

// appendLevel appends a value that is a codec level (a struct with an Object), a
// pointer to one, or a slice of either, and reports false for any other value. Every
// level's MarshalJSON is encodeObject, so this writes what encoding/json would, less the
// second pass encoding/json makes over a marshaler's output.
func appendLevel(dst []byte, fv reflect.Value) ([]byte, bool, error) {
	switch {
	case fv.Kind() == reflect.Pointer && isLevel(fv.Type().Elem()):
		if fv.IsNil() {
			return append(dst, "null"...), true, nil
		}
		out, err := appendObject(dst, fv.Elem())
		return out, true, err
	case fv.Kind() == reflect.Struct && isLevel(fv.Type()) && fv.CanAddr():
		out, err := appendObject(dst, fv)
		return out, true, err
	case fv.Kind() == reflect.Slice && isLevelOrPointer(fv.Type().Elem()):
		if fv.IsNil() {
			return append(dst, "null"...), true, nil
		}
		dst = append(dst, '[')
		for i := range fv.Len() {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, _, err = appendLevel(dst, fv.Index(i)); err != nil {
				return nil, true, fmt.Errorf("element %d: %w", i, err)
			}
		}
		return append(dst, ']'), true, nil
	}
	return dst, false, nil
}

func isLevelOrPointer(t reflect.Type) bool {
	return isLevel(t) || (t.Kind() == reflect.Pointer && isLevel(t.Elem()))
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// jsonEqual reports whether two JSON texts mean the same value. Numbers compare by their
// decimal text so that large integers are not rounded through float64. Timestamps compare
// by instant when both sides are RFC 3339 strings, so a re-encoded foreign time that did
// not change keeps its original spelling.
func jsonEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	va, errA := decodeAny(a)
	vb, errB := decodeAny(b)
	if errA != nil || errB != nil {
		return false
	}
	return valuesEqual(va, vb)
}

func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func valuesEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !valuesEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && sameNumber(x, y)
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		return x == y || sameInstant(x, y)
	default:
		return a == b
	}
}

// sameNumber compares exactly, so 1.0 equals 1 but two large integers that round to the
// same float64 stay different.
func sameNumber(x, y json.Number) bool {
	if x == y {
		return true
	}
	rx, okX := new(big.Rat).SetString(string(x))
	ry, okY := new(big.Rat).SetString(string(y))
	return okX && okY && rx.Cmp(ry) == 0
}

// sameInstant reports whether two strings are RFC 3339 spellings of one instant.
func sameInstant(x, y string) bool {
	tx, errX := time.Parse(time.RFC3339Nano, x)
	ty, errY := time.Parse(time.RFC3339Nano, y)
	return errX == nil && errY == nil && tx.Equal(ty)
}
