package localregion

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// binaries are built into _output/bin, in this order: the backend first, since it
// compiles most of the dependencies the others share.
var binaries = []string{"./backend", "./fleet", "./cmd/fake-cluster-service", "./cmd/mc-simulator"}

// operatorCommand is the SRE's command (issue 18). It is built when the checkout has it,
// so that the region runs in a checkout from before it.
const operatorCommand = "./hcpsched"

// readyTimeout is how long a long-lived process may take to answer /readyz with 200
// (its caches synced) before the region gives up on it.
const readyTimeout = 2 * time.Minute

// toBuild is what the region builds in the checkout at root.
func toBuild(root string) []string {
	out := append([]string(nil), binaries...)
	if info, err := os.Stat(filepath.Join(root, operatorCommand)); err == nil && info.IsDir() {
		out = append(out, operatorCommand)
	}
	return out
}

// stepLog prints a line when a step of the start-up begins and another when it ends,
// with how long it took: a cold first build takes minutes and must not look like a
// hang. Steps may run in parallel (the registrations do).
type stepLog struct {
	mu  sync.Mutex
	out io.Writer
}

func (l *stepLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, format, args...)
}

// step runs f between "<doing> ..." and "<done> in <duration>", followed by ": <detail>"
// when f returns one.
func (l *stepLog) step(doing, done string, f func() (detail string, err error)) error {
	l.printf("%s ...\n", doing)
	start := time.Now()
	detail, err := f()
	took := roundDuration(time.Since(start))
	if err != nil {
		l.printf("%s failed after %s\n", doing, took)
		return err
	}
	if detail != "" {
		detail = ": " + detail
	}
	l.printf("%s in %s%s\n", done, took, detail)
	return nil
}

// roundDuration keeps a duration readable: tenths of a second, hundredths below one.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// build builds one command into binDir.
func build(ctx context.Context, log *stepLog, root, binDir string, flags []string, pkg string) error {
	name := filepath.Base(pkg)
	return log.step("building "+name, "built "+name, func() (string, error) {
		args := append(append([]string{"build"}, flags...), "-o", binDir+string(filepath.Separator), pkg)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
		return "", nil
	})
}

// service is a long-lived process of the region and where it answers /readyz.
type service struct {
	// name is the process's log name, display what the lines call it.
	name, display string
	addr          string
	started       time.Time
}

// waitReady waits until every service answers /readyz with 200, printing each as it
// does; a service that dies or stays unready for readyTimeout fails the start.
func waitReady(ctx context.Context, log *stepLog, sup *supervisor, services []service) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	results := make(chan error, len(services))
	client := &http.Client{Timeout: 5 * time.Second}
	for _, s := range services {
		go func() { results <- pollReady(ctx, log, client, s, filepath.Join(sup.logDir, s.name+".log")) }()
	}
	for range services {
		select {
		case err := <-results:
			if err != nil {
				return err
			}
		case c := <-sup.died:
			return deathError(c)
		}
	}
	return nil
}

func pollReady(ctx context.Context, log *stepLog, client *http.Client, s service, logPath string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				log.printf("%s ready in %s (/readyz: caches synced)\n", s.display, roundDuration(time.Since(s.started)))
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else if ctx.Err() == nil {
			// An answer cut short by the deadline says less than the one before it.
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (%w; last /readyz: %s); its log %s ends with:\n%s",
				s.display, roundDuration(time.Since(s.started)), ctx.Err(), last, logPath, tail(logPath))
		case <-tick.C:
		}
	}
}

// operatorCommandLine is the command an engineer pastes, from the working directory, to
// run the operator command against this region's Cosmos database.
func operatorCommandLine(bin, endpoint, key, database string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, bin); err == nil && !strings.HasPrefix(rel, "..") {
			bin = rel
		}
	}
	return fmt.Sprintf("%s --cosmos-endpoint=%s --cosmos-key=%s --cosmos-database=%s capacity",
		shellQuote(bin), shellQuote(endpoint), shellQuote(key), shellQuote(database))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+=:._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
