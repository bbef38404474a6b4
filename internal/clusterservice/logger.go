package clusterservice

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// slogAdapter lets the SDK log through slog instead of its default Go log/glog output, so
// its retry warnings land in the service's structured logs.
type slogAdapter struct {
	logger *slog.Logger
}

func (a slogAdapter) enabled(level slog.Level) bool {
	return a.logger.Enabled(context.Background(), level)
}

func (a slogAdapter) DebugEnabled() bool { return a.enabled(slog.LevelDebug) }
func (a slogAdapter) InfoEnabled() bool  { return a.enabled(slog.LevelInfo) }
func (a slogAdapter) WarnEnabled() bool  { return a.enabled(slog.LevelWarn) }
func (a slogAdapter) ErrorEnabled() bool { return a.enabled(slog.LevelError) }

func (a slogAdapter) log(ctx context.Context, level slog.Level, format string, args ...any) {
	// The SDK passes a nil context in places; slog wants a real one.
	if ctx == nil {
		ctx = context.Background()
	}
	a.logger.Log(ctx, level, fmt.Sprintf(format, args...), "component", "ocm-sdk")
}

func (a slogAdapter) Debug(ctx context.Context, format string, args ...any) {
	a.log(ctx, slog.LevelDebug, format, args...)
}

func (a slogAdapter) Info(ctx context.Context, format string, args ...any) {
	a.log(ctx, slog.LevelInfo, format, args...)
}

func (a slogAdapter) Warn(ctx context.Context, format string, args ...any) {
	a.log(ctx, slog.LevelWarn, format, args...)
}

func (a slogAdapter) Error(ctx context.Context, format string, args ...any) {
	a.log(ctx, slog.LevelError, format, args...)
}

// Fatal is part of the SDK's logger contract, which requires it to exit.
func (a slogAdapter) Fatal(ctx context.Context, format string, args ...any) {
	a.log(ctx, slog.LevelError, format, args...)
	os.Exit(1)
}
