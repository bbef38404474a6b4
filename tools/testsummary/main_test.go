package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummary(t *testing.T) {
	const conformance = `{"Action":"pass","Package":"github.com/hcpsched/hcpsched/internal/database/memory","Test":"TestConformance/CRUD"}
{"Action":"pass","Package":"github.com/hcpsched/hcpsched/internal/database/cosmos","Test":"TestConformance/CRUD"}
`
	tests := []struct {
		name     string
		input    string
		wantOK   bool
		wantLine string
		wantText string
	}{
		{"all pass", conformance + `{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}` + "\n", true, "2 passed, 0 failed, 0 skipped", "ok  \tp"},
		{"a skip fails the run", conformance + `{"Action":"skip","Package":"p","Test":"TestY"}` + "\n", false, "2 passed, 0 failed, 1 skipped", "skipped (not allowed): p TestY"},
		{"a failure shows its output", conformance + `{"Action":"output","Package":"p","Test":"TestX","Output":"boom\n"}
{"Action":"fail","Package":"p","Test":"TestX"}
`, false, "2 passed, 1 failed, 0 skipped", "--- FAIL: p TestX\nboom"},
		{"conformance must run on both stores", `{"Action":"pass","Package":"p","Test":"TestZ"}` + "\n", false, "1 passed, 2 failed, 0 skipped", "memory store: NOT RUN"},
		{"build errors pass through", "# p\nsyntax error\n" + conformance, true, "2 passed, 0 failed, 0 skipped", "syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s, err := read(strings.NewReader(tt.input), &out)
			require.NoError(t, err)
			assert.Equal(t, tt.wantOK, s.report(&out), out.String())
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			assert.Equal(t, tt.wantLine, lines[len(lines)-1], "the closing line")
			assert.Contains(t, out.String(), tt.wantText)
		})
	}
}
