package manager

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

type fakeServer struct {
	webhook.Server
	started chan struct{}
}

func (f *fakeServer) Start(context.Context) error { close(f.started); return nil }

// The webhook server starts only once the rotator says the certificate is
// mounted and injected; a cancelled manager stops the wait.
func TestReadyServerWaitsForCertificates(t *testing.T) {
	ready := make(chan struct{})
	inner := &fakeServer{started: make(chan struct{})}
	s := readyServer{Server: inner, ready: ready}
	done := make(chan error, 1)
	go func() { done <- s.Start(context.Background()) }()
	select {
	case <-inner.started:
		t.Fatal("the server started before the certificate was ready")
	case <-time.After(50 * time.Millisecond):
	}
	close(ready)
	<-inner.started
	assert.NoError(t, <-done)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := &fakeServer{started: make(chan struct{})}
	assert.NoError(t, readyServer{Server: other, ready: make(chan struct{})}.Start(ctx))
	select {
	case <-other.started:
		t.Fatal("started after cancel")
	default:
	}
}

func TestParseSecretRef(t *testing.T) {
	ref, err := ParseSecretRef("ns/name")
	assert.NoError(t, err)
	assert.Equal(t, "ns", ref.Namespace)
	for _, bad := range []string{"", "name", "/name", "ns/", "a/b/c"} {
		_, err := ParseSecretRef(bad)
		assert.Error(t, err, bad)
	}
}

// HTTP/2 is off unless asked for: the webhook server's TLS config offers
// only http/1.1.
func TestWebhookServerDisablesHTTP2(t *testing.T) {
	s := webhookServer(WebhookOptions{}, nil).(*webhook.DefaultServer)
	assert.Len(t, s.Options.TLSOpts, 1)
	c := &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
	s.Options.TLSOpts[0](c)
	assert.Equal(t, []string{"http/1.1"}, c.NextProtos)
	s = webhookServer(WebhookOptions{EnableHTTP2: true}, nil).(*webhook.DefaultServer)
	assert.Empty(t, s.Options.TLSOpts)
}
