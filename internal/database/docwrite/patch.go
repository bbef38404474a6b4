package docwrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/rawjson"
)

// How a change becomes a patch.
//
// A cached document may hold only the fields hcpsched declares (a lean cache keeps no
// record of the others), so its encoding is not the stored document: setting a whole
// object that exists in the store from it would drop every field another component wrote
// there. The patch therefore descends to the changed leaves of every object that exists
// on both sides, and sets a whole value only where the store had nothing (or a value of
// another kind), or where the value's Go type holds every key the store has (a map, a
// list of strings: decoding keeps all of it, so rewriting it loses nothing) and lies
// inside an owned path, when one set is fewer operations than its leaves.

// diffOps returns the patch operations that turn before into after, two encodings of
// one document that differ only in owned (confined has checked that). root is the Go
// type the documents decode into (reflect.Type of api.Document[P]); nil knows no types,
// so no whole value is ever set where the store had one, except arrays inside owned paths.
// It fails when a change cannot be said as a patch of owned paths (a condition list whose
// owned elements moved): the caller then writes the whole document.
func diffOps(before, after []byte, owned Fields, root reflect.Type) ([]database.PatchOperation, error) {
	b, err := parseNode(before)
	if err != nil {
		return nil, fmt.Errorf("reading the cached document: %w", err)
	}
	a, err := parseNode(after)
	if err != nil {
		return nil, fmt.Errorf("reading the changed document: %w", err)
	}
	return diffNodes(b, a, owned, root)
}

// diffNodes is diffOps on parsed trees (confinedNodes has read them).
func diffNodes(b, a *node, owned Fields, root reflect.Type) ([]database.PatchOperation, error) {
	d := differ{owned: owned, root: root}
	ops := d.diff("", nil, b, a, false)
	if d.err != nil {
		return nil, d.err
	}
	for _, op := range ops {
		if !d.mayWrite(op.Path) {
			// confined let the change through, so this is a bug of the differ: refuse
			// rather than write a field another component owns.
			return nil, fmt.Errorf("%w: the patch would write %s", ErrNotOwned, op.Path)
		}
	}
	return ops, nil
}

// node is one JSON value of a document, with its raw bytes. Its members are split out
// only when asked for (parse): the codec keeps the bytes of every unchanged value, so
// most subtrees compare equal byte for byte and are never taken apart.
type node struct {
	raw  json.RawMessage
	kind byte // '{', '[', 's' for a string, number or boolean, 'n' for null
	// keys is an object's keys, sorted, obj its members; arr an array's elements.
	parsed bool
	keys   []string
	obj    map[string]*node
	arr    []*node
}

func parseNode(raw json.RawMessage) (*node, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty JSON value")
	}
	n := &node{raw: raw}
	switch raw[0] {
	case '{', '[':
		n.kind = raw[0]
	case 'n':
		n.kind = 'n'
	default:
		n.kind = 's'
	}
	return n, nil
}

// parse splits an object or array into its members, once. The bytes are an encoding of
// this process's own (api.Encode), valid JSON, so they are sliced, not decoded again. A
// key that appears twice keeps its last value, as encoding/json does.
func (n *node) parse() error {
	if n.parsed || (n.kind != '{' && n.kind != '[') {
		return nil
	}
	n.parsed = true
	if n.kind == '{' {
		keys, values, err := rawjson.Object(n.raw)
		if err != nil {
			return err
		}
		n.obj = make(map[string]*node, len(keys))
		for i, k := range keys {
			child, err := parseNode(values[i])
			if err != nil {
				return fmt.Errorf("field %q: %w", k, err)
			}
			if _, seen := n.obj[k]; !seen {
				n.keys = append(n.keys, k)
			}
			n.obj[k] = child
		}
		slices.Sort(n.keys)
		return nil
	}
	elems, err := rawjson.Array(n.raw)
	if err != nil {
		return err
	}
	n.arr = make([]*node, len(elems))
	for i, e := range elems {
		child, err := parseNode(e)
		if err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		n.arr[i] = child
	}
	return nil
}

// isNull: absent (nil) and JSON null mean the same, as confined compares them.
func (n *node) isNull() bool { return n == nil || n.kind == 'n' }

// equal compares two values by meaning: numbers by their decimal text, a null member
// the same as an absent one, as confined does. Equal bytes are equal at once.
func (d *differ) equal(a, b *node) bool {
	if a.isNull() || b.isNull() {
		return a.isNull() && b.isNull()
	}
	if bytes.Equal(a.raw, b.raw) {
		return true
	}
	if a.kind != b.kind {
		return false
	}
	if err := errors.Join(a.parse(), b.parse()); err != nil {
		d.fail(err)
		return false
	}
	switch a.kind {
	case '{':
		for _, k := range a.keys {
			if !d.equal(a.obj[k], b.obj[k]) {
				return false
			}
		}
		for _, k := range b.keys {
			if _, ok := a.obj[k]; !ok && !b.obj[k].isNull() {
				return false
			}
		}
		return true
	case '[':
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !d.equal(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	}
	var va, vb any
	if decodeJSON(a.raw, &va) != nil || decodeJSON(b.raw, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

type differ struct {
	owned Fields
	root  reflect.Type
	err   error
}

// diff returns the operations that turn a into b at path (dotted, for ownership) and
// ptr (the segments of the JSON pointer). a or b nil is absent.
func (d *differ) diff(path string, ptr []string, a, b *node, inOwned bool) []database.PatchOperation {
	if path != "" && slices.Contains(d.owned, path) {
		inOwned = true
	}
	if !inOwned {
		if types := ownedConditions(path, d.owned); len(types) > 0 {
			return d.conditionOps(path, ptr, a, b, types)
		}
	}
	switch {
	case d.equal(a, b):
		return nil
	case b == nil:
		return []database.PatchOperation{{Kind: database.PatchRemove, Path: database.Pointer(ptr...)}}
	case a.isNull() || b.kind != a.kind || b.kind == 's' || b.kind == 'n':
		// Appeared, changed kind, or a changed scalar: the store holds nothing of b's
		// shape there that a set could lose.
		return []database.PatchOperation{set(ptr, b)}
	}
	if err := errors.Join(a.parse(), b.parse()); err != nil {
		d.fail(err)
		return nil
	}
	var ops []database.PatchOperation
	if b.kind == '{' {
		for _, k := range a.keys {
			ops = append(ops, d.diff(join(path, k), appendSeg(ptr, k), a.obj[k], b.obj[k], inOwned)...)
		}
		for _, k := range b.keys {
			if _, ok := a.obj[k]; !ok {
				ops = append(ops, d.diff(join(path, k), appendSeg(ptr, k), nil, b.obj[k], inOwned)...)
			}
		}
	} else {
		ops = d.arrayOps(path, ptr, a, b, inOwned)
	}
	if inOwned && len(ops) > 1 && d.complete(ptr) {
		return []database.PatchOperation{set(ptr, b)}
	}
	return ops
}

// arrayOps turns one array into another: per index when their lengths are equal, an add
// per element appended, a remove of the one element taken out, and otherwise a set of the
// whole array, which only an owner of the array may do.
func (d *differ) arrayOps(path string, ptr []string, a, b *node, inOwned bool) []database.PatchOperation {
	switch {
	case len(a.arr) == len(b.arr):
		var ops []database.PatchOperation
		for i := range a.arr {
			ops = append(ops, d.diff(path, appendSeg(ptr, strconv.Itoa(i)), a.arr[i], b.arr[i], inOwned)...)
		}
		return ops
	case len(b.arr) > len(a.arr) && d.equalElems(a.arr, b.arr[:len(a.arr)]):
		var ops []database.PatchOperation
		for _, e := range b.arr[len(a.arr):] {
			ops = append(ops, database.PatchOperation{Kind: database.PatchAdd, Path: database.Pointer(appendSeg(ptr, "-")...), Value: e.raw})
		}
		return ops
	case len(b.arr) == len(a.arr)-1:
		if i, ok := d.removedIndex(a.arr, b.arr); ok {
			return []database.PatchOperation{{Kind: database.PatchRemove, Path: database.Pointer(appendSeg(ptr, strconv.Itoa(i))...)}}
		}
	}
	if !inOwned {
		d.fail(fmt.Errorf("%s: an array that no writer owns whole changed", orRoot(path)))
		return nil
	}
	return []database.PatchOperation{set(ptr, b)}
}

// conditionOps turns one condition list into another where only the owned types'
// elements may differ (confined has checked that the others are the same, in the same
// order): removes of owned conditions that went away (from the last, so that indexes
// stay true), then per-element changes, then appends.
func (d *differ) conditionOps(path string, ptr []string, a, b *node, types []string) []database.PatchOperation {
	switch {
	case d.equal(a, b):
		return nil
	case a.isNull():
		// No list yet: every element of the new one is owned.
		return []database.PatchOperation{set(ptr, b)}
	case b.isNull():
		return []database.PatchOperation{{Kind: database.PatchRemove, Path: database.Pointer(ptr...)}}
	case a.kind != '[' || b.kind != '[':
		d.fail(fmt.Errorf("%s: a condition list that is not a list", path))
		return nil
	}
	if err := errors.Join(a.parse(), b.parse()); err != nil {
		d.fail(err)
		return nil
	}
	present := map[string]bool{}
	for _, e := range b.arr {
		present[conditionType(e)] = true
	}
	var ops []database.PatchOperation
	var kept []*node
	for i := len(a.arr) - 1; i >= 0; i-- {
		t := conditionType(a.arr[i])
		if slices.Contains(types, t) && !present[t] {
			ops = append(ops, database.PatchOperation{Kind: database.PatchRemove, Path: database.Pointer(appendSeg(ptr, strconv.Itoa(i))...)})
			continue
		}
		kept = append(kept, a.arr[i])
	}
	slices.Reverse(kept)
	if len(b.arr) < len(kept) {
		d.fail(fmt.Errorf("%s: owned conditions moved", path))
		return nil
	}
	for i, e := range kept {
		t := conditionType(e)
		if t != conditionType(b.arr[i]) {
			d.fail(fmt.Errorf("%s: owned conditions moved", path))
			return nil
		}
		ops = append(ops, d.diff(path, appendSeg(ptr, strconv.Itoa(i)), e, b.arr[i], slices.Contains(types, t))...)
	}
	for _, e := range b.arr[len(kept):] {
		if !slices.Contains(types, conditionType(e)) {
			d.fail(fmt.Errorf("%s: a condition that is not owned was added", path))
			return nil
		}
		ops = append(ops, database.PatchOperation{Kind: database.PatchAdd, Path: database.Pointer(appendSeg(ptr, "-")...), Value: e.raw})
	}
	return ops
}

func conditionType(n *node) string {
	if n == nil || n.kind != '{' || n.parse() != nil {
		return ""
	}
	t := n.obj["type"]
	if t == nil || t.kind != 's' {
		return ""
	}
	var s string
	if json.Unmarshal(t.raw, &s) != nil {
		return ""
	}
	return s
}

func (d *differ) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// mayWrite reports whether a patch may write at pointer: inside an owned path, at or
// beneath an owned condition of a list, or a list or object on the way to an owned path
// that the store does not have (diff sets those only where they are absent).
func (d *differ) mayWrite(p string) bool {
	segs := database.PointerNames(p)
	path := ""
	for i, s := range segs {
		if i > 0 && isIndex(s) {
			if len(ownedConditions(path, d.owned)) > 0 {
				return true // conditionOps writes only owned elements
			}
			continue
		}
		path = join(path, s)
		if slices.Contains(d.owned, path) {
			return true
		}
	}
	return ownsBeneath(path, d.owned) || len(ownedConditions(path, d.owned)) > 0
}

func isIndex(s string) bool {
	if s == "-" {
		return true
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

func (d *differ) equalElems(a, b []*node) bool {
	for i := range a {
		if !d.equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// removedIndex finds the one element of a that b lacks.
func (d *differ) removedIndex(a, b []*node) (int, bool) {
	i := 0
	for i < len(b) && d.equal(a[i], b[i]) {
		i++
	}
	return i, d.equalElems(a[i+1:], b[i:])
}

func set(ptr []string, v *node) database.PatchOperation {
	return database.PatchOperation{Kind: database.PatchSet, Path: database.Pointer(ptr...), Value: v.raw}
}

func appendSeg(ptr []string, seg string) []string {
	return append(slices.Clip(ptr), seg)
}

// complete reports whether the Go type at ptr keeps every part of the stored value when
// decoded, so that a set of it from a cached copy loses nothing: maps, slices and
// scalars of such types. A struct may drop fields it does not declare (a lean cache
// does), so it is never complete; neither is a path the type does not know.
func (d *differ) complete(ptr []string) bool {
	if d.root == nil {
		return false
	}
	t := d.root
	for _, s := range ptr {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := jsonField(t, s)
			if !ok {
				return false
			}
			t = f
		case reflect.Map, reflect.Slice, reflect.Array:
			t = t.Elem()
		case reflect.Interface:
			return true
		default:
			return false
		}
	}
	return completeType(t)
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

func completeType(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType || t == rawType:
		return true
	case t.Kind() == reflect.Map || t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return completeType(t.Elem())
	case t.Kind() == reflect.Struct:
		return false
	}
	return t.Kind() != reflect.Func && t.Kind() != reflect.Chan
}

// jsonField is the type of the field of struct t named name in JSON.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous || !f.IsExported() {
			continue
		}
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == "-" {
			continue
		}
		if n == "" {
			n = f.Name
		}
		if n == name {
			return f.Type, true
		}
	}
	return nil, false
}
