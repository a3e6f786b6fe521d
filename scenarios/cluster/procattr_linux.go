package cluster

import "syscall"

// childProcAttr has the kernel kill an operator subprocess if the test
// binary dies first (e.g. go test's -timeout).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
