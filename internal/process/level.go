package process

import (
	"fmt"
	"log/slog"
	"strings"
)

// levelValue is a flag.Value for the four slog levels. slog.Level's own parser also
// accepts offsets such as "info+2", which only confuse an operator reading the docs.
type levelValue slog.Level

func (l *levelValue) String() string {
	if l == nil {
		return ""
	}
	return strings.ToLower(slog.Level(*l).String())
}

func (l *levelValue) Set(s string) error {
	level, err := ParseLevel(s)
	if err != nil {
		return err
	}
	*l = levelValue(level)
	return nil
}

// ParseLevel parses debug, info, warn (or warning) and error, case-insensitively.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q: want debug, info, warn or error", s)
}
