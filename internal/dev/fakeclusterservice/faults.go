package fakeclusterservice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Fault describes a failure to inject in front of the CS API. A matching request is first
// delayed by Latency and then, when Status is set, answered with Status instead of reaching
// the API; with Status zero the request proceeds normally after the delay.
type Fault struct {
	// Method restricts the fault to one HTTP method; empty matches any.
	Method string
	// PathPrefix restricts the fault to request paths with this prefix; empty matches any.
	PathPrefix string
	// Status is the HTTP status to answer with; zero means latency only.
	Status int
	// Body replaces the response body. Nil means CS's JSON error shape for Status; a
	// pointer to "" sends an empty body, which the SDK reports as success.
	Body *string
	// ContentType of a custom Body; empty means application/json.
	ContentType string
	// Latency is waited before answering, or before passing the request on.
	Latency time.Duration
	// Count limits the fault to this many affected requests; zero means no limit.
	Count int
	// Rate is the probability that a matching request is affected; zero means always.
	Rate float64
}

// FaultInfo is an injected fault with its identifier and how much of it is left.
type FaultInfo struct {
	ID string
	Fault
	// Hits is how many requests the fault has affected so far.
	Hits int
}

type fault struct {
	id string
	Fault
	hits int
}

func (f *Fault) validate() error {
	if f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return fmt.Errorf("fault status %d is not an HTTP status", f.Status)
	}
	if f.Status == 0 && f.Latency <= 0 {
		return errors.New("fault needs a status, a latency or both")
	}
	if f.Latency < 0 {
		return errors.New("fault latency is negative")
	}
	if f.Count < 0 {
		return errors.New("fault count is negative")
	}
	if f.Rate < 0 || f.Rate > 1 {
		return fmt.Errorf("fault rate %v is not between 0 and 1", f.Rate)
	}
	return nil
}

func (f *fault) matches(r *http.Request) bool {
	if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
		return false
	}
	return strings.HasPrefix(r.URL.Path, f.PathPrefix)
}

// InjectFault adds a fault and returns its identifier. Faults are checked in the order they
// were added and the first that matches and fires wins.
func (s *Server) InjectFault(f Fault) (string, error) {
	if err := f.validate(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultSeq++
	id := fmt.Sprintf("f%d", s.faultSeq)
	s.faults = append(s.faults, &fault{id: id, Fault: f})
	return id, nil
}

// RemoveFault removes one fault and reports whether it existed.
func (s *Server) RemoveFault(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.id == id {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			return true
		}
	}
	return false
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Faults lists the faults still in force.
func (s *Server) Faults() []FaultInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]FaultInfo, 0, len(s.faults))
	for _, f := range s.faults {
		out = append(out, FaultInfo{ID: f.id, Fault: f.Fault, Hits: f.hits})
	}
	return out
}

// pickFault decides, under the lock, whether a request is affected, and uses up one count
// of the fault that fires. Exhausted faults are dropped.
func (s *Server) pickFault(r *http.Request) *fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if !f.matches(r) {
			continue
		}
		if f.Rate > 0 && s.rng.Float64() >= f.Rate {
			continue
		}
		f.hits++
		if f.Count > 0 && f.hits >= f.Count {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		picked := *f
		return &picked
	}
	return nil
}

// sleepContext waits d or until ctx ends, and reports whether the full wait happened.
func sleepContext(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Server) writeFault(w http.ResponseWriter, f *fault) {
	if f.Body == nil {
		writeError(w, s.logger, f.Status, fmt.Sprintf("injected fault %s", f.id))
		return
	}
	contentType := f.ContentType
	if contentType == "" {
		contentType = "application/json"
	}
	writeRaw(w, f.Status, contentType, []byte(*f.Body))
}

// faultJSON is the admin endpoint's representation of a Fault.
type faultJSON struct {
	ID          string  `json:"id,omitempty"`
	Method      string  `json:"method,omitempty"`
	PathPrefix  string  `json:"path_prefix,omitempty"`
	Status      int     `json:"status,omitempty"`
	Body        *string `json:"body,omitempty"`
	ContentType string  `json:"content_type,omitempty"`
	Latency     string  `json:"latency,omitempty"`
	Count       int     `json:"count,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Hits        int     `json:"hits,omitempty"`
}

func (j faultJSON) fault() (Fault, error) {
	f := Fault{
		Method:      j.Method,
		PathPrefix:  j.PathPrefix,
		Status:      j.Status,
		Body:        j.Body,
		ContentType: j.ContentType,
		Count:       j.Count,
		Rate:        j.Rate,
	}
	if j.Latency != "" {
		d, err := time.ParseDuration(j.Latency)
		if err != nil {
			return Fault{}, fmt.Errorf("fault latency: %w", err)
		}
		f.Latency = d
	}
	return f, nil
}

func faultToJSON(info FaultInfo) faultJSON {
	j := faultJSON{
		ID:          info.ID,
		Method:      info.Method,
		PathPrefix:  info.PathPrefix,
		Status:      info.Status,
		Body:        info.Body,
		ContentType: info.ContentType,
		Count:       info.Count,
		Rate:        info.Rate,
		Hits:        info.Hits,
	}
	if info.Latency > 0 {
		j.Latency = info.Latency.String()
	}
	return j
}
