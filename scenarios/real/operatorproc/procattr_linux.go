package operatorproc

import "syscall"

// childProcAttr has the kernel kill the operator process if the driver
// dies first.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
