//go:build !linux

package localregion

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
