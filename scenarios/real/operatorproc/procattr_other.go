//go:build !linux

package operatorproc

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }
