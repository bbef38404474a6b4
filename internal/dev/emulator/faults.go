package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"time"
)

// ErrUnknownFault is returned by RemoveFault for an id the emulator does not
// have: never injected, already removed, or a count-based fault used up.
var ErrUnknownFault = errors.New("emulator: no such fault")

// Fault makes the emulator fail or slow down matching requests, for testing a
// client's handling of throttling (429), lost etag races (412), service
// errors and slow responses, none of which the emulator produces on its own.
//
// A fault is count-based (the next Count matching requests) or, with Rate,
// rate-based (each matching request with probability Rate, until removed).
// When it fires, the request is delayed by Latency and then answered with
// Status; with Status 0 it runs normally after the delay.
type Fault struct {
	// Status is the HTTP status to answer, 400-599 (429 for throttling), or
	// 0 for a fault that only adds Latency.
	Status int
	// Count is how many matching requests the fault fires for. Without Rate,
	// 0 means 1; with Rate, 0 means until RemoveFault or ClearFaults.
	Count int
	// Rate, in (0, 1], is the probability that a matching request is hit;
	// 0 makes the fault count-based.
	Rate float64
	// Latency delays every request the fault fires for, before its Status
	// (or before running it when Status is 0). Sent in whole milliseconds,
	// rounded up.
	Latency time.Duration
	// RetryAfter is sent as x-ms-retry-after-ms, which azcosmos honours.
	RetryAfter time.Duration
	// Method restricts the fault to one HTTP method ("" = any).
	Method string
	// PathPrefix restricts the fault to paths with this prefix, e.g.
	// "/dbs/mydb/colls/items/docs" ("" = any).
	PathPrefix string
	// IfMatchOnly restricts the fault to requests carrying If-Match, i.e.
	// conditional writes: with Status 412 that is how a lost etag race looks
	// to a client.
	IfMatchOnly bool
}

// FaultStatus is a fault still in force on the emulator.
type FaultStatus struct {
	// ID is what InjectFault returned.
	ID string
	// Fault is the fault as the emulator applies it: Count is 1 for a
	// count-based fault injected with 0, and 0 for an unlimited rate-based
	// one; Latency and RetryAfter are whole milliseconds.
	Fault
	// Hits is how many requests the fault has fired for so far; a
	// count-based fault has Count-Hits left.
	Hits int
}

func (f Fault) validate() error {
	switch {
	case f.Status == 0 && f.Latency <= 0:
		return errors.New("a fault needs a status, a latency or both")
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return fmt.Errorf("fault status %d is not between 400 and 599", f.Status)
	case math.IsNaN(f.Rate) || f.Rate < 0 || f.Rate > 1:
		return fmt.Errorf("fault rate %v is not in (0, 1]", f.Rate)
	case f.Count < 0:
		return fmt.Errorf("fault count %d is negative", f.Count)
	case f.Latency < 0:
		return fmt.Errorf("fault latency %s is negative", f.Latency)
	case f.RetryAfter < 0:
		return fmt.Errorf("fault retry-after %s is negative", f.RetryAfter)
	}
	return nil
}

// faultSpec is the body of POST /_emulator/faults.
type faultSpec struct {
	Status       int     `json:"status,omitempty"`
	Count        int     `json:"count,omitempty"`
	Rate         float64 `json:"rate,omitempty"`
	LatencyMs    int64   `json:"latencyMs,omitempty"`
	RetryAfterMs int64   `json:"retryAfterMs,omitempty"`
	Method       string  `json:"method,omitempty"`
	Path         string  `json:"path,omitempty"`
	IfMatchOnly  bool    `json:"ifMatchOnly,omitempty"`
}

// faultState is how the emulator describes a fault.
type faultState struct {
	faultSpec
	ID   string `json:"id"`
	Hits int    `json:"hits"`
}

func (s faultState) status() FaultStatus {
	return FaultStatus{
		ID: s.ID,
		Fault: Fault{
			Status:      s.Status,
			Count:       s.Count,
			Rate:        s.Rate,
			Latency:     time.Duration(s.LatencyMs) * time.Millisecond,
			RetryAfter:  time.Duration(s.RetryAfterMs) * time.Millisecond,
			Method:      s.Method,
			PathPrefix:  s.Path,
			IfMatchOnly: s.IfMatchOnly,
		},
		Hits: s.Hits,
	}
}

// ceilMillis rounds d up to whole milliseconds, so a small positive latency
// never turns into none.
func ceilMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// InjectFault adds f and returns its id, for RemoveFault. Faults are tried in
// the order they were injected; the first that matches and fires wins.
func (e *Emulator) InjectFault(ctx context.Context, f Fault) (string, error) {
	if err := f.validate(); err != nil {
		return "", fmt.Errorf("emulator: inject fault: %w", err)
	}
	spec := faultSpec{
		Status:       f.Status,
		Count:        f.Count,
		Rate:         f.Rate,
		LatencyMs:    ceilMillis(f.Latency),
		RetryAfterMs: f.RetryAfter.Milliseconds(),
		Method:       f.Method,
		Path:         f.PathPrefix,
		IfMatchOnly:  f.IfMatchOnly,
	}
	if f.Rate == 0 {
		spec.Count = max(f.Count, 1)
	}
	var created faultState
	if err := e.control(ctx, http.MethodPost, "faults", spec, http.StatusCreated, &created); err != nil {
		return "", fmt.Errorf("emulator: inject fault: %w", err)
	}
	if created.ID == "" {
		return "", errors.New("emulator: inject fault: the emulator answered without a fault id")
	}
	return created.ID, nil
}

// RemoveFault removes one fault. It fails with ErrUnknownFault when the
// emulator has no fault with that id, which includes a count-based fault
// that has been used up.
func (e *Emulator) RemoveFault(ctx context.Context, id string) error {
	err := e.control(ctx, http.MethodDelete, "faults/"+url.PathEscape(id), nil, http.StatusNoContent, nil)
	var statusErr *controlStatusError
	if errors.As(err, &statusErr) && statusErr.status == http.StatusNotFound {
		return fmt.Errorf("emulator: remove fault %q: %w", id, ErrUnknownFault)
	}
	if err != nil {
		return fmt.Errorf("emulator: remove fault %q: %w", id, err)
	}
	return nil
}

// ClearFaults removes every fault.
func (e *Emulator) ClearFaults(ctx context.Context) error {
	if err := e.control(ctx, http.MethodDelete, "faults", nil, http.StatusNoContent, nil); err != nil {
		return fmt.Errorf("emulator: clear faults: %w", err)
	}
	return nil
}

// Faults lists the faults in force, in the order they are tried, with how
// many requests each has hit.
func (e *Emulator) Faults(ctx context.Context) ([]FaultStatus, error) {
	var list struct {
		Faults []faultState `json:"faults"`
	}
	if err := e.control(ctx, http.MethodGet, "faults", nil, http.StatusOK, &list); err != nil {
		return nil, fmt.Errorf("emulator: list faults: %w", err)
	}
	out := make([]FaultStatus, 0, len(list.Faults))
	for _, s := range list.Faults {
		out = append(out, s.status())
	}
	return out, nil
}

type latencyBody struct {
	Ms int64 `json:"ms"`
}

// SetLatency changes the latency the emulator adds to every later request
// (control requests such as this one excepted), replacing Options.Latency;
// 0 removes it. It is sent in whole milliseconds, rounded up.
func (e *Emulator) SetLatency(ctx context.Context, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("emulator: set latency: %s is negative", d)
	}
	if err := e.control(ctx, http.MethodPut, "latency", latencyBody{Ms: ceilMillis(d)}, http.StatusOK, nil); err != nil {
		return fmt.Errorf("emulator: set latency: %w", err)
	}
	return nil
}

// Latency reports the latency the emulator currently adds to every request.
func (e *Emulator) Latency(ctx context.Context) (time.Duration, error) {
	var got latencyBody
	if err := e.control(ctx, http.MethodGet, "latency", nil, http.StatusOK, &got); err != nil {
		return 0, fmt.Errorf("emulator: get latency: %w", err)
	}
	return time.Duration(got.Ms) * time.Millisecond, nil
}

// controlStatusError is a control endpoint answering other than expected.
type controlStatusError struct {
	method, path string
	status       int
	body         []byte
}

func (e *controlStatusError) Error() string {
	return fmt.Sprintf("%s /_emulator/%s: %d %s: %s", e.method, e.path, e.status, http.StatusText(e.status), bytes.TrimSpace(e.body))
}

// control calls /_emulator/<path> with in (if not nil) as its JSON body,
// expects status want, and decodes the answer into out (if not nil).
func (e *Emulator) control(ctx context.Context, method, path string, in any, want int, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding the request to /_emulator/%s: %w", path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.Endpoint+"/_emulator/"+path, body)
	if err != nil {
		return fmt.Errorf("%s /_emulator/%s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s /_emulator/%s: %w", method, path, err)
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s /_emulator/%s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return &controlStatusError{method: method, path: path, status: resp.StatusCode, body: msg}
	}
	if out != nil {
		if err := json.Unmarshal(msg, out); err != nil {
			return fmt.Errorf("%s /_emulator/%s: decoding %q: %w", method, path, msg, err)
		}
	}
	return nil
}
