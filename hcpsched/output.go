package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// Output formats.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

var outputFormats = []string{outputTable, outputJSON, outputYAML}

func validOutput(s string) bool { return slices.Contains(outputFormats, s) }

// result is what a verb prints: itself as JSON or YAML (its json tags name the fields
// of both, so scripts see one schema), or as a table for people.
type result interface {
	table(w *tabwriter.Writer)
}

func render(w io.Writer, format string, r result) error {
	switch format {
	case outputJSON:
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case outputYAML:
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	r.table(tw)
	return tw.Flush()
}

// row writes one tab-separated table row.
func row(w io.Writer, cells ...any) {
	for i, c := range cells {
		if i > 0 {
			fmt.Fprint(w, "\t")
		}
		fmt.Fprint(w, c)
	}
	fmt.Fprintln(w)
}
