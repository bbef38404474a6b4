package database_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/database"
)

func TestCaller(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		want      string
		wantFound bool
		label     string
	}{
		{name: "named", ctx: database.WithCaller(context.Background(), "PlacementController"), want: "PlacementController", wantFound: true, label: "PlacementController"},
		{name: "the innermost name wins", ctx: database.WithCaller(database.WithCaller(context.Background(), "Outer"), "Inner"), want: "Inner", wantFound: true, label: "Inner"},
		{name: "no caller", ctx: context.Background(), label: database.CallerNone},
		{name: "an empty name is none", ctx: database.WithCaller(context.Background(), ""), label: database.CallerNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := database.CallerFrom(tc.ctx)
			assert.Equal(t, tc.wantFound, ok)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.label, database.CallerLabel(tc.ctx))
		})
	}
}
