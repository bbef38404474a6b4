package scenario

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procPath is /proc/<pid>/<file>, or /proc/self/<file> for pid 0.
func procPath(pid int, file string) string {
	if pid == 0 {
		return "/proc/self/" + file
	}
	return fmt.Sprintf("/proc/%d/%s", pid, file)
}

// peakRSS is the process's resident set high-water mark (VmHWM) in bytes.
func peakRSS(pid int) (int64, error) {
	f, err := os.Open(procPath(pid, "status"))
	if err != nil {
		return 0, fmt.Errorf("reading peak RSS: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing VmHWM %q: %w", rest, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmHWM in %s", procPath(pid, "status"))
}

// resetPeakRSS sets the high-water mark back to the current RSS (Linux's clear_refs
// value 5), so that a run's peak is not an earlier run's.
func resetPeakRSS(pid int) error {
	if err := os.WriteFile(procPath(pid, "clear_refs"), []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting peak RSS: %w", err)
	}
	return nil
}
