package process

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGCSettings(t *testing.T) {
	const v2, v1 = "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	tests := []struct {
		name        string
		env         map[string]string
		files       map[string]string
		wantPercent int
		wantLimit   int64
	}{
		{name: "no container limit", wantPercent: DefaultGCPercent},
		{name: "cgroup v2 limit", files: map[string]string{v2: "536870912\n"}, wantPercent: DefaultGCPercent, wantLimit: 536870912 / 100 * 90},
		{name: "cgroup v2 without a limit", files: map[string]string{v2: "max\n", v1: "1000"}, wantPercent: DefaultGCPercent},
		{name: "cgroup v1 limit", files: map[string]string{v1: "1073741824\n"}, wantPercent: DefaultGCPercent, wantLimit: 1073741824 / 100 * 90},
		{name: "cgroup v1 without a limit", files: map[string]string{v1: "9223372036854771712\n"}, wantPercent: DefaultGCPercent},
		{name: "unreadable limit", files: map[string]string{v2: "lots"}, wantPercent: DefaultGCPercent},
		{name: "GOGC set", env: map[string]string{"GOGC": "100"}, files: map[string]string{v2: "1000000"}, wantLimit: 900000},
		{name: "GOGC=off set", env: map[string]string{"GOGC": "off"}},
		{name: "GOMEMLIMIT set", env: map[string]string{"GOMEMLIMIT": "400MiB"}, files: map[string]string{v2: "1000000"}, wantPercent: DefaultGCPercent},
		{name: "both set", env: map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, files: map[string]string{v2: "1000000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			readFile := func(path string) ([]byte, error) {
				if v, ok := tt.files[path]; ok {
					return []byte(v), nil
				}
				return nil, fs.ErrNotExist
			}
			percent, limit := gcSettings(lookup, readFile)
			assert.Equal(t, tt.wantPercent, percent, "GC percent")
			assert.Equal(t, tt.wantLimit, limit, "memory limit")
		})
	}
}
