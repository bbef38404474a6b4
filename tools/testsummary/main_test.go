package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummary(t *testing.T) {
	const memoryConformance = `{"Action":"pass","Package":"github.com/hcpsched/hcpsched/internal/database/memory","Test":"TestConformance/CRUD"}
`
	const conformance = memoryConformance + `{"Action":"pass","Package":"github.com/hcpsched/hcpsched/internal/database/cosmos","Test":"TestConformance/emulator/CRUD"}
`
	both := []string{"memory store", "Cosmos store on the emulator"}
	memory := []string{"memory store"}
	tests := []struct {
		name     string
		input    string
		stores   []string
		wantOK   bool
		wantLine string
		wantText string
	}{
		{"all pass", conformance + `{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}` + "\n", both, true, "2 passed, 0 failed, 0 skipped", "ok  \tp"},
		{"a skip fails the run", conformance + `{"Action":"skip","Package":"p","Test":"TestY"}` + "\n", both, false, "2 passed, 0 failed, 1 skipped", "skipped (not allowed): p TestY"},
		{"a failure shows its output", conformance + `{"Action":"output","Package":"p","Test":"TestX","Output":"boom\n"}
{"Action":"fail","Package":"p","Test":"TestX"}
`, both, false, "2 passed, 1 failed, 0 skipped", "--- FAIL: p TestX\nboom"},
		{"conformance must run on both stores", `{"Action":"pass","Package":"p","Test":"TestZ"}` + "\n", both, false, "1 passed, 2 failed, 0 skipped", "memory store: NOT RUN"},
		{"the Cosmos store's suite is missing", memoryConformance, both, false, "1 passed, 1 failed, 0 skipped", "Cosmos store on the emulator: NOT RUN"},
		{"a memory-only run asks for the memory store's suite alone", memoryConformance, memory, true, "1 passed, 0 failed, 0 skipped", "memory store: 1 passed"},
		{"a memory-only run still needs it", `{"Action":"pass","Package":"p","Test":"TestZ"}` + "\n", memory, false, "1 passed, 1 failed, 0 skipped", "memory store: NOT RUN"},
		{"a memory-only run still fails on a skip", memoryConformance + `{"Action":"skip","Package":"p","Test":"TestY"}` + "\n", memory, false, "1 passed, 0 failed, 1 skipped", "skipped (not allowed): p TestY"},
		{"build errors pass through", "# p\nsyntax error\n" + conformance, both, true, "2 passed, 0 failed, 0 skipped", "syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s, err := read(strings.NewReader(tt.input), &out)
			require.NoError(t, err)
			assert.Equal(t, tt.wantOK, s.report(&out, tt.stores), out.String())
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			assert.Equal(t, tt.wantLine, lines[len(lines)-1], "the closing line")
			assert.Contains(t, out.String(), tt.wantText)
		})
	}
}

func TestRequiredStores(t *testing.T) {
	for _, tc := range []struct {
		flag    string
		want    []string
		wantErr string
	}{
		{flag: "memory,cosmos", want: []string{"memory store", "Cosmos store on the emulator"}},
		{flag: "memory", want: []string{"memory store"}},
		{flag: "memory, cosmos", want: []string{"memory store", "Cosmos store on the emulator"}},
		{flag: "emulator", wantErr: `unknown store "emulator"`},
		{flag: "", wantErr: `unknown store ""`},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			got, err := requiredStores(tc.flag)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
