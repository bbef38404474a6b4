package process

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

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
