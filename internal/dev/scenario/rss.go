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

// userHZ is the unit of /proc/<pid>/stat's CPU times: USER_HZ, 100 on every Linux ABI.
const userHZ = 100

// processCPUSeconds is the CPU the process has used so far, user plus system, from
// /proc/<pid>/stat (its own threads only, not its children's).
func processCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(procPath(pid, "stat"))
	if err != nil {
		return 0, fmt.Errorf("reading CPU time: %w", err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a /proc/<pid>/stat line. The
// command name (field 2) is in parentheses and may hold spaces and parentheses itself, so
// the fields are counted from its last closing parenthesis.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("parsing /proc stat %q: no command name", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state), so utime (14) and stime (15) are fields[11] and [12].
	if len(fields) < 13 {
		return 0, fmt.Errorf("parsing /proc stat %q: %d fields after the command name", stat, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing /proc stat CPU time %q: %w", f, err)
		}
		ticks += n
	}
	return float64(ticks) / userHZ, nil
}
