package fakeclusterservice

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// README.md documents the create rules in the order the fake applies them; the order is
// part of the contract, because CS reports only the first error.
func TestCreateRulesREADMEOrder(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	rows := regexp.MustCompile("(?m)^\\| ([0-9]+) \\| `([^`]+)` \\|").FindAllStringSubmatch(string(readme), -1)
	var documented []string
	for i, row := range rows {
		assert.Equal(t, strconv.Itoa(i+1), row[1], "rules are numbered in order")
		documented = append(documented, row[2])
	}
	var applied []string
	for _, r := range createRules {
		applied = append(applied, r.path)
	}
	assert.Equal(t, applied, documented)
}
