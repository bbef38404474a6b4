package cosmos

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEnvelope(t *testing.T) {
	tests := []struct {
		name, body   string
		id, pk, etag string
	}{
		{"a stored document", `{"id":"7a53","partitionKey":"stamp-1","properties":{"id":"inner","_etag":"x"},"_etag":"\"00000005-0000\"","_ts":1}`, "7a53", "stamp-1", `"00000005-0000"`},
		{"escapes in values", `{"_etag":"\"e\u0031\"","id":"a\/b","partitionKey":"p"}`, "a/b", "p", `"e1"`},
		{"fields missing", `{"properties":{}}`, "", "", ""},
		{"not an object", `[{"id":"a"}]`, "", "", ""},
		{"truncated", `{"id":"a","_etag":`, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, pk, etag := envelope([]byte(tt.body))
			assert.Equal(t, []string{tt.id, tt.pk, tt.etag}, []string{id, pk, etag})
		})
	}
}
