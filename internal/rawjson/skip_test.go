package rawjson_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/rawjson"
)

// referenceSkipValue is SkipValue as it was before it learned to jump: one byte at a
// time. The faster one must end every value, and every truncated one, at the same place.
func referenceSkipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(data)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = referenceSkipValue(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	default:
		j := i
		for j < len(data) && !strings.ContainsRune(",}] \t\r\n", rune(data[j])) {
			j++
		}
		return j
	}
}

var skipValueSeeds = []string{
	`""`, `"a"`, `"\""`, `"\\"`, `"\\\""`, `"\\\\"`, `"a\"b"`, `"\`, `"\\`, `"abc`, `"\u00e9"`,
	`{}`, `[]`, `{"a":"}"}`, `["]"]`, `{"a":{"b":[1,"\"}"]}}`, `{"a":`, `[1,2`, `{"a":"\\"}x`,
	`1`, `-1.5e3,`, `true}`, `null]`, "12 ", "1\t", `tru`, `1x,`, "\xff\"", `{"\\\\\"":1}`,
}

func TestSkipValueAgreesWithReference(t *testing.T) {
	check := func(data []byte) {
		t.Helper()
		for i := range data {
			if got, want := rawjson.SkipValue(data, i), referenceSkipValue(data, i); got != want {
				assert.Equal(t, want, got, "%.80q at %d", data, i)
				return
			}
		}
	}
	for _, s := range skipValueSeeds {
		check([]byte(s))
	}
	for _, f := range arohcp.All() {
		check(f.Data)
		check(f.Data[:len(f.Data)/2])
	}
}

// FuzzSkipValue: SkipValue and the byte-at-a-time reference agree from every offset of
// any input, valid JSON or not.
func FuzzSkipValue(f *testing.F) {
	for _, s := range skipValueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := range data {
			assert.Equal(t, referenceSkipValue(data, i), rawjson.SkipValue(data, i), "%q at %d", data, i)
		}
	})
}
