package controller

import (
	"context"

	"github.com/hcpsched/hcpsched/internal/database"
)

// WithName returns ctx carrying the name of the controller whose reconcile it serves.
// The worker sets it on every reconcile's ctx; a test that calls a ReconcileFunc
// directly sets it too, so that what the reconcile does is credited to its controller
// (the data-flow check reads it from the ctx of each write, the Cosmos request metrics
// label each request with it). It is the store's caller (database.WithCaller): one name
// in the ctx for both.
func WithName(ctx context.Context, name string) context.Context {
	return database.WithCaller(ctx, name)
}

// NameFrom returns the controller name WithName put in ctx; false when ctx does not
// come from a reconcile.
func NameFrom(ctx context.Context) (string, bool) {
	return database.CallerFrom(ctx)
}
