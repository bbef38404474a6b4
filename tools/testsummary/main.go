// Command testsummary reads `go test -json` on stdin, prints what a developer needs (each
// package's result, the full output of anything that failed, where the store conformance
// suite ran) and ends with one line: "N passed, N failed, N skipped". It exits non-zero
// when a test or build failed or when any test was skipped: a skipped test must never
// count as passing.
//
// -conformance names the stores whose conformance suite must have run (default both);
// `make check`, which runs no emulator, asks for the memory store's alone.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// conformanceSuites maps the packages that run the store conformance suite to the store
// they exercise.
var conformanceSuites = map[string]string{
	"github.com/hcpsched/hcpsched/internal/database/memory": "memory store",
	"github.com/hcpsched/hcpsched/internal/database/cosmos": "Cosmos store on the emulator",
}

// storeNames are the -conformance names of the stores, in the order they are reported.
var storeNames = []struct{ flag, store string }{
	{"memory", "memory store"},
	{"cosmos", "Cosmos store on the emulator"},
}

// requiredStores turns -conformance's comma-separated names into the stores reported.
func requiredStores(names string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(names, ",") {
		found := false
		for _, s := range storeNames {
			if s.flag == strings.TrimSpace(name) {
				out, found = append(out, s.store), true
			}
		}
		if !found {
			return nil, fmt.Errorf("-conformance: unknown store %q (want memory or cosmos)", name)
		}
	}
	return out, nil
}

type summary struct {
	passed, failed, skipped int
	failedPackages          []string
	skippedTests            []string
	failedTests             []string
	conformance             map[string]*[3]int // store -> passed, failed, skipped
	output                  map[string][]string
}

func main() {
	conformance := flag.String("conformance", "memory,cosmos", "the stores whose conformance suite must have run, comma-separated: memory, cosmos")
	flag.Parse()
	stores, err := requiredStores(*conformance)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		os.Exit(2)
	}
	s, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		os.Exit(2)
	}
	if !s.report(os.Stdout, stores) {
		os.Exit(1)
	}
}

func read(in io.Reader, out io.Writer) (*summary, error) {
	s := &summary{conformance: map[string]*[3]int{}, output: map[string][]string{}}
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	for scanner.Scan() {
		line := scanner.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			// go test prints build failures as plain text before any JSON.
			fmt.Fprintln(out, string(line))
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if e.Test == "" {
				if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?") {
					fmt.Fprint(out, e.Output)
				} else {
					s.output[key] = append(s.output[key], e.Output)
				}
			} else {
				s.output[key] = append(s.output[key], e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test == "" {
				if e.Action == "fail" {
					s.failedPackages = append(s.failedPackages, e.Package)
				}
				continue
			}
			s.count(e)
			if e.Action == "pass" {
				delete(s.output, key)
			}
		}
	}
	return s, scanner.Err()
}

func (s *summary) count(e event) {
	idx := map[string]int{"pass": 0, "fail": 1, "skip": 2}[e.Action]
	switch e.Action {
	case "pass":
		s.passed++
	case "fail":
		s.failed++
		s.failedTests = append(s.failedTests, e.Package+" "+e.Test)
	case "skip":
		s.skipped++
		s.skippedTests = append(s.skippedTests, e.Package+" "+e.Test)
	}
	if store, ok := conformanceSuites[e.Package]; ok && strings.HasPrefix(e.Test, "TestConformance/") {
		if s.conformance[store] == nil {
			s.conformance[store] = &[3]int{}
		}
		s.conformance[store][idx]++
	}
}

// report prints the summary and reports whether the run passed: nothing failed, nothing
// was skipped, and the conformance suite ran on every store in stores.
func (s *summary) report(out io.Writer, stores []string) bool {
	for _, t := range s.failedTests {
		fmt.Fprintf(out, "\n--- FAIL: %s\n%s", t, strings.Join(s.output[t], ""))
	}
	for _, p := range s.failedPackages {
		if lines := s.output[p+" "]; len(lines) > 0 {
			fmt.Fprintf(out, "\n--- package %s\n%s", p, strings.Join(lines, ""))
		}
	}
	fmt.Fprintln(out)
	for _, want := range stores {
		c, ok := s.conformance[want]
		if !ok {
			fmt.Fprintf(out, "store conformance suite on the %s: NOT RUN\n", want)
			s.failed++
			continue
		}
		fmt.Fprintf(out, "store conformance suite on the %s: %d passed, %d failed, %d skipped\n", want, c[0], c[1], c[2])
	}
	for _, t := range s.skippedTests {
		fmt.Fprintf(out, "skipped (not allowed): %s\n", t)
	}
	ok := s.failed == 0 && s.skipped == 0 && len(s.failedPackages) == 0
	fmt.Fprintf(out, "%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	return ok
}
