package clusterbody

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	mappingDoc    = "../../docs/cluster-service-create.md"
	mappingHeader = "| CS wire path | Cosmos source | Transformation |"
)

// mappingRow is a Mapping as the document's table shows it.
func mappingRow(m Mapping) []string {
	from := "constant"
	if len(m.From) > 0 {
		quoted := make([]string, len(m.From))
		for i, f := range m.From {
			quoted[i] = "`" + f + "`"
		}
		from = strings.Join(quoted, ", ")
	}
	return []string{"`" + m.Wire + "`", from, m.How}
}

func mappingTable() string {
	var b strings.Builder
	b.WriteString(mappingHeader + "\n|---|---|---|\n")
	for _, m := range Mappings {
		b.WriteString("| " + strings.Join(mappingRow(m), " | ") + " |\n")
	}
	return b.String()
}

// docTable is the rows of the table under header in a markdown document, cell by cell.
func docTable(t *testing.T, doc, header string) [][]string {
	t.Helper()
	_, table, found := strings.Cut(doc, header+"\n")
	require.True(t, found, "the document has a table under %q", header)
	var rows [][]string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |")
		rows = append(rows, strings.Split(inner, " | "))
	}
	return rows
}

// docs/cluster-service-create.md shows Mappings row for row; on a mismatch the failure
// prints the table to paste.
func TestDocumentShowsMappings(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(mappingDoc)
	require.NoError(t, err)
	got := docTable(t, string(b), mappingHeader)
	for i, m := range Mappings {
		for _, cell := range mappingRow(m) {
			require.NotContains(t, cell, " | ", "row %d (%s) would split into extra cells", i, m.Wire)
		}
	}
	want := make([][]string, len(Mappings))
	for i, m := range Mappings {
		want[i] = mappingRow(m)
	}
	for i := 0; i < len(want) && i < len(got); i++ {
		assert.Equal(t, want[i], got[i], "row %d", i+1)
	}
	if !assert.Len(t, got, len(want), "the table has one row per mapping") || t.Failed() {
		t.Logf("the table as Mappings has it:\n%s", mappingTable())
	}
}

// matches reports whether a concrete wire path fits a Mapping's pattern, whose
// <placeholder> segments stand for any map key.
func matches(pattern, path string) bool {
	ps, cs := strings.Split(pattern, "."), strings.Split(path, ".")
	if len(ps) != len(cs) {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ps[i], "<") && strings.HasSuffix(ps[i], ">") {
			continue
		}
		if ps[i] != cs[i] {
			return false
		}
	}
	return true
}

// With every optional Cosmos field set, the body holds exactly the fields Mappings
// names: none it does not explain, and none of its rows missing.
func TestMappingsCoverTheWholeBody(t *testing.T) {
	t.Parallel()
	body, err := Build(fullInput())
	require.NoError(t, err)
	m := wire(t, body)
	leafPaths, nodePaths := map[string]bool{}, map[string]bool{}
	leaves("", m, leafPaths)
	nodes("", m, nodePaths)

	for _, leaf := range sortedKeys(leafPaths) {
		found := false
		for _, row := range Mappings {
			found = found || matches(row.Wire, leaf)
		}
		assert.True(t, found, "the body's %s has no Mappings row", leaf)
	}
	seen := map[string]bool{}
	for _, row := range Mappings {
		assert.False(t, seen[row.Wire], "%s has two rows", row.Wire)
		seen[row.Wire] = true
		found := false
		for n := range nodePaths {
			found = found || matches(row.Wire, n)
		}
		assert.True(t, found, "Mappings row %s is not in the body of a fully populated cluster", row.Wire)
	}
}

// Each Cosmos path a row names is one Build reads: a path in the cluster document is
// under properties or the envelope, another document's starts with its type.
func TestMappingsNameCosmosPaths(t *testing.T) {
	t.Parallel()
	prefixes := []string{"properties.", "ServiceProviderCluster.properties.", "Subscription.properties.", "ManagementCluster.properties."}
	var bad []string
	for _, row := range Mappings {
		for _, f := range row.From {
			ok := f == pathResourceID
			for _, p := range prefixes {
				ok = ok || strings.HasPrefix(f, p)
			}
			if !ok {
				bad = append(bad, row.Wire+" ← "+f)
			}
		}
	}
	sort.Strings(bad)
	assert.Empty(t, bad)
}
