package controller

import (
	"context"

	"github.com/hcpsched/hcpsched/internal/process"
)

// Caches are the informers a binary's controllers read: an informers.Factory.
type Caches interface {
	Start(ctx context.Context)
	WaitForCacheSync(ctx context.Context) bool
}

// NewApp is what the process shell runs of a binary: its caches, started on every
// replica, and its controllers, run by RunAll on the leader once the caches synced.
func NewApp(caches Caches, ctrls []*Controller) process.App {
	return process.App{
		StartCaches: func(ctx context.Context) error {
			caches.Start(ctx)
			return nil
		},
		WaitForCacheSync: caches.WaitForCacheSync,
		RunControllers: func(ctx context.Context) error {
			return RunAll(ctx, ctrls)
		},
	}
}
