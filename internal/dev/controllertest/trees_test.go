package controllertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/database"
)

func TestApplyEdits(t *testing.T) {
	t.Parallel()
	const doc = `{"id":"x","properties":{"status":{"a":1,"b":{"c":"d"}}}}`
	tests := []struct {
		name  string
		edits []Edit
		want  string
	}{
		{name: "no edits: the same bytes", want: doc},
		{name: "a leaf is set", edits: []Edit{Set("properties.status.a", 2)}, want: `{"id":"x","properties":{"status":{"a":2,"b":{"c":"d"}}}}`},
		{name: "objects on the way are created", edits: []Edit{Set("properties.spec.x.y", true)}, want: `{"id":"x","properties":{"spec":{"x":{"y":true}},"status":{"a":1,"b":{"c":"d"}}}}`},
		{name: "a value is unset", edits: []Edit{Unset("properties.status.b")}, want: `{"id":"x","properties":{"status":{"a":1}}}`},
		{name: "a bracketed segment holds dots", edits: []Edit{Set("properties.status.[aro.openshift.io/swift-nic]", "3")}, want: `{"id":"x","properties":{"status":{"a":1,"aro.openshift.io/swift-nic":"3","b":{"c":"d"}}}}`},
		{name: "edits apply in order", edits: []Edit{Set("id", "y"), Unset("id")}, want: `{"properties":{"status":{"a":1,"b":{"c":"d"}}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, Tree(t, []byte(tc.want)), Tree(t, ApplyEdits(t, []byte(doc), tc.edits...)))
		})
	}
}

func TestExpectReplaced(t *testing.T) {
	t.Parallel()
	before := database.Item{ETag: `"2"`, Body: []byte(`{"id":"x","_etag":"\"2\"","_ts":5,"properties":{"cosmosMetadata":{"instanceVersion":4},"spec":{"a":1}}}`)}
	want := Tree(t, []byte(`{"id":"x","properties":{"cosmosMetadata":{"instanceVersion":5,"etag":"\"2\""},"spec":{"a":2}}}`))
	assert.Equal(t, want, ExpectReplaced(t, before, Set("properties.spec.a", 2)))
}

func TestConditionTree(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 9, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	assert.Equal(t, Normalize(t, map[string]any{
		"type": "Ready", "status": "True", "reason": "AllRegistered", "message": "m", "lastTransitionTime": "2026-09-01T10:00:00Z",
	}), Normalize(t, ConditionTree("Ready", "True", "AllRegistered", "m", at)))
}
