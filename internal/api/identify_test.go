package api_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/api"
)

func TestIdentify(t *testing.T) {
	tests := []struct {
		name, data            string
		id, resourceID, rtype string
	}{
		{"envelope around properties", `{"id":"i","properties":{"id":"no","resourceType":"no"},"resourceID":"/a/b","resourceType":"T"}`, "i", "/a/b", "T"},
		{"truncated after the envelope", `{"id":"i","resourceType":"T","properties":{"spec":{"x":"unterminat`, "i", "", "T"},
		{"escapes", `{"resourceID":"\/subscriptions\/s","id":"\u0069"}`, "i", "/subscriptions/s", ""},
		{"not strings", `{"id":1,"resourceType":null}`, "", "", ""},
		{"not an object", `["id","i"]`, "", "", ""},
		{"empty", ``, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, rid, rtype := api.Identify([]byte(tt.data))
			assert.Equal(t, []string{tt.id, tt.resourceID, tt.rtype}, []string{id, rid, rtype})
		})
	}
}

// On any valid JSON object, Identify reads the top-level string members an ordinary
// decode finds.
func FuzzIdentify(f *testing.F) {
	f.Add([]byte(`{"id":"i","resourceID":"/a","resourceType":"t","properties":{"id":"x"}}`))
	f.Add([]byte(`{"id":"a","id":"b"}`))
	f.Add([]byte(`{"resourceType":"\u00e9\n"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, rid, rtype := api.Identify(data)
		var m map[string]any
		if json.Unmarshal(data, &m) != nil {
			return
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		assert.Equal(t, []string{str("id"), str("resourceID"), str("resourceType")}, []string{id, rid, rtype})
	})
}
