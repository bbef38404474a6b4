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

	"github.com/hcpsched/hcpsched/internal/rawjson"
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
// them) by this walker, strings, integers (and pointers to them) and booleans by hand,
// anything else by encoding/json. Undeclared values are skipped, never copied.
//
// Levels are shared between documents where that costs nothing a reader can see (see
// sharedLevels): a pointer level that declares nothing points at one zero value of its
// type, and a pointer level tagged `hcpsched:"intern"` points at the level an earlier
// document decoded from the same bytes. A lean document, like every cached one, must
// therefore never be changed in place: DeepCopy it first (the copy shares nothing).
func DecodeLean[P any](data []byte) (*Document[P], error) {
	d := new(Document[P])
	var spans [maxStackSpans]containerSpan
	in := leanInput{doc: data}
	var valid bool
	if in.spans, valid = scanJSON(data, spans[:0], true); !valid {
		return nil, leanFailure[P](data, errors.New("invalid JSON"))
	}
	if err := decodeLeanValue(&in, data, reflect.ValueOf(d).Elem(), leanPlanFor(reflect.TypeFor[Document[P]]())); err != nil {
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
	leanPtrInt // *int32 and the like: optional integers
	leanBool
	leanRaw // json.RawMessage: compacted, as Decode keeps it
)

// leanPlan is how one type is decoded: for a level, its declared fields.
type leanPlan struct {
	kind   leanKind
	typ    reflect.Type
	elem   *leanPlan // for pointer and slice levels: the level
	ptrs   bool      // slice of pointers to levels
	bits   int       // for leanInt and leanPtrInt
	fields []leanField
	byName map[string]int
	// zero, for levels, points at the one zero value that every pointer to this level
	// type shares when it declares nothing ({} or undeclared keys only).
	zero reflect.Value
}

type leanField struct {
	index int
	name  string
	plan  *leanPlan
	// intern: the field's values repeat across documents (enumerations, defaults,
	// resource types, management cluster IDs), so each distinct value is held once.
	intern bool
	// shared, for a pointer to a level whose values repeat across documents (a
	// version, network defaults), holds the levels documents share; nil otherwise. It
	// belongs to the field, built with it: a level's plan is shared by every plan that
	// reaches it, and may already be in use when another field is planned.
	shared *sharedLevels
}

// internTag marks a field whose values repeat across documents: `hcpsched:"intern"`.
// DecodeLean interns such a string and shares such a pointer level.
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

// isLevel reports whether t is a codec level: a struct with an Object. The encoder asks
// for every field value it writes, so the answer is kept per type rather than found again
// by walking the struct's fields through reflect.
func isLevel(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	if v, ok := levelTypes.Load(t); ok {
		return v.(bool)
	}
	level := false
	for i := range t.NumField() {
		if t.Field(i).Type == objectType {
			level = true
			break
		}
	}
	levelTypes.Store(t, level)
	return level
}

var levelTypes sync.Map // reflect.Type -> bool

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
		p.zero = reflect.New(t)
		for _, f := range info.fields {
			sf := t.Field(f.index)
			lf := leanField{index: f.index, name: f.name, plan: buildLeanPlan(sf.Type)}
			if sf.Tag.Get("hcpsched") == internTag {
				switch lf.plan.kind {
				case leanString:
					lf.intern = true
				case leanPtrLevel:
					lf.shared = &sharedLevels{byRaw: map[string]reflect.Value{}}
				default:
					// A tag that would silently do nothing is a mistake in the types.
					panic(fmt.Sprintf("api: %s.%s is tagged %s but is neither a string nor a pointer to a level", t, sf.Name, internTag))
				}
			}
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
	case t.Kind() == reflect.Pointer && t.Elem().Kind() >= reflect.Int && t.Elem().Kind() <= reflect.Int64 && t.Elem().PkgPath() == "":
		// Predeclared integers only: a named one may have methods encoding/json honours.
		p.kind, p.bits = leanPtrInt, t.Elem().Bits()
	}
	return p
}

// sharedLevels holds, for one field, the decoded levels that documents share,
// keyed by the exact JSON they were decoded from: equal bytes decode to equal values, so
// a document whose bytes match gets the stored level without decoding it. It is bounded,
// so fields whose values turn out not to repeat (a per-cluster list of CIDRs, say) cost a
// fixed amount of memory rather than one entry per document: a full table forgets an
// arbitrary entry, whose documents keep their level, to make room.
type sharedLevels struct {
	mu    sync.RWMutex
	byRaw map[string]reflect.Value // guarded by mu
}

const (
	// maxSharedLevels bounds each field's table. The values worth sharing (versions,
	// network and autoscaling defaults, visibilities) number a handful each.
	maxSharedLevels = 256
	// maxSharedRaw bounds the JSON a level may be shared by: longer values are unlikely to
	// repeat and would make the table's keys large.
	maxSharedRaw = 512
)

func (s *sharedLevels) load(raw []byte) (reflect.Value, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.byRaw[string(raw)]
	return v, ok
}

func (s *sharedLevels) store(raw []byte, v reflect.Value) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byRaw[string(raw)]; ok {
		return // another decoder stored it first; either value will do
	}
	if len(s.byRaw) >= maxSharedLevels {
		for k := range s.byRaw {
			delete(s.byRaw, k)
			break
		}
	}
	s.byRaw[string(raw)] = v
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

const (
	// maxStackFields bounds the per-level scratch array that stays on the stack.
	maxStackFields = 24
	// maxStackSpans bounds the containers a document's walk records on the stack (a
	// cluster document has about 30).
	maxStackSpans = 64
)

// leanInput is the document a lean walk reads, with where each of its containers ends.
type leanInput struct {
	doc   []byte
	spans containerSpans
}

// skip returns the end of the value starting at data[i], where data is a part of doc
// (every value the walk reads is sliced from it): a container's end is looked up rather
// than found by reading it.
func (in *leanInput) skip(data []byte, i int) int {
	if c := data[i]; c == '{' || c == '[' {
		// Slices of doc keep its capacity's end, so their offset in doc is the
		// difference of capacities; the address comparison proves data is doc's.
		if off := cap(in.doc) - cap(data) + i; off >= 0 && off < len(in.doc) && &in.doc[off] == &data[i] {
			if end, ok := in.spans.end(off); ok && end-(off-i) <= len(data) {
				return end - (off - i)
			}
		}
	}
	return rawjson.SkipValue(data, i)
}

// decodeLeanValue decodes one valid JSON value into v, which is settable and zero.
func decodeLeanValue(in *leanInput, data []byte, v reflect.Value, p *leanPlan) error {
	i := rawjson.SkipSpace(data, 0)
	if i >= len(data) {
		return errors.New("unexpected end of JSON input")
	}
	data = data[i:]
	isNull := data[0] == 'n'
	switch p.kind {
	case leanLevel:
		return decodeLeanLevel(in, data, v, p)
	case leanPtrLevel:
		return decodeLeanPointer(in, data, v, p.elem)
	case leanSliceLevel:
		return decodeLeanSlice(in, data, v, p)
	case leanString:
		if isNull {
			return nil
		}
		if data[0] == '"' {
			if s, ok := unquoteSimple(data[1 : len(data)-1]); ok {
				v.SetString(s)
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
	case leanPtrInt:
		if isNull {
			return nil
		}
		if n, err := strconv.ParseInt(string(data), 10, p.bits); err == nil {
			ptr := reflect.New(p.typ.Elem())
			ptr.Elem().SetInt(n)
			v.Set(ptr)
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
func decodeLeanLevel(in *leanInput, data []byte, v reflect.Value, p *leanPlan) error {
	if data[0] == 'n' {
		return nil
	}
	var stack [maxStackFields][]byte
	values, found, err := scanLeanLevel(in, data, p, stack[:0])
	if err != nil || !found {
		return err
	}
	return fillLeanLevel(in, values, v, p)
}

// decodeLeanPointer decodes a JSON object (or null, leaving v nil) into v, a pointer to
// a level. A level that declares nothing points at the type's shared zero value: it
// carries no information but that it is there, and a document with several such levels
// ({} for a DNS or a spec, systemData with undeclared keys only) would otherwise hold an
// allocation for each.
func decodeLeanPointer(in *leanInput, data []byte, v reflect.Value, p *leanPlan) error {
	if data[0] == 'n' {
		return nil
	}
	var stack [maxStackFields][]byte
	values, found, err := scanLeanLevel(in, data, p, stack[:0])
	if err != nil {
		return err
	}
	if !found {
		v.Set(p.zero)
		return nil
	}
	n := reflect.New(p.typ)
	if err := fillLeanLevel(in, values, n.Elem(), p); err != nil {
		return err
	}
	if n.Elem().IsZero() { // declared keys, all null or empty
		n = p.zero
	}
	v.Set(n)
	return nil
}

// scanLeanLevel finds the raw value of each declared field of a JSON object, by field
// position in values (which has room for them, or is grown), and whether any was found.
func scanLeanLevel(in *leanInput, data []byte, p *leanPlan, values [][]byte) ([][]byte, bool, error) {
	if data[0] != '{' {
		return nil, false, fmt.Errorf("expected a JSON object, found %s", describeValue(data[0]))
	}
	if len(p.fields) <= cap(values) {
		values = values[:len(p.fields)]
	} else {
		values = make([][]byte, len(p.fields))
	}
	found := false
	i := rawjson.SkipSpace(data, 1)
	for i < len(data) && data[i] != '}' {
		// The input is valid JSON: a key, a colon, a value.
		keyStart, keyEnd := i, rawjson.SkipValue(data, i)
		i = rawjson.SkipSpace(data, keyEnd)
		i = rawjson.SkipSpace(data, i+1)
		valueEnd := in.skip(data, i)
		var fi int
		var ok bool
		if key := data[keyStart+1 : keyEnd-1]; bytes.IndexByte(key, '\\') < 0 {
			fi, ok = p.byName[string(key)]
		} else {
			var k string
			if err := json.Unmarshal(data[keyStart:keyEnd], &k); err != nil {
				return nil, false, err
			}
			fi, ok = p.byName[k]
		}
		if ok {
			values[fi] = data[i:valueEnd]
			found = true
		}
		i = rawjson.SkipSpace(data, valueEnd)
		if i < len(data) && data[i] == ',' {
			i = rawjson.SkipSpace(data, i+1)
		}
	}
	return values, found, nil
}

// fillLeanLevel decodes the raw values scanLeanLevel found into the level v.
func fillLeanLevel(in *leanInput, values [][]byte, v reflect.Value, p *leanPlan) error {
	for fi, raw := range values {
		if raw == nil {
			continue
		}
		f := p.fields[fi]
		fv := v.Field(f.index)
		var shared *sharedLevels
		if f.shared != nil && raw[0] == '{' && len(raw) <= maxSharedRaw {
			shared = f.shared
			if level, ok := shared.load(raw); ok {
				fv.Set(level)
				continue
			}
		}
		if err := decodeLeanValue(in, raw, fv, f.plan); err != nil {
			return fmt.Errorf("field %q: %w", f.name, err)
		}
		if f.intern && fv.Len() > 0 {
			fv.SetString(unique.Make(fv.String()).Value())
		}
		if shared != nil && fv.Pointer() != f.plan.elem.zero.Pointer() {
			shared.store(raw, fv)
		}
	}
	return nil
}

// decodeLeanSlice decodes a JSON array (or null, leaving v nil) of levels.
func decodeLeanSlice(in *leanInput, data []byte, v reflect.Value, p *leanPlan) error {
	if data[0] == 'n' {
		return nil
	}
	if data[0] != '[' {
		return fmt.Errorf("expected a JSON array, found %s", describeValue(data[0]))
	}
	var elems [][]byte
	i := rawjson.SkipSpace(data, 1)
	for i < len(data) && data[i] != ']' {
		end := in.skip(data, i)
		elems = append(elems, data[i:end])
		i = rawjson.SkipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = rawjson.SkipSpace(data, i+1)
		}
	}
	s := reflect.MakeSlice(v.Type(), len(elems), len(elems))
	for n, e := range elems {
		var err error
		if p.ptrs {
			err = decodeLeanPointer(in, e, s.Index(n), p.elem)
		} else {
			err = decodeLeanLevel(in, e, s.Index(n), p.elem)
		}
		if err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

// unquoteSimple returns the text of a JSON string's contents (between the quotes) when
// it can do so exactly as encoding/json would without its help: valid UTF-8 whose only
// escapes are the two-character ones. Anything else (\u escapes, which may pair into one
// rune, and invalid UTF-8, which encoding/json replaces) is left to encoding/json. An
// _etag is the common case: quotes escaped inside the string.
func unquoteSimple(s []byte) (string, bool) {
	first := bytes.IndexByte(s, '\\')
	if first < 0 {
		if !utf8.Valid(s) {
			return "", false
		}
		return string(s), true
	}
	var buf [64]byte // an _etag fits: one allocation, the string's own
	out := append(buf[:0], s[:first]...)
	for i := first; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i == len(s) {
			return "", false
		}
		switch s[i] {
		case '"', '\\', '/':
			out = append(out, s[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			return "", false
		}
	}
	if !utf8.Valid(out) {
		return "", false
	}
	return string(out), true
}
