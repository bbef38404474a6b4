package configdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// object is a JSON object that keeps its keys in order, so that a file written by hand
// and partly generated (the chart's values.schema.json) keeps its layout when the
// generated part is rewritten. Values are *object, []any, string, json.Number, bool or
// nil.
type object struct {
	keys   []string
	values map[string]any
}

func newObject() *object { return &object{values: map[string]any{}} }

// obj builds an object from key, value pairs in order.
func obj(kv ...any) *object {
	o := newObject()
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *object) get(key string) (any, bool) {
	v, ok := o.values[key]
	return v, ok
}

// set replaces the value of key where it is, or appends key.
func (o *object) set(key string, value any) {
	if _, ok := o.values[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.values[key] = value
}

// child is the object under key, or nil.
func (o *object) child(key string) *object {
	v, _ := o.get(key)
	c, _ := v.(*object)
	return c
}

// decodeJSON reads one JSON document into the ordered tree.
func decodeJSON(b []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the top-level value")
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("the top-level value is %T, not an object", v)
	}
	return o, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := newObject()
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := k.(string)
			if _, dup := o.values[key]; dup {
				return nil, fmt.Errorf("duplicate key %q", key)
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(key, v)
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ']'
		return a, err
	}
	return tok, nil
}

// encodeJSON writes the tree as json.MarshalIndent would with a two-space indent (and
// without escaping <, > and &, which flag usages contain), plus a final newline.
func encodeJSON(o *object) ([]byte, error) {
	var b strings.Builder
	if err := encodeValue(&b, o, ""); err != nil {
		return nil, err
	}
	b.WriteString("\n")
	return []byte(b.String()), nil
}

func encodeValue(b *strings.Builder, v any, indent string) error {
	inner := indent + "  "
	switch v := v.(type) {
	case *object:
		if len(v.keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteString("{\n")
		for i, k := range v.keys {
			b.WriteString(inner)
			if err := encodeScalar(b, k); err != nil {
				return err
			}
			b.WriteString(": ")
			if err := encodeValue(b, v.values[k], inner); err != nil {
				return err
			}
			if i < len(v.keys)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[\n")
		for i, e := range v {
			b.WriteString(inner)
			if err := encodeValue(b, e, inner); err != nil {
				return err
			}
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "]")
	case []string:
		a := make([]any, len(v))
		for i, s := range v {
			a[i] = s
		}
		return encodeValue(b, a, indent)
	default:
		return encodeScalar(b, v)
	}
	return nil
}

func encodeScalar(b *strings.Builder, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.WriteString(strings.TrimSuffix(buf.String(), "\n"))
	return nil
}
