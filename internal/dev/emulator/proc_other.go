//go:build !linux

package emulator

import "os/exec"

// setParentDeathSignal has no equivalent outside Linux; the server still
// exits when its stdin pipe reaches EOF, which happens when this process dies.
func setParentDeathSignal(cmd *exec.Cmd) {}
