//go:build bench

package realbench

import "syscall"

// childProcAttr kills the operator subprocess when the driver dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
