package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCompareNatural(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int // sign
	}{
		{"2", "10", -1},
		{"10", "2", 1},
		{"hcp-local-9", "hcp-local-10", -1},
		{"rg-local-23/hcp-local-23", "rg-local-5/hcp-local-5", 1},
		{"1", "a", -1},
		{"stamp", "stamp", 0},
		{"007", "7", 0}, // the same number, however spelt
	} {
		got := CompareNatural(tc.a, tc.b)
		assert.Equal(t, tc.want, sign(got), "%q vs %q", tc.a, tc.b)
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
