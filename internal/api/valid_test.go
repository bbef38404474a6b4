package api_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// validJSONSeeds are inputs at each edge of the grammar, valid and not.
var validJSONSeeds = []string{
	``, ` `, `{}`, `[]`, ` {} `, `{} {}`, `{}x`, `{`, `}`, `[`, `]`, `{]`, `[}`, `{"a"}`, `{"a":}`,
	`{"a":1,}`, `[1,]`, `[,1]`, `{,"a":1}`, `{"a":1 "b":2}`, `{"a" : 1 , "b" : [ 1 , { } ] }`,
	`{1:2}`, `{"a":1}`, "{\t\"a\"\r:\n1}", "\u00a0{}", "\xef\xbb\xbf{}",
	`"x"`, `"`, `"\"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\x"`, `"\u00e9"`, `"\u00E9"`, `"\u00g9"`,
	`"\u00"`, `"\ud83d\ude00"`, "\"\x01\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\xfe\"", "\"\t\"",
	`0`, `-0`, `01`, `-`, `-a`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `1.e5`,
	`-01`, `123456789012345678901234567890`, `1x`, `[1x]`, `+1`, `0.0e0`, `[-]`,
	`true`, `false`, `null`, `tru`, `truex`, `nul`, `True`, `[true,false,null]`, `[nullx]`,
	strings.Repeat("[", api.MaxNestingDepth) + strings.Repeat("]", api.MaxNestingDepth),
	strings.Repeat("[", api.MaxNestingDepth+1) + strings.Repeat("]", api.MaxNestingDepth+1),
	strings.Repeat(`{"a":`, api.MaxNestingDepth) + "1" + strings.Repeat("}", api.MaxNestingDepth),
	strings.Repeat(`{"a":`, api.MaxNestingDepth+1) + "1" + strings.Repeat("}", api.MaxNestingDepth+1),
	strings.Repeat("[", api.MaxNestingDepth) + "{}" + strings.Repeat("]", api.MaxNestingDepth),
	strings.Repeat("[", api.MaxNestingDepth-1) + "{}" + strings.Repeat("]", api.MaxNestingDepth-1),
}

// The fast validator DecodeLean uses agrees with json.Valid at every edge of the
// grammar and on every prefix of every fixture.
func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range validJSONSeeds {
		assert.Equal(t, json.Valid([]byte(s)), api.ValidJSON([]byte(s)), "%.60q", s)
		checkContainerSpans(t, []byte(s))
	}
	for _, f := range arohcp.All() {
		assert.True(t, api.ValidJSON(f.Data), f.Name)
		checkContainerSpans(t, f.Data)
		for cut := range len(f.Data) {
			truncated := f.Data[:cut]
			if api.ValidJSON(truncated) != json.Valid(truncated) {
				assert.Fail(t, "validJSON disagrees with json.Valid", "%s cut at %d", f.Name, cut)
				break
			}
		}
	}
}

// FuzzValidJSON: api.ValidJSON and json.Valid agree on every input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add([]byte(s))
	}
	for _, fx := range arohcp.All() {
		f.Add(fx.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		assert.Equal(t, json.Valid(data), api.ValidJSON(data), "%q", data)
		checkContainerSpans(t, data)
	})
}

// checkContainerSpans holds what the validator records for the lean walk to the
// document: valid data has one span per object and array, in the order they open, each
// ending where a byte-at-a-time scan ends it.
func checkContainerSpans(t *testing.T, data []byte) {
	t.Helper()
	starts, ends, valid := api.ContainerSpans(data)
	assert.Equal(t, api.ValidJSON(data), valid)
	if !valid {
		return
	}
	containers := 0
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
			containers++
		}
	}
	if !assert.Len(t, starts, containers, "%.80q", data) {
		return
	}
	wantStarts, wantEnds := containerSpansByteByByte(data)
	assert.Equal(t, wantStarts, starts, "%.80q", data)
	assert.Equal(t, wantEnds, ends, "%.80q", data)
}

// containerSpansByteByByte is the oracle: one pass over valid JSON with a stack of open
// containers, in opening order. It is linear, so the deepest seeds (ten thousand
// nested objects) stay well inside the fuzz worker's ten seconds per input even with
// the race detector; skipping from each container's start to its end was quadratic.
func containerSpansByteByByte(data []byte) (starts, ends []int) {
	var open []int // indexes into starts
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			open = append(open, len(starts))
			starts = append(starts, i)
			ends = append(ends, -1)
		case c == '}' || c == ']':
			ends[open[len(open)-1]] = i + 1
			open = open[:len(open)-1]
		}
	}
	return starts, ends
}
