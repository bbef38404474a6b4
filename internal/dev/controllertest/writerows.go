package controllertest

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
)

// AssertOwnsItsWriteRows checks that the fields a writer tells docwrite it owns are its
// Write rows for docType in the data-flow document at docPath (section is the section's
// name, its title without "Controller" or a parenthesis), both ways: every owned field is
// documented, and every documented field is owned, or is one the write path sets on
// every write (cosmosMetadata), or is a field of a document the writer creates (created,
// as encoded).
func AssertOwnsItsWriteRows(t testing.TB, docPath, section, docType string, owned docwrite.Fields, created ...[]byte) {
	t.Helper()
	md, err := os.ReadFile(docPath)
	require.NoError(t, err)
	var documented []string
	found := false
	for _, s := range dataflowtest.ParseDoc(string(md)) {
		if s.Name() == section {
			documented, found = s.Writes[docType], true
		}
	}
	require.True(t, found, "%s has no section %s", docPath, section)
	var createdFields []string
	for _, body := range created {
		paths, err := dataflowtest.Diff(nil, body)
		require.NoError(t, err)
		createdFields = append(createdFields, paths...)
	}
	// The data-flow document spells fields from properties; docwrite from the root.
	var fromProperties []string
	for _, o := range owned {
		p, ok := strings.CutPrefix(o, "properties.")
		if !ok {
			p = o
		}
		fromProperties = append(fromProperties, p)
		assert.Contains(t, documented, p, "%s owns %s, which its Write rows for %s lack", section, o, docType)
	}
	for _, d := range documented {
		if slices.Contains(fromProperties, d) || strings.HasPrefix(d, "cosmosMetadata.") || slices.Contains(createdFields, d) {
			continue
		}
		assert.Fail(t, "documented but not owned", "%s's Write rows for %s list %s, which it does not own", section, docType, d)
	}
}
