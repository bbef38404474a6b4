package dataflowtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Section is one actor's section of the data-flow document.
type Section struct {
	// Title names the actor; Name() is how a controller's name matches it.
	Title string
	// File is the base name of the file the section links to; every actor's section has
	// one.
	File string
	// Writes are the documented written paths by document type.
	Writes map[string][]string
}

var (
	fileLink    = regexp.MustCompile(`\*\*File:\*\* \[[^\]]*\]\(([^)]+)\)`)
	writeRow    = regexp.MustCompile("^\\| \\*\\*Write\\*\\* \\| \\*\\*`([^`]+)`\\*\\*[^|]*\\|(.*)$")
	boldField   = regexp.MustCompile("\\*\\*`([^`]+)`\\*\\*")
	titleSuffix = regexp.MustCompile(`(Controller)?( \(.*\))?$`)
)

// ParseDoc reads every section with a File link and its Write rows.
func ParseDoc(md string) []Section {
	var out []Section
	for _, part := range strings.Split(md, "\n#### ")[1:] {
		lines := strings.Split(part, "\n")
		m := fileLink.FindStringSubmatch(part)
		if m == nil {
			continue
		}
		s := Section{Title: lines[0], File: filepath.Base(m[1]), Writes: map[string][]string{}}
		for _, l := range lines {
			row := writeRow.FindStringSubmatch(l)
			if row == nil {
				continue
			}
			for _, f := range boldField.FindAllStringSubmatch(row[2], -1) {
				s.Writes[row[1]] = append(s.Writes[row[1]], f[1])
			}
		}
		out = append(out, s)
	}
	return out
}

// Name is the section's title without a trailing "Controller" or parenthesis, as the
// backend's controller names are spelled.
func (s Section) Name() string { return bareName(s.Title) }

// bareName drops a trailing "Controller" or parenthesis, so that a controller named
// LifecycleController and one named Placement match the sections LifecycleController
// and PlacementController alike.
func bareName(name string) string { return titleSuffix.ReplaceAllString(name, "") }

// covers reports whether a documented path covers a recorded one: equal, or a prefix of
// it ending at a field or an array/condition boundary.
func covers(documented, recorded string) bool {
	return documented == recorded ||
		strings.HasPrefix(recorded, documented+".") ||
		strings.HasPrefix(recorded, documented+"[")
}

// Check returns one problem per recorded Write that the document's Write rows for the
// controller's section and the document type do not cover, and one per Write made
// outside any controller, which no section can cover.
func Check(sections []Section, writes []Write) []string {
	byName := map[string]Section{}
	for _, s := range sections {
		byName[s.Name()] = s
	}
	var problems []string
	for _, w := range writes {
		if w.Controller == "" {
			problems = append(problems, fmt.Sprintf("a write outside any controller (its ctx names none) changed %s.%s: "+
				"a reconcile's ctx carries its controller's name (controller.WithName); wrap only the containers controllers write through", w.Type, w.Path))
			continue
		}
		s, ok := byName[bareName(w.Controller)]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no section of the document is titled for this controller; it wrote %s.%s", w.Controller, w.Type, w.Path))
			continue
		}
		covered := false
		for _, d := range s.Writes[w.Type] {
			if covers(d, w.Path) {
				covered = true
				break
			}
		}
		if !covered {
			problems = append(problems, fmt.Sprintf("%s (%s): writes %s `%s`, missing from its Write rows", s.Name(), s.File, w.Type, w.Path))
		}
	}
	return problems
}

// Main runs a package's tests, then checks what they recorded against the data-flow
// document at docPath and fails the package when a written path is undocumented. Use it
// as TestMain: os.Exit(dataflowtest.Main(m, "../../docs/cosmos-data-flow.md")).
func Main(m *testing.M, docPath string) int {
	code := m.Run()
	md, err := os.ReadFile(docPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "data-flow check: %v\n", err)
		return 1
	}
	problems := Check(ParseDoc(string(md)), Default.Writes())
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "data-flow check: %s\n", p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "data-flow check: %d written fields are not documented in %s\n", len(problems), docPath)
		return 1
	}
	return code
}
