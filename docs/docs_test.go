// Package docs holds the operator documentation; its tests keep the documents in step
// with the code they describe.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every controller file has its section in the data-flow document, and every file the
// document links to exists.
func TestDataFlowCoversEveryController(t *testing.T) {
	b, err := os.ReadFile("cosmos-data-flow.md")
	require.NoError(t, err)
	doc := string(b)

	links := regexp.MustCompile(`\*\*File:\*\* \[[^\]]+\]\(([^)]+)\)`).FindAllStringSubmatch(doc, -1)
	require.NotEmpty(t, links)
	linked := map[string]bool{}
	for _, l := range links {
		_, err := os.Stat(l[1])
		assert.NoError(t, err, "linked file %s", l[1])
		linked[filepath.Clean(l[1])] = true
	}
	controllers, err := filepath.Glob("../*/controllers/*_controller.go")
	require.NoError(t, err)
	require.NotEmpty(t, controllers)
	for _, c := range controllers {
		assert.True(t, linked[filepath.Clean(c)], "%s has no section in docs/cosmos-data-flow.md", c)
	}
	for _, section := range strings.Split(doc, "\n#### ")[1:] {
		title := strings.SplitN(section, "\n", 2)[0]
		if strings.Contains(section, "**File:**") {
			assert.Contains(t, section, "**Trigger:**", title)
			assert.Contains(t, section, "| **Write** |", title)
		}
	}
}
