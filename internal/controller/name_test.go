package controller

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
)

func TestNameFrom(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		want     string
		wantName bool
	}{
		{name: "a reconcile's ctx", ctx: WithName(context.Background(), "Placement"), want: "Placement", wantName: true},
		{name: "the innermost name wins", ctx: WithName(WithName(context.Background(), "Outer"), "Inner"), want: "Inner", wantName: true},
		{name: "a ctx outside any controller", ctx: context.Background()},
		{name: "an empty name is no name", ctx: WithName(context.Background(), "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := NameFrom(tc.ctx)
			assert.Equal(t, tc.wantName, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// The worker puts the controller's name in the ctx of every reconcile it runs.
func TestReconcileContextCarriesTheControllerName(t *testing.T) {
	names := make(chan string, 1)
	h := newHarness(t, Options{Name: "CapacityReporting"}, func(ctx context.Context, _ string) (Result, error) {
		name, ok := NameFrom(ctx)
		if !ok {
			name = "<none>"
		}
		names <- name
		return Result{}, nil
	})
	h.run(t)
	h.ctrl.Enqueue("k")
	select {
	case got := <-names:
		require.Equal(t, "CapacityReporting", got)
	case <-time.After(10 * time.Second):
		t.Fatal("the reconcile never ran")
	}
}

// The name the worker sets is the store's caller, which the Cosmos request metrics label
// each request with.
func TestReconcileContextNamesTheStoreCaller(t *testing.T) {
	callers := make(chan string, 1)
	h := newHarness(t, Options{Name: "PlacementController"}, func(ctx context.Context, _ string) (Result, error) {
		callers <- database.CallerLabel(ctx)
		return Result{}, nil
	})
	h.run(t)
	h.ctrl.Enqueue("k")
	select {
	case got := <-callers:
		require.Equal(t, "PlacementController", got)
	case <-time.After(10 * time.Second):
		t.Fatal("the reconcile never ran")
	}
}
