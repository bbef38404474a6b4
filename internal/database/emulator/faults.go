package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Fault makes the emulator fail matching requests, for testing a client's
// handling of throttling (429) and other service errors the emulator never
// produces on its own.
type Fault struct {
	// Status is the HTTP status to answer, 400-599 (429 for throttling).
	Status int
	// Count is how many matching requests fail; 0 means 1.
	Count int
	// RetryAfter is sent as x-ms-retry-after-ms, which azcosmos honours.
	RetryAfter time.Duration
	// Method restricts the fault to one HTTP method ("" = any).
	Method string
	// PathPrefix restricts the fault to paths with this prefix, e.g.
	// "/dbs/mydb/colls/items/docs" ("" = any).
	PathPrefix string
}

// InjectFault queues f; faults apply in the order they were injected.
func (e *Emulator) InjectFault(ctx context.Context, f Fault) error {
	body, err := json.Marshal(map[string]any{
		"status":       f.Status,
		"count":        max(f.Count, 1),
		"retryAfterMs": f.RetryAfter.Milliseconds(),
		"method":       f.Method,
		"path":         f.PathPrefix,
	})
	if err != nil {
		return err
	}
	return e.control(ctx, http.MethodPost, body)
}

// ClearFaults drops every fault not yet consumed.
func (e *Emulator) ClearFaults(ctx context.Context) error {
	return e.control(ctx, http.MethodDelete, nil)
}

func (e *Emulator) control(ctx context.Context, method string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, e.Endpoint+"/_emulator/faults", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.http.Do(req)
	if err != nil {
		return fmt.Errorf("emulator: %s /_emulator/faults: %w", method, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("emulator: %s /_emulator/faults: %s: %s", method, resp.Status, msg)
	}
	return nil
}
