package rawjson

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestObject(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantKeys   []string
		wantValues []string
		wantErr    string
	}{
		{name: "empty", in: `{}`},
		{name: "members in document order", in: `{"b":1,"a":"x","c":null}`, wantKeys: []string{"b", "a", "c"}, wantValues: []string{`1`, `"x"`, `null`}},
		{name: "nested values are not taken apart", in: `{"o":{"k":[1,{"x":"}"}]},"s":"a\"b,}"}`, wantKeys: []string{"o", "s"}, wantValues: []string{`{"k":[1,{"x":"}"}]}`, `"a\"b,}"`}},
		{name: "white space", in: " {\n \"a\" : [ 1 , 2 ] ,\t\"b\":true }\n", wantKeys: []string{"a", "b"}, wantValues: []string{`[ 1 , 2 ]`, `true`}},
		{name: "escaped key", in: `{"a\u0062\"":0}`, wantKeys: []string{`ab"`}, wantValues: []string{`0`}},
		{name: "duplicate keys stay", in: `{"a":1,"a":2}`, wantKeys: []string{"a", "a"}, wantValues: []string{`1`, `2`}},
		{name: "not an object", in: `[1]`, wantErr: "expected a JSON object"},
		{name: "empty input", in: ``, wantErr: "expected a JSON object, found the end of the input"},
		{name: "truncated after key", in: `{"a"`, wantErr: "unexpected end"},
		{name: "truncated value", in: `{"a":{"b":1}`, wantErr: "unexpected end"},
		{name: "truncated key", in: `{"ab`, wantErr: "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, values, err := Object([]byte(tt.in))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantKeys, keys)
			var got []string
			for _, v := range values {
				got = append(got, string(v))
			}
			assert.Equal(t, tt.wantValues, got)
		})
	}
}

func TestArray(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{name: "empty", in: `[]`},
		{name: "elements", in: `[1,"a,]",{"x":[2]},null, true ]`, want: []string{`1`, `"a,]"`, `{"x":[2]}`, `null`, `true`}},
		{name: "not an array", in: `{}`, wantErr: "expected a JSON array"},
		{name: "truncated", in: `[1,[2]`, wantErr: "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			elems, err := Array([]byte(tt.in))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, e := range elems {
				got = append(got, string(e))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// Members yields what comes before damage in a document and stops there.
func TestMembersStopAtDamage(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"whole", `{"id":"a","n":1}`, []string{`id="a"`, `n=1`}},
		{"truncated in a later value", `{"id":"a","resourceType":"t","properties":{"x":[1,2`, []string{`id="a"`, `resourceType="t"`}},
		{"truncated in a string", `{"id":"a","b":"unterminated`, []string{`id="a"`}},
		{"truncated key", `{"id":"a","res`, []string{`id="a"`}},
		{"garbage after a member", `{"id":"a",x}`, []string{`id="a"`}},
		{"not an object", `["id","a"]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for k, v := range Members([]byte(tt.in)) {
				got = append(got, k+"="+string(v))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFieldsAndString(t *testing.T) {
	data := []byte(`{"id":"a","properties":{"id":"nested","_etag":"no"},"_etag":"\"0a\"","_lsn":42,"id":"b","esc":"x\u0041y"}`)
	got, err := Fields(data, "_etag", "id", "_lsn", "missing", "esc")
	require.NoError(t, err)
	assert.Equal(t, `"0a"`, String(got[0]), "an escaped quote")
	assert.Equal(t, "b", String(got[1]), "the last of a repeated key; nested members are not fields")
	assert.Equal(t, "42", string(got[2]))
	assert.Nil(t, got[3])
	assert.Equal(t, "xAy", String(got[4]))
	assert.Equal(t, "", String(got[2]), "a number is not a string")
	assert.Equal(t, "", String(nil))

	_, err = Fields([]byte(`[1]`), "id")
	assert.Error(t, err)
}

// On valid JSON, Object and Array split exactly as encoding/json does, and on anything
// else they return an error or a split, never a panic.
func FuzzSplit(f *testing.F) {
	for _, seed := range []string{`{}`, `[]`, `{"a":1,"b":[1,2,{"c":"d"}],"e":{"f":null}}`, `[1,"x",{"y":[]}]`,
		` { "k" : "v\"}" } `, `{"a\n":true}`, `{"a":1,"a":2}`, `{"a"`, `[`, `"s"`, `12`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, values, objErr := Object(data)
		elems, arrErr := Array(data)
		if !json.Valid(data) {
			return
		}
		switch bytes.TrimSpace(data)[0] {
		case '{':
			require.NoError(t, objErr)
			var want map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(data, &want))
			got := map[string]json.RawMessage{}
			for i, k := range keys {
				got[k] = values[i] // the last of a duplicate key wins, as in encoding/json
			}
			require.Equal(t, len(want), len(got))
			for k, v := range want {
				assert.Equal(t, compact(t, v), compact(t, got[k]), "member %q", k)
				fields, err := Fields(data, k)
				require.NoError(t, err)
				assert.Equal(t, compact(t, v), compact(t, fields[0]), "Fields(%q)", k)
				var s string
				if json.Unmarshal(v, &s) == nil {
					assert.Equal(t, s, String(fields[0]), "String of member %q", k)
				}
			}
		case '[':
			require.NoError(t, arrErr)
			var want []json.RawMessage
			require.NoError(t, json.Unmarshal(data, &want))
			require.Equal(t, len(want), len(elems))
			for i := range want {
				assert.Equal(t, compact(t, want[i]), compact(t, elems[i]), "element %d", i)
			}
		default:
			assert.Error(t, objErr)
			assert.Error(t, arrErr)
		}
	})
}

func compact(t *testing.T, raw []byte) string {
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, raw))
	return b.String()
}

// FuzzAppendString holds direct string writing (the codec's, the memory store's) to encoding/json's: the
// same bytes for every string, escapes and invalid UTF-8 included, so that a value the
// encoder writes compares equal to the bytes encoding/json wrote before.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "/subscriptions/s/resourceGroups/r", `q"uote`, `back\slash`, "<a>&b", "<", ">", "&", "tab\t", "é", "\u2028", "\xff", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(AppendString([]byte("prefix"), s)[len("prefix"):]))
	})
}
