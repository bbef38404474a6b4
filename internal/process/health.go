package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// ReadinessCheck is one condition /readyz requires. Check should be cheap: probes call
// it every few seconds.
type ReadinessCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// Names of the checks the shell registers itself.
const (
	CheckCachesSynced = "caches-synced"
	CheckShutdown     = "shutdown"
)

// readinessCheckTimeout bounds one /readyz evaluation, so a hung check answers 503
// before the kubelet's probe times out rather than leaving the probe hanging.
const readinessCheckTimeout = 5 * time.Second

var (
	errNotSynced    = errors.New("caches have not synced yet")
	errShuttingDown = errors.New("shutting down")
)

// health holds the state /healthz and /readyz report.
type health struct {
	logger       *slog.Logger
	synced       atomic.Bool
	shuttingDown atomic.Bool
	checks       []ReadinessCheck
}

func newHealth(logger *slog.Logger) *health {
	h := &health{logger: logger}
	h.checks = append(h.checks,
		ReadinessCheck{Name: CheckCachesSynced, Check: func(context.Context) error {
			if !h.synced.Load() {
				return errNotSynced
			}
			return nil
		}},
		// Reporting unready while draining takes the pod out of Service endpoints
		// before its servers stop.
		ReadinessCheck{Name: CheckShutdown, Check: func(context.Context) error {
			if h.shuttingDown.Load() {
				return errShuttingDown
			}
			return nil
		}},
	)
	return h
}

// healthz answers 200 for as long as the process serves HTTP: liveness must not depend
// on dependencies, or an outage of one would restart every pod.
func (h *health) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = fmt.Fprintln(w, "ok")
}

// readyz runs every check and lists each as [+]name ok or [-]name failed. Reasons are
// logged, not served: the endpoint is unauthenticated.
func (h *health) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readinessCheckTimeout)
	defer cancel()

	var body strings.Builder
	var failed []string
	for _, c := range h.checks {
		if err := c.Check(ctx); err != nil {
			failed = append(failed, c.Name)
			_, _ = fmt.Fprintf(&body, "[-]%s failed\n", c.Name)
			h.logger.Debug("readiness check failed", "check", c.Name, "error", err)
			continue
		}
		_, _ = fmt.Fprintf(&body, "[+]%s ok\n", c.Name)
	}

	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if len(failed) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(&body, "readyz check failed: %s\n", strings.Join(failed, ", "))
	} else {
		body.WriteString("readyz check passed\n")
	}
	_, _ = w.Write([]byte(body.String()))
}
