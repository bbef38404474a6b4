package configdoc

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hcpsched/hcpsched/internal/process"
)

// ChartSchemaPath is the Helm chart's values schema, from a binary's package directory.
const ChartSchemaPath = "../deploy/charts/hcpsched/values.schema.json"

// ChartComponent is one binary as the Helm chart runs it.
type ChartComponent struct {
	// Name is the component's key in the chart's values ("backend", "fleet"): its flags
	// go in <Name>.config, and <Name>.enabled turns it on.
	Name string
	// Flags are the flags of the command the chart runs.
	Flags []process.FlagDoc
	// Validate parses args, and no environment, and validates the result as the command
	// does before it starts. The flags its error names when every flag has its default
	// are the ones the command refuses to start without.
	Validate func(args []string) error
}

// The chart's schema keeps what is generated in its definitions, each marked with the
// component it was generated from; the hand-written rest of the schema refers to them:
//
//	definitions.<name>Flags     the properties <name>.config accepts: every flag of the
//	                            command, each with a schema of its type
//	definitions.sharedFlags     the properties the shared config accepts: the flags every
//	                            component has
//	definitions.<name>Required  while <name>.enabled, every flag the command requires is
//	                            non-empty in <name>.config or, for a shared flag, in config
const (
	generatedMark   = "x-hcpsched-generated-from"
	requiredMark    = "x-hcpsched-required"
	sharedFlagsName = "sharedFlags"
)

// CheckChartSchema compares the generated definitions of the chart's values schema with
// the component's flags and the required flags its validation names; with
// HCPSCHED_UPDATE_DOCS=1 it rewrites them instead. The definitions shared between
// components are computed from every component's definitions in the file, so that one
// run of every component's test, in any order or in parallel, leaves the file complete.
func CheckChartSchema(t testing.TB, path string, c ChartComponent) {
	t.Helper()
	def, err := flagsDefinition(c)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	if os.Getenv(UpdateEnv) == "1" {
		if err := updateSchema(path, c.Name, def); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := regenerate(b, c.Name, def)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if string(want) != string(b) {
		t.Errorf("%s: the definitions generated from the %s flags are out of date; run the test with %s=1 to rewrite them.\n%s",
			path, c.Name, UpdateEnv, firstDifference(string(want), string(b)))
	}
}

// updateSchema rewrites one binary's part of the chart's values schema.
func updateSchema(path, name string, def *object) error {
	return rewriteLocked(path, func(b []byte) ([]byte, error) { return regenerate(b, name, def) })
}

// regenerate returns the schema with the component's flags definition replaced by def
// and the derived definitions recomputed from every component's flags definition.
func regenerate(schema []byte, name string, def *object) ([]byte, error) {
	root, err := decodeJSON(schema)
	if err != nil {
		return nil, err
	}
	defs := root.child("definitions")
	if defs == nil {
		defs = newObject()
		root.set("definitions", defs)
	}
	defs.set(name+"Flags", def)

	components := map[string]*object{}
	for _, key := range defs.keys {
		d := defs.child(key)
		if d == nil {
			continue
		}
		if from, _ := d.get(generatedMark); from != nil && key == fmt.Sprint(from)+"Flags" {
			components[fmt.Sprint(from)] = d
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range components {
			if !yield(n) {
				return
			}
		}
	})
	shared, err := sharedDefinition(names, components)
	if err != nil {
		return nil, err
	}
	defs.set(sharedFlagsName, shared)
	for _, n := range names {
		defs.set(n+"Required", requiredDefinition(n, components[n], shared))
	}
	// The hand-written definitions first, in their order, then the generated ones in
	// one order, whichever component's test wrote them first.
	generated := []string{}
	for _, n := range names {
		generated = append(generated, n+"Flags", n+"Required")
	}
	generated = append(generated, sharedFlagsName)
	keys := slices.DeleteFunc(slices.Clone(defs.keys), func(k string) bool { return slices.Contains(generated, k) })
	defs.keys = append(keys, generated...)

	out, err := encodeJSON(root)
	if err != nil {
		return nil, err
	}
	// The hand-written schema must use what is generated, or a flag the chart does not
	// know would still pass.
	for _, ref := range []string{name + "Flags", name + "Required", sharedFlagsName} {
		if !strings.Contains(string(out), `"$ref": "#/definitions/`+ref+`"`) {
			return nil, fmt.Errorf("nothing refers to the generated definitions/%s", ref)
		}
	}
	return out, nil
}

// flagsDefinition is the schema of <name>.config: an object of the command's flags.
func flagsDefinition(c ChartComponent) (*object, error) {
	required, err := requiredFlags(c)
	if err != nil {
		return nil, err
	}
	props := newObject()
	for _, d := range c.Flags {
		props.set(strings.TrimPrefix(d.Flag, "--"), flagSchema(hostIndependent([]process.FlagDoc{d})[0]))
	}
	return obj(
		generatedMark, c.Name,
		"description", fmt.Sprintf("The flags of %s by name, without the leading dashes. Generated from its flag set by its TestConfigurationDoc (%s=1 rewrites it); do not edit.", c.Name, UpdateEnv),
		requiredMark, toAny(required),
		"type", "object",
		"additionalProperties", false,
		"properties", props,
	), nil
}

// flagMention is a flag named in a validation error.
var flagMention = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)

// requiredFlags are the flags the command refuses to start without: those its validation
// names when every flag has its default. Each must be needed on its own: with all of
// them set the validation passes, and with any one left out it fails.
func requiredFlags(c ChartComponent) ([]string, error) {
	err := c.Validate(nil)
	if err == nil {
		return []string{}, nil
	}
	known := map[string]bool{}
	for _, d := range c.Flags {
		known[strings.TrimPrefix(d.Flag, "--")] = true
	}
	var names []string
	for _, m := range flagMention.FindAllStringSubmatch(err.Error(), -1) {
		if !known[m[1]] {
			return nil, fmt.Errorf("validation with the defaults names --%s, which is not a flag: %v", m[1], err)
		}
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("validation with the defaults fails without naming a flag: %v", err)
	}
	slices.Sort(names)
	args := func(except string) []string {
		var a []string
		for _, n := range names {
			if n != except {
				a = append(a, "--"+n+"=x")
			}
		}
		return a
	}
	if err := c.Validate(args("")); err != nil {
		return nil, fmt.Errorf("validation still fails with %s set: %w", strings.Join(names, ", "), err)
	}
	for _, n := range names {
		if c.Validate(args(n)) == nil {
			return nil, fmt.Errorf("validation names --%s with the defaults but passes without it", n)
		}
	}
	return names, nil
}

// Patterns of what the flag package parses, for values given as strings. Each accepts the
// empty string, which the chart leaves out so that the binary's default applies. They
// are a subset of what the parsers accept (decimal only: flag reads integers in base 0,
// so 010 would be 8 and 08 an error), so a value they accept parses; fuzzed against the
// parsers in chartschema_test.go.
const (
	boolPattern     = `^(|1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$`
	intPattern      = `^(|[-+]?(0|[1-9][0-9]*))$`
	uintPattern     = `^(|0|[1-9][0-9]*)$`
	floatPattern    = `^(|[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?)$`
	durationPattern = `^(|[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+))$`
)

// flagSchema is the schema of one flag's value. A value may be null or empty (the
// binary's default applies); YAML's own booleans and numbers are accepted for flags of
// those types. A duration must be a string with a unit: the chart writes values as
// they are, and 300 is no duration.
func flagSchema(d process.FlagDoc) *object {
	desc := d.Flag + " (" + d.Env + "): " + d.Usage
	if d.Default != "" {
		desc += " Default: " + d.Default + "."
	}
	typed := func(types []string, pattern string) *object {
		return obj("description", desc, "type", types, "pattern", pattern)
	}
	switch d.Type {
	case "bool":
		return typed([]string{"boolean", "string", "null"}, boolPattern)
	case "int":
		return typed([]string{"integer", "string", "null"}, intPattern)
	case "uint":
		return typed([]string{"integer", "string", "null"}, uintPattern)
	case "float":
		return typed([]string{"number", "string", "null"}, floatPattern)
	case "duration":
		return typed([]string{"string", "null"}, durationPattern)
	}
	// string, and the types flag.Value implementations name in their usage.
	return obj("description", desc, "type", []string{"string", "null"})
}

// sharedDefinition is the schema of the shared config: the flags every component has.
// A flag means the same to each (same name, same type), which the check here holds to.
func sharedDefinition(names []string, components map[string]*object) (*object, error) {
	props := newObject()
	if len(names) > 0 {
		first := components[names[0]].child("properties")
	flags:
		for _, flag := range first.keys {
			for _, n := range names[1:] {
				other, ok := components[n].child("properties").get(flag)
				if !ok {
					continue flags
				}
				a, _ := encodeJSON(obj("type", first.child(flag).values["type"], "pattern", first.child(flag).values["pattern"]))
				b, _ := encodeJSON(obj("type", other.(*object).values["type"], "pattern", other.(*object).values["pattern"]))
				if string(a) != string(b) {
					return nil, fmt.Errorf("--%s has a different type in %s and %s", flag, names[0], n)
				}
			}
			props.set(flag, first.values[flag])
		}
	}
	return obj(
		generatedMark, strings.Join(names, ", "),
		"description", fmt.Sprintf("The flags every component (%s) has; a flag only one has goes in that component's config. Generated; do not edit.", strings.Join(names, ", ")),
		"type", "object",
		"additionalProperties", false,
		"properties", props,
	), nil
}

// requiredDefinition requires, while the component is enabled, each flag its command
// requires to be non-empty where the chart reads it from: the component's config or,
// for a flag every component has, the shared config (the component's wins).
func requiredDefinition(name string, flags, shared *object) *object {
	v, _ := flags.get(requiredMark)
	list, _ := v.([]any)
	var required []string
	for _, r := range list {
		required = append(required, fmt.Sprint(r))
	}
	desc := fmt.Sprintf("What %s refuses to start without, from its validation. Generated; do not edit.", name)
	if len(required) == 0 {
		return obj(generatedMark, name, "description", desc)
	}
	nonEmpty := func(flag string) *object {
		return obj(
			"required", []string{flag},
			"properties", obj(flag, obj("type", []string{"string", "number", "boolean"}, "minLength", 1)),
		)
	}
	inComponent := func(flag string) *object {
		return obj("properties", obj(name, obj(
			"required", []string{"config"},
			"properties", obj("config", nonEmpty(flag)),
		)))
	}
	var all []any
	for _, flag := range required {
		if _, ok := shared.child("properties").get(flag); ok {
			all = append(all, obj("anyOf", []any{
				obj("required", []string{"config"}, "properties", obj("config", nonEmpty(flag))),
				inComponent(flag),
			}))
		} else {
			all = append(all, inComponent(flag))
		}
	}
	return obj(
		generatedMark, name,
		"description", desc,
		"if", obj("properties", obj(name, obj("properties", obj("enabled", obj("const", true))))),
		"then", obj("allOf", all),
	)
}

// firstDifference shows the first line where two texts differ, with its line number.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant: %s\ngot:  %s", i+1, wl, gl)
		}
	}
	return "they differ only in line endings"
}

func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

// NoEnv is an environment with no variables, for parsing flags in a test without the
// test process's own HCPSCHED_* variables.
func NoEnv(string) (string, bool) { return "", false }
