package controlplane

import (
	"fmt"
	"net"
)

// freePorts returns n distinct TCP ports on 127.0.0.1 that were free a
// moment ago. All listeners are held until every port is chosen, so the n
// ports differ; another process may still take one before it is used.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("controlplane: find a free port on 127.0.0.1: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
