package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"
	"unique"
)

// DecodeLean reads a stored document like Decode, accepting and rejecting the same
// inputs with the same DecodeError, but keeps only the fields the types declare: every
// embedded Object stays empty (no key order, no raw values). Caches hold documents this
// way, about an eighth of a full decode's heap. A lean document encodes its declared
// fields only, so it must never be the base of a whole-document Replace: only of writes
// that send the owned fields alone (Cosmos PATCH).
//
// The input is validated once, then one walk over the declared fields decodes each
// value in place: codec levels (structs embedding Object, pointers to them and slices of
// them) by this walker, strings, integers and booleans by hand, anything else by
// encoding/json. Undeclared values are skipped, never copied.
func DecodeLean[P any](data []byte) (*Document[P], error) {
	d := new(Document[P])
	if !json.Valid(data) {
		return nil, leanFailure[P](data, errors.New("invalid JSON"))
	}
	if err := decodeLeanValue(data, reflect.ValueOf(d).Elem(), leanPlanFor(reflect.TypeFor[Document[P]]())); err != nil {
		return nil, leanFailure[P](data, err)
	}
	if err := checkDecoded(d); err != nil {
		id, rid, _ := Identify(data)
		return nil, &DecodeError{ID: id, ResourceID: rid, Err: err}
	}
	shareMetadataStrings(d)
	return d, nil
}

// leanFailure reports a document the lean walk refused with Decode's own error, so
// both decoders fail alike; errors are rare, so decoding twice on this path is cheap.
// Decode accepting what the walk refused would be a bug in the walk (the fuzz test looks
// for one); the walk's own error is reported then.
func leanFailure[P any](data []byte, leanErr error) error {
	if _, err := Decode[P](data); err != nil {
		return err
	}
	id, rid, _ := Identify(data)
	return &DecodeError{ID: id, ResourceID: rid, Err: fmt.Errorf("lean decode: %w", leanErr)}
}

// shareMetadataStrings points cosmosMetadata's copies of the envelope's resource ID and
// partition key at the envelope's strings when they are equal, so a cached document
// holds each once.
func shareMetadataStrings[P any](d *Document[P]) {
	h, ok := any(&d.Properties).(metadataHolder)
	if !ok {
		return
	}
	m := *h.metadataField()
	if m == nil {
		return
	}
	if m.ResourceID == d.ResourceID {
		m.ResourceID = d.ResourceID
	}
	if m.PartitionKey == d.PartitionKey {
		m.PartitionKey = d.PartitionKey
	}
}

// leanKind is how the walker decodes one declared value.
type leanKind int

const (
	leanOther      leanKind = iota // encoding/json
	leanLevel                      // a struct embedding Object
	leanPtrLevel                   // *level
	leanSliceLevel                 // []level or []*level
	leanString
	leanInt
	leanBool
	leanRaw // json.RawMessage: compacted, as Decode keeps it
)

// leanPlan is how one type is decoded: for a level, its declared fields.
type leanPlan struct {
	kind   leanKind
	typ    reflect.Type
	elem   *leanPlan // for pointer and slice levels: the level
	ptrs   bool      // slice of pointers to levels
	bits   int       // for leanInt
	fields []leanField
	byName map[string]int
}

type leanField struct {
	index int
	name  string
	plan  *leanPlan
	// intern: the field's values repeat across documents (enumerations, defaults,
	// resource types, management cluster IDs), so each distinct value is held once.
	intern bool
}

// internTag marks a string field whose values DecodeLean interns: `hcpsched:"intern"`.
const internTag = "intern"

var (
	leanPlanCache  sync.Map // reflect.Type -> *leanPlan, complete plans only
	leanPlanMu     sync.Mutex
	leanPlans      = map[reflect.Type]*leanPlan{} // guarded by leanPlanMu
	rawMessageType = reflect.TypeFor[json.RawMessage]()
)

func leanPlanFor(t reflect.Type) *leanPlan {
	if p, ok := leanPlanCache.Load(t); ok {
		return p.(*leanPlan)
	}
	leanPlanMu.Lock()
	defer leanPlanMu.Unlock()
	p := buildLeanPlan(t)
	leanPlanCache.Store(t, p)
	return p
}

func isLevel(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if t.Field(i).Type == objectType {
			return true
		}
	}
	return false
}

// buildLeanPlan runs with leanPlanMu held.
func buildLeanPlan(t reflect.Type) *leanPlan {
	if p, ok := leanPlans[t]; ok {
		return p
	}
	p := &leanPlan{typ: t}
	leanPlans[t] = p // before recursing: a level may (one day) contain itself
	switch {
	case t == rawMessageType:
		p.kind = leanRaw
	case isLevel(t):
		p.kind = leanLevel
		info := infoFor(t)
		p.byName = info.byName
		for _, f := range info.fields {
			sf := t.Field(f.index)
			lf := leanField{index: f.index, name: f.name, plan: buildLeanPlan(sf.Type)}
			lf.intern = sf.Tag.Get("hcpsched") == internTag && sf.Type.Kind() == reflect.String
			p.fields = append(p.fields, lf)
		}
	case t.Kind() == reflect.Pointer && isLevel(t.Elem()):
		p.kind, p.elem = leanPtrLevel, buildLeanPlan(t.Elem())
	case t.Kind() == reflect.Slice && isLevel(t.Elem()):
		p.kind, p.elem = leanSliceLevel, buildLeanPlan(t.Elem())
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Pointer && isLevel(t.Elem().Elem()):
		p.kind, p.elem, p.ptrs = leanSliceLevel, buildLeanPlan(t.Elem().Elem()), true
	case reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType):
		p.kind = leanOther // time.Time and the like decode themselves
	case t.Kind() == reflect.String:
		p.kind = leanString
	case t.Kind() == reflect.Bool:
		p.kind = leanBool
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		p.kind, p.bits = leanInt, t.Bits()
	}
	return p
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// maxStackFields bounds the per-level scratch array that stays on the stack.
const maxStackFields = 24

// decodeLeanValue decodes one valid JSON value into v, which is settable and zero.
func decodeLeanValue(data []byte, v reflect.Value, p *leanPlan) error {
	i := skipSpace(data, 0)
	if i >= len(data) {
		return errors.New("unexpected end of JSON input")
	}
	data = data[i:]
	isNull := data[0] == 'n'
	switch p.kind {
	case leanLevel:
		return decodeLeanLevel(data, v, p)
	case leanPtrLevel:
		if isNull {
			return nil
		}
		n := reflect.New(p.elem.typ)
		if err := decodeLeanLevel(data, n.Elem(), p.elem); err != nil {
			return err
		}
		v.Set(n)
		return nil
	case leanSliceLevel:
		return decodeLeanSlice(data, v, p)
	case leanString:
		if isNull {
			return nil
		}
		if data[0] == '"' {
			s := data[1 : len(data)-1]
			if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
				v.SetString(string(s))
				return nil
			}
		}
	case leanInt:
		if isNull {
			return nil
		}
		if n, err := strconv.ParseInt(string(data), 10, p.bits); err == nil {
			v.SetInt(n)
			return nil
		}
	case leanBool:
		switch data[0] {
		case 'n':
			return nil
		case 't':
			v.SetBool(true)
			return nil
		case 'f':
			return nil
		}
	case leanRaw, leanOther:
		if bytes.ContainsAny(data, " \t\r\n") {
			var compact bytes.Buffer
			if err := json.Compact(&compact, data); err != nil {
				return err
			}
			data = compact.Bytes()
		}
	}
	return json.Unmarshal(data, v.Addr().Interface())
}

// decodeLeanLevel decodes a JSON object (or null, leaving v zero) into a level. As in
// Decode, a repeated key keeps its last value only.
func decodeLeanLevel(data []byte, v reflect.Value, p *leanPlan) error {
	if data[0] == 'n' {
		return nil
	}
	if data[0] != '{' {
		return fmt.Errorf("expected a JSON object, found %s", describeValue(data[0]))
	}
	var stack [maxStackFields][]byte
	var values [][]byte
	if len(p.fields) <= maxStackFields {
		values = stack[:len(p.fields)]
	} else {
		values = make([][]byte, len(p.fields))
	}
	found := false
	i := skipSpace(data, 1)
	for i < len(data) && data[i] != '}' {
		// The input is valid JSON: a key, a colon, a value.
		keyStart, keyEnd := i, skipValue(data, i)
		i = skipSpace(data, keyEnd)
		i = skipSpace(data, i+1)
		valueEnd := skipValue(data, i)
		var fi int
		var ok bool
		if key := data[keyStart+1 : keyEnd-1]; bytes.IndexByte(key, '\\') < 0 {
			fi, ok = p.byName[string(key)]
		} else {
			var k string
			if err := json.Unmarshal(data[keyStart:keyEnd], &k); err != nil {
				return err
			}
			fi, ok = p.byName[k]
		}
		if ok {
			values[fi] = data[i:valueEnd]
			found = true
		}
		i = skipSpace(data, valueEnd)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if !found {
		return nil
	}
	for fi, raw := range values {
		if raw == nil {
			continue
		}
		f := p.fields[fi]
		fv := v.Field(f.index)
		if err := decodeLeanValue(raw, fv, f.plan); err != nil {
			return fmt.Errorf("field %q: %w", f.name, err)
		}
		if f.intern && fv.Len() > 0 {
			fv.SetString(unique.Make(fv.String()).Value())
		}
	}
	return nil
}

// decodeLeanSlice decodes a JSON array (or null, leaving v nil) of levels.
func decodeLeanSlice(data []byte, v reflect.Value, p *leanPlan) error {
	if data[0] == 'n' {
		return nil
	}
	if data[0] != '[' {
		return fmt.Errorf("expected a JSON array, found %s", describeValue(data[0]))
	}
	var elems [][]byte
	i := skipSpace(data, 1)
	for i < len(data) && data[i] != ']' {
		end := skipValue(data, i)
		elems = append(elems, data[i:end])
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	s := reflect.MakeSlice(v.Type(), len(elems), len(elems))
	for n, e := range elems {
		if !p.ptrs {
			if err := decodeLeanLevel(e, s.Index(n), p.elem); err != nil {
				return err
			}
			continue
		}
		if e[0] == 'n' {
			continue
		}
		ptr := reflect.New(p.elem.typ)
		if err := decodeLeanLevel(e, ptr.Elem(), p.elem); err != nil {
			return err
		}
		s.Index(n).Set(ptr)
	}
	v.Set(s)
	return nil
}
