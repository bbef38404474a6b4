package localregion

import "syscall"

// ProcAttr puts a child in its own process group, so that Ctrl-C in the terminal reaches
// the region alone and the region stops its children in order, and has the kernel stop
// the child if the region dies without doing so.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
