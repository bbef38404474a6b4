//go:build linux

package emulator

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel SIGKILL the server if the thread that
// started it dies, so a crashed or killed test binary leaves no server behind.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
