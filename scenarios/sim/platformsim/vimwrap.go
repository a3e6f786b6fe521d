package platformsim

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// Call is one call the operator made to the StarlingX system, at virtual
// time At. Op is the client method's verb: get-system, list-releases,
// list-kube-versions, list-kube-upgrades, list-deploys, list-hosts,
// current-strategy, get-strategy, create, apply, abort, delete, swact.
type Call struct {
	At     time.Time
	Op     string
	Type   vim.StrategyType // create/apply/abort/delete/get-strategy
	Target string           // create: release id or Kubernetes version; swact: host
	UUID   string           // apply/abort/delete; create: the new strategy's
	Err    error
	// Injected is true when the wrapper answered (an injected fault) and
	// the system never saw the call.
	Injected bool
}

// Wrapper is the vim.Client the operator gets in a run: it forwards to the
// system (the model directly, or fakevim over HTTP), logs every call, can
// answer 503 for a window of virtual time, and calls hooks after each call
// (crash injection). Before each call it publishes the virtual time to
// the HTTP backend's clock.
type Wrapper struct {
	next    vim.Client
	now     func() time.Time
	publish func(time.Time)

	mu          sync.Mutex
	calls       []Call
	unavailable []window
	failNext    map[string]int
	after       []func(Call)
}

type window struct {
	from, to time.Time
	timeout  bool // answer like a request that timed out instead of 503
}

var _ vim.Client = (*Wrapper)(nil)

// Calls returns the call log.
func (w *Wrapper) Calls() []Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Call(nil), w.calls...)
}

// UnavailableFor makes every call answer 503 for d of virtual time from now.
func (w *Wrapper) UnavailableFor(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	w.unavailable = append(w.unavailable, window{from: now, to: now.Add(d)})
}

// TimeoutFor makes every call fail as timed out (no answer within the
// client's request timeout) for d of virtual time from now.
func (w *Wrapper) TimeoutFor(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	w.unavailable = append(w.unavailable, window{from: now, to: now.Add(d), timeout: true})
}

// FailNext makes the next n calls of op (e.g. "create") answer 503.
func (w *Wrapper) FailNext(op string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failNext == nil {
		w.failNext = map[string]int{}
	}
	w.failNext[op] += n
}

// AfterCall registers fn, called after every call (outside the lock).
func (w *Wrapper) AfterCall(fn func(Call)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.after = append(w.after, fn)
}

// do runs one call: 503 inside a window, else the backend; logs it; hooks.
func (w *Wrapper) do(c Call, fn func() error) error {
	return w.doc(c, func(*Call) error { return fn() })
}

// doc is do with access to the call record (creates log the new uuid).
func (w *Wrapper) doc(c Call, fn func(*Call) error) error {
	c.At = w.now()
	if w.publish != nil {
		w.publish(c.At)
	}
	w.mu.Lock()
	down, timeout := false, false
	for _, win := range w.unavailable {
		if !c.At.Before(win.from) && c.At.Before(win.to) {
			down, timeout = true, win.timeout
		}
	}
	if w.failNext[c.Op] > 0 {
		w.failNext[c.Op]--
		down = true
	}
	w.mu.Unlock()
	switch {
	case down && timeout:
		c.Injected = true
		c.Err = &vim.Error{Service: "vim", Op: c.Op, Err: fmt.Errorf("injected: %w", context.DeadlineExceeded)}
	case down:
		c.Injected = true
		c.Err = &vim.Error{Service: "vim", Op: c.Op, Method: http.MethodGet, StatusCode: http.StatusServiceUnavailable, FaultString: "injected outage"}
	default:
		c.Err = fn(&c)
	}
	w.mu.Lock()
	w.calls = append(w.calls, c)
	hooks := append([]func(Call){}, w.after...)
	w.mu.Unlock()
	for _, h := range hooks {
		h(c)
	}
	return c.Err
}

// GetStrategy implements vim.Client.
func (w *Wrapper) GetStrategy(ctx context.Context, t vim.StrategyType) (s *vim.Strategy, err error) {
	err = w.do(Call{Op: "get-strategy", Type: t}, func() error { s, err = w.next.GetStrategy(ctx, t); return err })
	return s, err
}

// GetStrategyByUUID implements vim.Client.
func (w *Wrapper) GetStrategyByUUID(ctx context.Context, t vim.StrategyType, uuid string) (s *vim.Strategy, err error) {
	err = w.do(Call{Op: "get-strategy", Type: t, UUID: uuid}, func() error { s, err = w.next.GetStrategyByUUID(ctx, t, uuid); return err })
	return s, err
}

// CreateSwUpgradeStrategy implements vim.Client.
func (w *Wrapper) CreateSwUpgradeStrategy(ctx context.Context, req vim.SwUpgradeRequest) (s *vim.Strategy, err error) {
	target := ""
	if len(req.Releases) > 0 {
		target = req.Releases[0]
	}
	if req.Rollback {
		target = "rollback"
	}
	err = w.doc(Call{Op: "create", Type: vim.StrategySwUpgrade, Target: target}, func(c *Call) error {
		s, err = w.next.CreateSwUpgradeStrategy(ctx, req)
		if s != nil {
			c.UUID = s.UUID
		}
		return err
	})
	return s, err
}

// CreateKubeUpgradeStrategy implements vim.Client.
func (w *Wrapper) CreateKubeUpgradeStrategy(ctx context.Context, req vim.KubeUpgradeRequest) (s *vim.Strategy, err error) {
	err = w.doc(Call{Op: "create", Type: vim.StrategyKubeUpgrade, Target: req.ToVersion}, func(c *Call) error {
		s, err = w.next.CreateKubeUpgradeStrategy(ctx, req)
		if s != nil {
			c.UUID = s.UUID
		}
		return err
	})
	return s, err
}

// ApplyStrategy implements vim.Client.
func (w *Wrapper) ApplyStrategy(ctx context.Context, t vim.StrategyType, uuid string, stage *int) (s *vim.Strategy, err error) {
	err = w.do(Call{Op: "apply", Type: t, UUID: uuid}, func() error { s, err = w.next.ApplyStrategy(ctx, t, uuid, stage); return err })
	return s, err
}

// AbortStrategy implements vim.Client.
func (w *Wrapper) AbortStrategy(ctx context.Context, t vim.StrategyType, uuid string, stage *int) (s *vim.Strategy, err error) {
	err = w.do(Call{Op: "abort", Type: t, UUID: uuid}, func() error { s, err = w.next.AbortStrategy(ctx, t, uuid, stage); return err })
	return s, err
}

// DeleteStrategy implements vim.Client.
func (w *Wrapper) DeleteStrategy(ctx context.Context, t vim.StrategyType, uuid string, force bool) error {
	return w.do(Call{Op: "delete", Type: t, UUID: uuid}, func() error { return w.next.DeleteStrategy(ctx, t, uuid, force) })
}

// CurrentStrategy implements vim.Client.
func (w *Wrapper) CurrentStrategy(ctx context.Context) (s *vim.CurrentStrategy, err error) {
	err = w.do(Call{Op: "current-strategy"}, func() error { s, err = w.next.CurrentStrategy(ctx); return err })
	return s, err
}

// ListReleases implements vim.Client.
func (w *Wrapper) ListReleases(ctx context.Context, q vim.ReleaseQuery) (r []vim.Release, err error) {
	err = w.do(Call{Op: "list-releases"}, func() error { r, err = w.next.ListReleases(ctx, q); return err })
	return r, err
}

// GetRelease implements vim.Client.
func (w *Wrapper) GetRelease(ctx context.Context, id string) (r *vim.Release, err error) {
	err = w.do(Call{Op: "get-release", Target: id}, func() error { r, err = w.next.GetRelease(ctx, id); return err })
	return r, err
}

// ListDeploys implements vim.Client.
func (w *Wrapper) ListDeploys(ctx context.Context) (d []vim.Deploy, err error) {
	err = w.do(Call{Op: "list-deploys"}, func() error { d, err = w.next.ListDeploys(ctx); return err })
	return d, err
}

// ListKubeVersions implements vim.Client.
func (w *Wrapper) ListKubeVersions(ctx context.Context) (k []vim.KubeVersion, err error) {
	err = w.do(Call{Op: "list-kube-versions"}, func() error { k, err = w.next.ListKubeVersions(ctx); return err })
	return k, err
}

// ListKubeUpgrades implements vim.Client.
func (w *Wrapper) ListKubeUpgrades(ctx context.Context) (k []vim.KubeUpgrade, err error) {
	err = w.do(Call{Op: "list-kube-upgrades"}, func() error { k, err = w.next.ListKubeUpgrades(ctx); return err })
	return k, err
}

// GetSystem implements vim.Client.
func (w *Wrapper) GetSystem(ctx context.Context) (s *vim.System, err error) {
	err = w.do(Call{Op: "get-system"}, func() error { s, err = w.next.GetSystem(ctx); return err })
	return s, err
}

// ListHosts implements vim.Client.
func (w *Wrapper) ListHosts(ctx context.Context) (h []vim.Host, err error) {
	err = w.do(Call{Op: "list-hosts"}, func() error { h, err = w.next.ListHosts(ctx); return err })
	return h, err
}

// SwactHost implements vim.Client.
func (w *Wrapper) SwactHost(ctx context.Context, host string) error {
	return w.do(Call{Op: "swact", Target: host}, func() error { return w.next.SwactHost(ctx, host) })
}
