//go:build unix && !linux

package controlplane

import "syscall"

// sysProcAttr puts the child in a process group of its own, so Stop can
// signal the group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
