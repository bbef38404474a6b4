package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const (
	// Slowloris protection; probes and scrapes send tiny headers.
	readHeaderTimeout = 5 * time.Second
	idleTimeout       = 2 * time.Minute
)

// server is one bound HTTP listener with its mux.
type server struct {
	name     string
	listener net.Listener
	srv      *http.Server
}

// newServers binds the metrics and health addresses; when both name the same port one
// server serves every path.
func newServers(opts Options, gatherer prometheus.Gatherer, reg prometheus.Registerer, h *health, logger *slog.Logger) (metrics, healthSrv *server, err error) {
	metricsHandler := promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	}))

	addHealth := func(mux *http.ServeMux) {
		mux.HandleFunc("GET /healthz", h.healthz)
		mux.HandleFunc("GET /readyz", h.readyz)
	}

	metricsMux := http.NewServeMux()
	metricsMux.Handle("GET /metrics", metricsHandler)
	if opts.Profiling {
		addProfiling(metricsMux)
	}
	shared := sameAddress(opts.MetricsAddress, opts.HealthAddress)
	if shared {
		addHealth(metricsMux)
	}
	metrics, err = listen("metrics", opts.MetricsAddress, metricsMux, logger)
	if err != nil {
		return nil, nil, err
	}
	if shared {
		return metrics, metrics, nil
	}

	healthMux := http.NewServeMux()
	addHealth(healthMux)
	healthSrv, err = listen("health", opts.HealthAddress, healthMux, logger)
	if err != nil {
		_ = metrics.listener.Close()
		return nil, nil, err
	}
	return metrics, healthSrv, nil
}

// addProfiling serves net/http/pprof's handlers under /debug/pprof/ on mux (the package
// registers them on http.DefaultServeMux only, which the shell does not serve).
func addProfiling(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

func listen(name, address string, handler http.Handler, logger *slog.Logger) (*server, error) {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("%s server: listen on %s: %w", name, address, err)
	}
	return &server{
		name:     name,
		listener: l,
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: readHeaderTimeout,
			IdleTimeout:       idleTimeout,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
	}, nil
}

// serve runs until shutdown and returns only a failure other than shutdown.
func (s *server) serve() error {
	if err := s.srv.Serve(s.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s server on %s: %w", s.name, s.listener.Addr(), err)
	}
	return nil
}

// shutdown lets in-flight requests (a scrape, a probe) finish until ctx ends, then
// closes what is left.
func (s *server) shutdown(ctx context.Context) error {
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
		return fmt.Errorf("%s server: shutdown: %w", s.name, err)
	}
	return nil
}

// sameAddress reports whether a and b name one fixed port. Port 0 asks for a fresh
// ephemeral port each time, so two such addresses get two servers.
func sameAddress(a, b string) bool {
	if a != b {
		return false
	}
	_, port, err := net.SplitHostPort(a)
	return err != nil || port != "0"
}
