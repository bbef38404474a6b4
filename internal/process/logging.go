package process

import (
	"flag"
	"io"
	"log/slog"
	"strings"

	"k8s.io/klog/v2"
)

// klogDebugVerbosity is the klog -v used at debug level: enough for client-go's leader
// election and informer diagnostics (V(4)) without its per-request chatter (V(6+)).
const klogDebugVerbosity = "4"

// NewLogger returns a JSON logger writing to w at level. Attributes whose key names a
// credential are redacted: a defence in depth, code should never log them anyway.
func NewLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		ReplaceAttr: redactSecrets,
	}))
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

func redactSecrets(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindGroup {
		return a
	}
	key := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(a.Key))
	if secretKeys[key] || strings.HasSuffix(key, "password") || strings.HasSuffix(key, "secret") {
		return slog.String(a.Key, redacted)
	}
	return a
}
