//go:build !linux

package localregion

import "syscall"

// ProcAttr is nothing special where process groups and parent-death signals are not Linux's.
func ProcAttr() *syscall.SysProcAttr { return nil }
