package process

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"slices"
	"strings"

	"k8s.io/klog/v2"
)

// klogDebugVerbosity is the klog -v used at debug level: enough for client-go's leader
// election and informer diagnostics (V(4)) without its per-request chatter (V(6+)).
const klogDebugVerbosity = "4"

// NewLogger returns a JSON logger writing to w at level. Attributes whose key names a
// credential are redacted: a defence in depth, code should never log them anyway.
func NewLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(deferredAttrs{inner: slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		ReplaceAttr: redactSecrets,
	})})
}

// deferredAttrs keeps the attributes of Logger.With until a record is written, instead of
// having the JSON handler encode them at once. Every reconcile makes a logger with its
// resource ID and most log nothing, so encoding up front cost about as much as the
// lines that are written (a few per cluster against forty reconciles). The output is the
// JSON handler's own: the attributes come first, in the order they were added.
type deferredAttrs struct {
	inner slog.Handler
	attrs []slog.Attr
}

func (h deferredAttrs) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h deferredAttrs) Handle(ctx context.Context, r slog.Record) error {
	if len(h.attrs) == 0 {
		return h.inner.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(a)
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h deferredAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return deferredAttrs{inner: h.inner, attrs: append(slices.Clip(h.attrs), attrs...)}
}

// WithGroup hands the kept attributes to the inner handler first: they belong outside
// the group.
func (h deferredAttrs) WithGroup(name string) slog.Handler {
	inner := h.inner
	if len(h.attrs) > 0 {
		inner = inner.WithAttrs(h.attrs)
	}
	return deferredAttrs{inner: inner.WithGroup(name)}
}

// ConfigureLogging makes a JSON logger at level the process-wide one: slog's default,
// and klog's backend so client-go (leader election, informers) logs the same JSON
// lines. klog's configuration is global and not synchronised, so call this once, at
// the start of main, before any goroutine logs.
func ConfigureLogging(w io.Writer, level slog.Level) *slog.Logger {
	logger := NewLogger(w, level)
	slog.SetDefault(logger)
	// klog filters V() calls by its own verbosity before the handler sees them.
	verbosity := "0"
	if level <= slog.LevelDebug {
		verbosity = klogDebugVerbosity
	}
	var klogFlags flag.FlagSet
	klog.InitFlags(&klogFlags)
	_ = klogFlags.Set("v", verbosity) // "v" exists and the value is a valid integer
	klog.SetSlogLogger(logger)
	return logger
}

// secretKeys are attribute keys (lower case) whose values are never written.
var secretKeys = map[string]bool{
	"authorization": true,
	"password":      true,
	"secret":        true,
	"token":         true,
	"key":           true,
	"masterkey":     true,
	"accountkey":    true,
	"clientsecret":  true,
	"bearertoken":   true,
}

const redacted = "[REDACTED]"

// separators are dropped from a key before it is compared with secretKeys
// ("client_secret", "Client-Secret").
var separators = strings.NewReplacer("-", "", "_", "")

func redactSecrets(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindGroup {
		return a
	}
	key := strings.ToLower(separators.Replace(a.Key))
	if secretKeys[key] || strings.HasSuffix(key, "password") || strings.HasSuffix(key, "secret") {
		return slog.String(a.Key, redacted)
	}
	return a
}
