// Command pause is the pod sandbox ("pause") image of the local real node
// (make node): it holds the pod's namespaces by sleeping until SIGINT or
// SIGTERM, and reaps any child re-parented to it, as the upstream pause
// container does (kubernetes/kubernetes build/pause/linux/pause.c: sigdown
// on SIGINT/SIGTERM, sigreap on SIGCHLD, pause() in a loop). A static Go
// binary, so the image needs no registry and no base layer.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", s)
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
