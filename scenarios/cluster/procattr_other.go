//go:build !linux

package cluster

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }
