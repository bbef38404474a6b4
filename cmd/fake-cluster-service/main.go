// Command fake-cluster-service serves the in-memory fake Cluster Service on a loopback
// address, for the local stack and for tests in other languages or processes.
//
// It prints one JSON line, {"url": "http://127.0.0.1:PORT"}, on stdout once it is listening,
// so that a parent can start it with --listen 127.0.0.1:0 and read the port it got. It stops
// on SIGINT or SIGTERM and, with --exit-on-stdin-eof, when its standard input closes, which
// ties its life to a parent that dies without signalling it. The admin API that tests drive
// is under /_fake/ (see the fake package).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// shutdownGrace bounds how long in-flight requests may take once a stop is asked for.
const shutdownGrace = 5 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "fake-cluster-service:", err)
		os.Exit(1)
	}
}

type options struct {
	listen         string
	allowRemote    bool
	exitOnStdinEOF bool
	logLevel       slog.Level
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	// A private flag set: the SDK's errors package pulls in glog, which registers its flags
	// on the global set.
	fs := flag.NewFlagSet("fake-cluster-service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8000", "address to listen on; port 0 picks a free port")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "permit a non-loopback --listen address")
	fs.BoolVar(&o.exitOnStdinEOF, "exit-on-stdin-eof", false, "exit when standard input reaches EOF")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log level: DEBUG, INFO, WARN or ERROR")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if !o.allowRemote {
		if err := requireLoopback(o.listen); err != nil {
			return o, err
		}
	}
	return o, nil
}

// requireLoopback refuses addresses reachable from other machines: the fake has no
// authentication and its admin API rewrites state.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %q is not a loopback address; pass --allow-remote to permit it", addr)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: opts.logLevel}))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.exitOnStdinEOF {
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			logger.Info("standard input closed, stopping")
			cancel()
		}()
	}

	ln, err := net.Listen("tcp", opts.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.listen, err)
	}
	url := "http://" + ln.Addr().String()
	srv := &http.Server{
		Handler:           fakeclusterservice.New(fakeclusterservice.WithLogger(logger)),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	line, err := json.Marshal(map[string]string{"url": url})
	if err != nil {
		return fmt.Errorf("encode url line: %w", err)
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		_ = srv.Close()
		return fmt.Errorf("print url: %w", err)
	}
	logger.Info("fake cluster service listening", "url", url)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancelShutdown()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("fake cluster service stopped")
	return nil
}
