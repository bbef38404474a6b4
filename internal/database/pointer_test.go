package database

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPointerEscapesAndSplitsBack(t *testing.T) {
	for _, tt := range []struct {
		names   []string
		pointer string
	}{
		{[]string{"properties", "status"}, "/properties/status"},
		{[]string{"a/b", "c~d", "0"}, "/a~1b/c~0d/0"},
		{[]string{"~1"}, "/~01"},
	} {
		assert.Equal(t, tt.pointer, Pointer(tt.names...))
		assert.Equal(t, tt.names, PointerNames(tt.pointer))
	}
}
