//go:build e2e

package install

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serviceProxy stands in for the chart's webhook Service on the local
// control plane, where the manager replicas run as processes: a TCP
// listener on 127.0.0.1 that forwards each connection (TLS passes through)
// to the backends in turn, skipping one whose dial is refused, as
// kube-proxy skips an endpoint the endpoints controller removed once its
// pod stopped. With no backend up it closes the connection.
type serviceProxy struct {
	l        net.Listener
	mu       sync.Mutex
	backends []string
	next     int
}

func newServiceProxy(t *testing.T) *serviceProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &serviceProxy{l: l}
	t.Cleanup(func() { _ = l.Close() })
	go p.serve()
	return p
}

func (p *serviceProxy) addr() string { return p.l.Addr().String() }

func (p *serviceProxy) add(backend string) {
	p.mu.Lock()
	p.backends = append(p.backends, backend)
	p.mu.Unlock()
}

func (p *serviceProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return // closed at cleanup
		}
		go p.forward(c)
	}
}

func (p *serviceProxy) forward(c net.Conn) {
	defer c.Close()
	p.mu.Lock()
	order := make([]string, 0, len(p.backends))
	for i := range p.backends {
		order = append(order, p.backends[(p.next+i)%len(p.backends)])
	}
	p.next++
	p.mu.Unlock()
	for _, b := range order {
		up, err := net.DialTimeout("tcp", b, 2*time.Second)
		if err != nil {
			continue
		}
		defer up.Close()
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
		go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
		<-done
		return
	}
}
