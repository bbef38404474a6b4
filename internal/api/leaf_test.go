package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type namedString string

// The codec writes plain leaves itself; each must come out as encoding/json writes it,
// so that a value written either way reads the same and compares equal to what is stored.
func TestDirectLeavesMatchEncodingJSON(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 4, 5, 123456700, time.FixedZone("x", 3600))
	s := "/subscriptions/S/resourceGroups/<rg>&/providers/A/b/c"
	values := []any{
		"", "plain", s, "tab\t", "é", namedString("named"),
		0, -7, int64(1 << 60), int32(-5), uint(7), uint64(1 << 63), true, false,
		[]string(nil), []string{}, []string{"a", s, "é"},
		time.Time{}, at, at.UTC(), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		&s, (*string)(nil), &at, (*time.Time)(nil), &[]string{"x"},
	}
	for _, v := range values {
		rv := reflect.ValueOf(v)
		f := structField{name: "f", leaf: leafKindOf(rv.Type(), "")}
		assert.NotEqual(t, leafOther, f.leaf, "%T is written directly", v)
		got, err := appendField([]byte("x"), f, rv)
		require.NoError(t, err, "%T", v)
		want, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got[1:]), "%T %v", v, v)
	}
	type marshaler struct{ json.RawMessage }
	assert.Equal(t, leafOther, leafKindOf(reflect.TypeFor[marshaler](), ""), "a type with its own marshaler goes through encoding/json")
	assert.Equal(t, leafOther, leafKindOf(reflect.TypeFor[int](), "string"), "so does the string option")
	assert.Equal(t, leafOther, leafKindOf(reflect.TypeFor[float64](), ""), "and a float")
}
