package api

import (
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"
)

// DeepCopy returns an independent copy. Lister results are shared cache pointers, so a
// controller copies before it mutates.
//
// It copies the typed value itself, without JSON: every pointer, slice and map is
// duplicated (nil stays nil, empty stays empty), and each Object's key order and raw
// map are duplicated too, so a copy of a full-decoded document encodes to the same
// bytes as the original. The raw values themselves are shared: nothing changes them in
// place (SetUnknown replaces the map entry). Strings and time.Time values are immutable
// and shared.
func (d *Document[P]) DeepCopy() *Document[P] {
	if d == nil {
		return nil
	}
	c := new(Document[P])
	*c = *d
	if cp := copierFor(reflect.TypeFor[Document[P]]()); cp != nil {
		cp(reflect.ValueOf(c).Elem(), reflect.ValueOf(d).Elem())
	}
	return c
}

// copier makes dst, which holds a shallow copy of src and is settable, independent of
// src. A nil copier means the shallow copy already is independent.
type copier func(dst, src reflect.Value)

var (
	copiers   sync.Map // reflect.Type -> copier (nil when none is needed)
	copiersMu sync.Mutex
	building  = map[reflect.Type]*copier{} // guarded by copiersMu: types being planned
)

var timeType = reflect.TypeFor[time.Time]()

func copierFor(t reflect.Type) copier {
	if c, ok := copiers.Load(t); ok {
		return c.(copier)
	}
	copiersMu.Lock()
	defer copiersMu.Unlock()
	return buildCopier(t)
}

// buildCopier runs with copiersMu held.
func buildCopier(t reflect.Type) copier {
	if c, ok := copiers.Load(t); ok {
		return c.(copier)
	}
	if p, ok := building[t]; ok {
		// A recursive type: call through the pointer, filled in once planned.
		return func(dst, src reflect.Value) {
			if *p != nil {
				(*p)(dst, src)
			}
		}
	}
	var c copier
	building[t] = &c
	defer delete(building, t)
	c = planCopier(t)
	copiers.Store(t, c)
	return c
}

func planCopier(t reflect.Type) copier {
	switch t.Kind() {
	case reflect.Pointer:
		elem := buildCopier(t.Elem())
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			n := reflect.New(t.Elem())
			n.Elem().Set(src.Elem())
			if elem != nil {
				elem(n.Elem(), src.Elem())
			}
			dst.Set(n)
		}
	case reflect.Slice:
		elem := buildCopier(t.Elem())
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			n := reflect.MakeSlice(t, src.Len(), src.Len())
			reflect.Copy(n, src)
			if elem != nil {
				for i := range src.Len() {
					elem(n.Index(i), src.Index(i))
				}
			}
			dst.Set(n)
		}
	case reflect.Array:
		elem := buildCopier(t.Elem())
		if elem == nil {
			return nil
		}
		return func(dst, src reflect.Value) {
			for i := range src.Len() {
				elem(dst.Index(i), src.Index(i))
			}
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String {
			// ResourceList and friends: no reflection per entry.
			plain := reflect.TypeFor[map[string]string]()
			return func(dst, src reflect.Value) {
				if src.IsNil() {
					return
				}
				m := maps.Clone(src.Convert(plain).Interface().(map[string]string))
				dst.Set(reflect.ValueOf(m).Convert(t))
			}
		}
		key, elem := buildCopier(t.Key()), buildCopier(t.Elem())
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			n := reflect.MakeMapWithSize(t, src.Len())
			for it := src.MapRange(); it.Next(); {
				k, v := it.Key(), it.Value()
				if key != nil {
					kc := reflect.New(t.Key()).Elem()
					kc.Set(k)
					key(kc, k)
					k = kc
				}
				if elem != nil {
					vc := reflect.New(t.Elem()).Elem()
					vc.Set(v)
					elem(vc, v)
					v = vc
				}
				n.SetMapIndex(k, v)
			}
			dst.Set(n)
		}
	case reflect.Struct:
		switch t {
		case objectType:
			return func(dst, _ reflect.Value) {
				o := dst.Addr().Interface().(*Object)
				if o.o != nil {
					o.o = &objectData{keys: slices.Clone(o.o.keys), raw: maps.Clone(o.o.raw)}
				}
			}
		case timeType:
			return nil // immutable; its *Location is shared by design
		}
		type fieldCopier struct {
			index int
			copy  copier
		}
		var fields []fieldCopier
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				// Unexported state is copied shallowly; the document types keep none
				// beyond Object's, which is handled above.
				continue
			}
			if c := buildCopier(f.Type); c != nil {
				fields = append(fields, fieldCopier{i, c})
			}
		}
		if len(fields) == 0 {
			return nil
		}
		return func(dst, src reflect.Value) {
			for _, f := range fields {
				f.copy(dst.Field(f.index), src.Field(f.index))
			}
		}
	}
	// Booleans, numbers and strings are values; interfaces, channels and functions do
	// not occur in documents and are shared.
	return nil
}
