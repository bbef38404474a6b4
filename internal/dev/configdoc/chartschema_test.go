package configdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/process"
)

// plain converts the ordered tree to what encoding/json decodes with UseNumber.
func plain(v any) any {
	switch v := v.(type) {
	case *object:
		m := map[string]any{}
		for _, k := range v.keys {
			m[k] = plain(v.values[k])
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = plain(e)
		}
		return a
	}
	return v
}

// The chart's schema, written by hand and by the generator, reads back byte for byte:
// regenerating it cannot reformat what was written by hand.
func TestJSONTreeRoundTripsTheChartSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "charts", "hcpsched", "values.schema.json"))
	require.NoError(t, err)
	o, err := decodeJSON(b)
	require.NoError(t, err)
	out, err := encodeJSON(o)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(out))
}

func TestJSONTreeRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"duplicate key":  `{"a": 1, "a": 2}`,
		"not an object":  `[1]`,
		"trailing value": `{} {}`,
		"truncated":      `{"a": `,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeJSON([]byte(in))
			assert.Error(t, err)
		})
	}
}

// FuzzJSONTree: any JSON object decodes to what encoding/json decodes, keeps its key
// order, and encodes to the layout json.MarshalIndent gives a Go value in that order.
func FuzzJSONTree(f *testing.F) {
	for _, s := range []string{`{}`, `{"b": [1, {"a": null}], "a": "<x> & µ"}`, `{"n": 1.50e3, "t": true, "e": [], "o": {}}`, `{"\u0041": "\n"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeJSON(b)
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var want any
		require.NoError(t, dec.Decode(&want), "decodeJSON accepted what encoding/json refuses: %q", b)
		assert.Equal(t, want, plain(o))

		out, err := encodeJSON(o)
		require.NoError(t, err)
		again, err := decodeJSON(out)
		require.NoError(t, err, "%s", out)
		assert.Equal(t, o, again)
		out2, err := encodeJSON(again)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(out2))

		var indented bytes.Buffer
		require.NoError(t, json.Indent(&indented, out, "", "  "))
		assert.Equal(t, indented.String(), string(out), "the layout of json.MarshalIndent")
	})
}

// parsers are what the flag package does with a value of each type.
var parsers = map[string]func(string) error{
	"bool":     func(s string) error { _, err := strconv.ParseBool(s); return err },
	"int":      func(s string) error { _, err := strconv.ParseInt(s, 0, strconv.IntSize); return err },
	"uint":     func(s string) error { _, err := strconv.ParseUint(s, 0, strconv.IntSize); return err },
	"float":    func(s string) error { _, err := strconv.ParseFloat(s, 64); return err },
	"duration": func(s string) error { _, err := time.ParseDuration(s); return err },
}

func patternOf(t testing.TB, typ string) *regexp.Regexp {
	t.Helper()
	s := flagSchema(process.FlagDoc{Flag: "--x", Type: typ})
	p, ok := s.get("pattern")
	require.True(t, ok, typ)
	return regexp.MustCompile(p.(string))
}

// Each pattern accepts the usual spellings of its type and refuses what the flag package
// refuses or what is a different type.
func TestFlagPatterns(t *testing.T) {
	for typ, tc := range map[string]struct{ accept, refuse []string }{
		"bool":     {accept: []string{"", "true", "false", "1", "0", "True", "FALSE", "t"}, refuse: []string{"yes", "on", "tru", " true"}},
		"int":      {accept: []string{"", "0", "20", "-3", "+7"}, refuse: []string{"many", "1.5", "1e3", "2s", "010", "0x10"}},
		"uint":     {accept: []string{"", "0", "20"}, refuse: []string{"-1", "x", "08"}},
		"float":    {accept: []string{"", "1", "12", "0.5", ".5", "5.", "-1.5e3"}, refuse: []string{"twelve", "1,5", "e3", "."}},
		"duration": {accept: []string{"", "0", "30s", "2m0s", "1h30m", "1.5h", "300ms", "10µs", "-1s"}, refuse: []string{"90", "5 m", "1d", "s", "1.5"}},
	} {
		p := patternOf(t, typ)
		for _, s := range tc.accept {
			assert.True(t, p.MatchString(s), "%s accepts %q", typ, s)
			if s != "" {
				assert.NoError(t, parsers[typ](s), "the flag package parses the %s %q", typ, s)
			}
		}
		for _, s := range tc.refuse {
			assert.False(t, p.MatchString(s), "%s refuses %q", typ, s)
		}
	}
	s := flagSchema(process.FlagDoc{Flag: "--x", Type: "string"})
	_, ok := s.get("pattern")
	assert.False(t, ok, "a string is any string")
}

// longNumber is a run of digits long enough to overflow a parser: the patterns check the
// form of a value, not its range.
var longNumber = regexp.MustCompile(`[0-9]{7}`)

// FuzzFlagPatterns: whatever a pattern accepts, the flag package parses.
func FuzzFlagPatterns(f *testing.F) {
	for _, s := range []string{"1h30m", "-1.5e3", "True", "+7", ".5s", "0"} {
		f.Add(s)
	}
	patterns := map[string]*regexp.Regexp{}
	for typ := range parsers {
		patterns[typ] = patternOf(f, typ)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || longNumber.MatchString(s) {
			return
		}
		for typ, parse := range parsers {
			if patterns[typ].MatchString(s) {
				assert.NoError(t, parse(s), "the %s pattern accepts %q", typ, s)
			}
		}
	})
}

// validator is a command's validation that requires the named flags, as the binaries'
// validate functions do.
func validator(required ...string) func(args []string) error {
	return func(args []string) error {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		values := map[string]*string{}
		for _, n := range []string{"a", "b", "c"} {
			values[n] = fs.String(n, "", "")
		}
		if err := fs.Parse(args); err != nil {
			return err
		}
		var errs []error
		for _, n := range required {
			if *values[n] == "" {
				errs = append(errs, fmt.Errorf("--%s is required", n))
			}
		}
		return errors.Join(errs...)
	}
}

var abc = []process.FlagDoc{{Flag: "--a", Type: "string"}, {Flag: "--b", Type: "string"}, {Flag: "--c", Type: "string"}}

func TestRequiredFlags(t *testing.T) {
	for _, tc := range []struct {
		name     string
		validate func([]string) error
		want     []string
		wantErr  string
	}{
		{name: "none", validate: validator(), want: []string{}},
		{name: "the flags the error names", validate: validator("c", "a"), want: []string{"a", "c"}},
		{
			name:     "an error naming no flag",
			validate: func([]string) error { return errors.New("placement: at least one resource must be counted") },
			wantErr:  "fails without naming a flag",
		},
		{
			name:     "an error naming an unknown flag",
			validate: func([]string) error { return errors.New("--nope is required") },
			wantErr:  "--nope, which is not a flag",
		},
		{
			name: "a flag named but not needed",
			validate: func(args []string) error {
				if err := validator("a")(args); err != nil {
					return fmt.Errorf("%w unless --b is set", err)
				}
				return nil
			},
			wantErr: "names --b with the defaults but passes without it",
		},
		{
			name: "still failing with every named flag set",
			validate: func(args []string) error {
				if len(args) == 0 {
					return errors.New("--a is required")
				}
				return errors.New("--a must be a URL")
			},
			wantErr: "still fails with a set",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := requiredFlags(ChartComponent{Name: "x", Flags: abc, Validate: tc.validate})
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// handWritten is the part of a chart schema the generator does not write: it refers to
// the generated definitions.
const handWritten = `{
  "type": "object",
  "properties": {
    "config": {
      "$ref": "#/definitions/sharedFlags"
    },
    "one": {
      "properties": {
        "config": {
          "$ref": "#/definitions/oneFlags"
        }
      }
    },
    "two": {
      "properties": {
        "config": {
          "$ref": "#/definitions/twoFlags"
        }
      }
    }
  },
  "allOf": [
    {
      "$ref": "#/definitions/oneRequired"
    },
    {
      "$ref": "#/definitions/twoRequired"
    }
  ],
  "definitions": {
    "byHand": {
      "type": "string"
    }
  }
}
`

func component(t *testing.T, name string, flags []process.FlagDoc, required ...string) (string, *object) {
	t.Helper()
	def, err := flagsDefinition(ChartComponent{Name: name, Flags: flags, Validate: func(args []string) error {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		set := map[string]*string{}
		for _, d := range flags {
			set[strings.TrimPrefix(d.Flag, "--")] = fs.String(strings.TrimPrefix(d.Flag, "--"), "", "")
		}
		if err := fs.Parse(args); err != nil {
			return err
		}
		var errs []error
		for _, r := range required {
			if *set[r] == "" {
				errs = append(errs, fmt.Errorf("--%s is required", r))
			}
		}
		return errors.Join(errs...)
	}})
	require.NoError(t, err)
	return name, def
}

func regenerateAll(t *testing.T, schema string, defs ...any) *object {
	t.Helper()
	b := []byte(schema)
	for i := 0; i < len(defs); i += 2 {
		var err error
		b, err = regenerate(b, defs[i].(string), defs[i+1].(*object))
		require.NoError(t, err)
	}
	o, err := decodeJSON(b)
	require.NoError(t, err)
	return o
}

func TestRegenerate(t *testing.T) {
	one := []process.FlagDoc{{Flag: "--endpoint", Type: "string"}, {Flag: "--workers", Type: "int"}, {Flag: "--only-one", Type: "duration"}}
	two := []process.FlagDoc{{Flag: "--endpoint", Type: "string"}, {Flag: "--region", Type: "string"}, {Flag: "--workers", Type: "int"}}
	n1, d1 := component(t, "one", one, "endpoint")
	n2, d2 := component(t, "two", two, "endpoint", "region")

	got := regenerateAll(t, handWritten, n1, d1, n2, d2)
	t.Run("the order of the components does not matter", func(t *testing.T) {
		text := func(o *object) string {
			b, err := encodeJSON(o)
			require.NoError(t, err)
			return string(b)
		}
		assert.Equal(t, text(got), text(regenerateAll(t, handWritten, n2, d2, n1, d1)))
		assert.Equal(t, text(got), text(regenerateAll(t, handWritten, n1, d1, n2, d2, n1, d1)), "idempotent")
	})
	defs := got.child("definitions")
	t.Run("hand-written definitions stay", func(t *testing.T) {
		assert.Equal(t, []string{"byHand", "oneFlags", "oneRequired", "twoFlags", "twoRequired", "sharedFlags"}, defs.keys)
		assert.Equal(t, obj("type", "string"), defs.child("byHand"))
	})
	t.Run("a component takes its own flags only", func(t *testing.T) {
		assert.Equal(t, []string{"endpoint", "workers", "only-one"}, defs.child("oneFlags").child("properties").keys)
		assert.Equal(t, false, defs.child("oneFlags").values["additionalProperties"])
		assert.Equal(t, []any{"endpoint", "region"}, defs.child("twoFlags").values[requiredMark])
	})
	t.Run("the shared config takes the flags both have", func(t *testing.T) {
		assert.Equal(t, []string{"endpoint", "workers"}, defs.child("sharedFlags").child("properties").keys)
	})
	t.Run("a required flag both have may be in either config; one of a component only in its own", func(t *testing.T) {
		then := plain(defs.child("twoRequired").values["then"]).(map[string]any)["allOf"].([]any)
		require.Len(t, then, 2)
		assert.Contains(t, then[0], "anyOf", "endpoint: shared or two.config")
		assert.Equal(t, map[string]any{"properties": map[string]any{"two": map[string]any{
			"required": []any{"config"},
			"properties": map[string]any{"config": map[string]any{
				"required":   []any{"region"},
				"properties": map[string]any{"region": map[string]any{"type": []any{"string", "number", "boolean"}, "minLength": json.Number("1")}},
			}},
		}}}, then[1], "region: two.config only")
		assert.Equal(t, map[string]any{"properties": map[string]any{"two": map[string]any{"properties": map[string]any{"enabled": map[string]any{"const": true}}}}},
			plain(defs.child("twoRequired").values["if"]), "only while the component is enabled")
	})

	t.Run("a flag of two types is refused", func(t *testing.T) {
		b, err := regenerate([]byte(handWritten), n1, d1)
		require.NoError(t, err)
		_, bad := component(t, "two", []process.FlagDoc{{Flag: "--workers", Type: "duration"}})
		_, err = regenerate(b, "two", bad)
		assert.ErrorContains(t, err, "--workers has a different type in one and two")
	})
	t.Run("generated definitions nothing refers to are refused", func(t *testing.T) {
		n3, d3 := component(t, "three", one)
		_, err := regenerate([]byte(handWritten), n3, d3)
		assert.ErrorContains(t, err, "nothing refers to the generated definitions/threeFlags")
	})
}

// fakeTB records what CheckChartSchema reports.
type fakeTB struct {
	testing.TB
	errors []string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func TestCheckChartSchemaUpdatesThenMatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "values.schema.json")
	require.NoError(t, os.WriteFile(path, []byte(handWritten), 0o644))
	one := ChartComponent{Name: "one", Flags: []process.FlagDoc{{Flag: "--endpoint", Type: "string"}}, Validate: validator()}
	two := ChartComponent{Name: "two", Flags: []process.FlagDoc{{Flag: "--endpoint", Type: "string"}}, Validate: validator()}

	stale := &fakeTB{TB: t}
	CheckChartSchema(stale, path, one)
	require.Len(t, stale.errors, 1, "a schema without the generated definitions is out of date")
	assert.Contains(t, stale.errors[0], "HCPSCHED_UPDATE_DOCS=1")

	t.Setenv(UpdateEnv, "1")
	CheckChartSchema(t, path, one)
	CheckChartSchema(t, path, two)
	t.Setenv(UpdateEnv, "")
	for _, c := range []ChartComponent{one, two} {
		fresh := &fakeTB{TB: t}
		CheckChartSchema(fresh, path, c)
		assert.Empty(t, fresh.errors, c.Name)
	}

	// A flag added to a command makes its check fail until the schema is regenerated.
	one.Flags = append(one.Flags, process.FlagDoc{Flag: "--new", Type: "bool"})
	changed := &fakeTB{TB: t}
	CheckChartSchema(changed, path, one)
	assert.Len(t, changed.errors, 1)
}
