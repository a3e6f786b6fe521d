//go:build bench && !linux

package realbench

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }
