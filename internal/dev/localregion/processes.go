package localregion

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a child may take to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// child is one process the region started.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

// supervisor starts the region's processes, reports the first one that dies and stops
// them all, newest first, on the way out.
type supervisor struct {
	logDir string

	mu       sync.Mutex
	children []*child
	stopping bool
	died     chan *child
}

func newSupervisor(logDir string) *supervisor {
	return &supervisor{logDir: logDir, died: make(chan *child, 1)}
}

// start runs a long-lived process whose output goes to <logDir>/<name>.log; stdout, when
// wanted, is handed back instead.
func (s *supervisor) start(name, bin string, wantStdout bool, args ...string) (*child, io.Reader, error) {
	logPath := filepath.Join(s.logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = ProcAttr()
	cmd.Stderr = logFile
	var stdout io.Reader
	if wantStdout {
		if stdout, err = cmd.StdoutPipe(); err != nil {
			logFile.Close()
			return nil, nil, fmt.Errorf("starting %s: %w", name, err)
		}
	} else {
		cmd.Stdout = logFile
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	s.mu.Lock()
	s.children = append(s.children, c)
	s.mu.Unlock()
	go func() {
		c.err = cmd.Wait()
		logFile.Close()
		close(c.done)
		s.mu.Lock()
		stopping := s.stopping
		s.mu.Unlock()
		if !stopping {
			select {
			case s.died <- c:
			default:
			}
		}
	}()
	return c, stdout, nil
}

// runToCompletion runs a short-lived command, its output in <logDir>/<name>.log.
func (s *supervisor) runToCompletion(ctx context.Context, name, bin string, args ...string) error {
	logPath := filepath.Join(s.logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed (%w); its log %s ends with:\n%s", name, err, logPath, tail(logPath))
	}
	return nil
}

// stopAll sends SIGTERM to every running child, newest first, and kills those that do
// not exit within stopGrace.
func (s *supervisor) stopAll() {
	s.mu.Lock()
	s.stopping = true
	children := append([]*child(nil), s.children...)
	s.mu.Unlock()
	for i := len(children) - 1; i >= 0; i-- {
		c := children[i]
		select {
		case <-c.done:
			continue
		default:
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(stopGrace):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
}

// deathError describes a child that exited while the region was running.
func deathError(c *child) error {
	status := "exit status 0"
	if c.err != nil {
		status = c.err.Error()
	}
	return fmt.Errorf("%s exited unexpectedly (%s); its log %s ends with:\n%s", c.name, status, c.logPath, tail(c.logPath))
}

// tail is the last lines of a log, for error messages.
func tail(path string) string {
	const lines = 15
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return "  " + strings.Join(all, "\n  ")
}

// readFirstLine returns the first line a child prints, which is how the fake Cluster
// Service announces its address.
func readFirstLine(r io.Reader, timeout time.Duration) (string, error) {
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		if sc.Scan() {
			lines <- sc.Text()
		} else {
			lines <- ""
		}
		// Keep draining so that the child never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case l := <-lines:
		if l == "" {
			return "", errors.New("the process printed nothing")
		}
		return l, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("no output within %s", timeout)
	}
}

// FreeAddress reserves a loopback port by binding it and letting it go; the child binds
// it again a moment later.
func FreeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
