package controlplane

import "syscall"

// sysProcAttr puts the child in a process group of its own (so Stop can
// signal the group) and has the kernel kill it if this process dies first,
// e.g. when go test's -timeout ends the test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
