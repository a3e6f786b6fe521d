package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// realRuntime is a real API server as the fault actors' runtime
// (faults.ActorRuntime): a plain client per actor whose user agent is the
// actor's name (so the API server's default field manager is too:
// "kubectl", "horizontal-pod-autoscaler", "pod-gc"), the wall clock, and
// timers on goroutines that stop stops and waits for.
type realRuntime struct {
	cfg *rest.Config
	ns  string // the scenario's: webhook-down takes the harness webhook down for it alone

	mu      sync.Mutex
	clients map[string]client.Client
	stopped bool
	done    chan struct{}
	wg      sync.WaitGroup
}

var (
	_ faults.ActorRuntime = (*realRuntime)(nil)
	_ faults.WebhookGate  = (*realRuntime)(nil)
)

func newRealRuntime(cfg *rest.Config, namespace string) *realRuntime {
	return &realRuntime{cfg: cfg, ns: namespace, clients: map[string]client.Client{}, done: make(chan struct{})}
}

// WebhookDown implements faults.WebhookGate: the harness's validating
// webhook (realcluster, in this process) aborts the scenario namespace's
// admission requests until until (realcluster.SetWebhookDown).
func (r *realRuntime) WebhookDown(until time.Time) { realcluster.SetWebhookDown(r.ns, until) }

// Client implements faults.ActorRuntime. A client that cannot be made
// (it never fails for a config a suite already used) is one whose every
// call fails with why.
func (r *realRuntime) Client(name string) client.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clients[name]; c != nil {
		return c
	}
	cfg := rest.CopyConfig(r.cfg)
	cfg.UserAgent = name
	c, err := client.New(cfg, client.Options{Scheme: realcluster.Scheme()})
	if err != nil {
		c = failingClient{err: fmt.Errorf("client %s: %w", name, err)}
	}
	r.clients[name] = c
	return c
}

// Now implements faults.ActorRuntime.
func (r *realRuntime) Now() time.Time { return time.Now() }

// After implements faults.ActorRuntime: fn runs on a goroutine of its
// own d from now, unless stop came first.
func (r *realRuntime) After(d time.Duration, _ string, fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			fn()
		case <-r.done:
		}
	}()
}

// stop cancels every pending timer and waits for the callbacks running
// (cancel their context first: their calls then return at once).
func (r *realRuntime) stop() {
	r.mu.Lock()
	if !r.stopped {
		r.stopped = true
		close(r.done)
	}
	r.mu.Unlock()
	r.wg.Wait()
	realcluster.SetWebhookDown(r.ns, time.Time{})
}

// failingClient fails every call with err.
type failingClient struct {
	client.Client
	err error
}

func (c failingClient) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return c.err
}

func (c failingClient) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return c.err
}

func (c failingClient) Update(context.Context, client.Object, ...client.UpdateOption) error {
	return c.err
}

func (c failingClient) Create(context.Context, client.Object, ...client.CreateOption) error {
	return c.err
}

func (c failingClient) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	return c.err
}

func (c failingClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return c.err
}
