package process

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
)

// jsonLines decodes every line of out, failing on one that is not a JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "not a JSON line: %s", sc.Text())
		lines = append(lines, m)
	}
	return lines
}

func TestNewLoggerWritesJSONAtLevel(t *testing.T) {
	var buf bytes.Buffer
	logger := NewLogger(&buf, slog.LevelWarn)
	logger.Info("dropped")
	logger.Warn("kept", "attempt", 2)

	lines := jsonLines(t, buf.String())
	require.Len(t, lines, 1)
	assert.Equal(t, "kept", lines[0]["msg"])
	assert.Equal(t, "WARN", lines[0]["level"])
	assert.EqualValues(t, 2, lines[0]["attempt"])
}

func TestNewLoggerRedactsSecrets(t *testing.T) {
	var buf bytes.Buffer
	logger := NewLogger(&buf, slog.LevelInfo)
	logger.Info("connecting",
		"key", "c2VjcmV0",
		"masterKey", "c2VjcmV0",
		"Authorization", "Bearer abc",
		"client_secret", "s3cr3t",
		"dbPassword", "hunter2",
		slog.Group("cosmos", "accountKey", "c2VjcmV0", "endpoint", "https://example"),
		"partitionKey", "/subscriptions/x",
		"continuationToken", "\"42\"",
	)
	out := buf.String()
	for _, secret := range []string{"c2VjcmV0", "Bearer abc", "s3cr3t", "hunter2"} {
		assert.NotContains(t, out, secret)
	}
	line := jsonLines(t, out)[0]
	assert.Equal(t, redacted, line["key"])
	assert.Equal(t, "https://example", line["cosmos"].(map[string]any)["endpoint"])
	assert.Equal(t, "/subscriptions/x", line["partitionKey"], "keys merely ending in key are kept")
	assert.Equal(t, "\"42\"", line["continuationToken"])
}

// TestMain routed klog into klogOutput through ConfigureLogging.
func TestKlogIsRoutedToSlog(t *testing.T) {
	klog.InfoS("klog structured line", "lease", "ns/hcpsched-test")
	klog.Infof("klog formatted %s", "line")
	klog.ErrorS(errors.New("boom"), "klog error line")
	klog.V(5).Info("klog verbose line")
	klog.Flush()

	byMsg := map[string]map[string]any{}
	for _, line := range jsonLines(t, klogOutput.String()) {
		if msg, ok := line["msg"].(string); ok {
			byMsg[msg] = line
		}
	}
	structured, ok := byMsg["klog structured line"]
	require.True(t, ok, "klog.InfoS reached slog; output:\n%s", klogOutput.String())
	assert.Equal(t, "INFO", structured["level"])
	assert.Equal(t, "ns/hcpsched-test", structured["lease"])
	assert.Contains(t, byMsg, "klog formatted line")
	require.Contains(t, byMsg, "klog error line")
	assert.Equal(t, "ERROR", byMsg["klog error line"]["level"])
	assert.Equal(t, "boom", byMsg["klog error line"]["err"])
	assert.NotContains(t, byMsg, "klog verbose line", "V(5) is below info")
}

// The logger keeps With's attributes until it writes a line, and writes exactly what the
// JSON handler writes when it encodes them at once: same keys, same order, groups nested
// the same way, secrets redacted.
func TestDeferredAttributesWriteWhatTheJSONHandlerWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  func(l *slog.Logger)
	}{
		{"no attributes", func(l *slog.Logger) { l.Info("plain", "n", 1) }},
		{"with, then the record's", func(l *slog.Logger) {
			l.With("controller", "Placement").With("resourceID", "/subscriptions/s").Info("placed", "mc", "stamp-1")
		}},
		{"a secret given to With", func(l *slog.Logger) { l.With("clientSecret", "s3cr3t").Info("connecting", "key", "k") }},
		{"a group after With", func(l *slog.Logger) {
			l.With("controller", "Fleet").WithGroup("report").With("age", 3).Info("stale", "mc", "m1")
		}},
		{"a level that is off", func(l *slog.Logger) { l.With("a", 1).Debug("dropped") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want bytes.Buffer
			tc.log(NewLogger(&got, slog.LevelInfo))
			tc.log(slog.New(slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: redactSecrets})))
			// The lines differ only in their time.
			strip := func(s string) string {
				var out []string
				for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
					if _, rest, ok := strings.Cut(line, `"level"`); ok {
						line = rest
					}
					out = append(out, line)
				}
				return strings.Join(out, "\n")
			}
			assert.Equal(t, strip(want.String()), strip(got.String()))
			assert.NotContains(t, got.String(), "s3cr3t")
		})
	}
}

// The handler meets slog's own conformance tests.
func TestDeferredAttributesConformToSlog(t *testing.T) {
	var buf bytes.Buffer
	h := NewLogger(&buf, slog.LevelDebug).Handler()
	err := slogtest.TestHandler(h, func() []map[string]any {
		return jsonLines(t, buf.String())
	})
	assert.NoError(t, err)
}
