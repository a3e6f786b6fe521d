package manager

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Running is a manager running in this process: what the harnesses that
// embed the operator share (make demo, the e2e suites, the features' real
// backend, the bench operator). Start builds it with New and runs it in a
// goroutine; wait for what you need with WaitForCacheSync or WaitElected;
// Stop cancels it and waits for it to exit. cmd/upgrade-operator runs
// New's manager in the foreground instead.
type Running struct {
	ctrl.Manager
	cancel context.CancelFunc
	done   chan struct{}
	err    error // the manager's exit error, set before done is closed
}

// Start builds a manager with New and runs it until ctx ends or Stop is
// called. It returns once the manager's goroutine is started, without
// waiting for caches or election.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Running, error) {
	mgr, err := New(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	mctx, cancel := context.WithCancel(ctx)
	r := &Running{Manager: mgr, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = mgr.Start(mctx)
	}()
	return r, nil
}

// Done is closed once the manager has exited.
func (r *Running) Done() <-chan struct{} { return r.done }

// Err is the manager's exit error once Done is closed, nil before.
func (r *Running) Err() error {
	if r.exited() {
		return r.err
	}
	return nil
}

func (r *Running) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Wait blocks until the manager exits and returns its exit error.
func (r *Running) Wait() error {
	<-r.done
	return r.err
}

// Stop cancels the manager and waits, at most until ctx ends, for it to
// exit (with leader election on, it releases its Lease first); it returns
// the manager's exit error.
func (r *Running) Stop(ctx context.Context) error {
	r.cancel()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return fmt.Errorf("the operator's manager did not stop: %w", ctx.Err())
	}
}

// WaitForCacheSync waits until the manager's caches have synced; it fails
// when ctx ends first or the manager has exited.
func (r *Running) WaitForCacheSync(ctx context.Context) error {
	if r.exited() {
		return r.notReady(ctx, "its caches synced")
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-r.done:
			cancel()
		case <-wctx.Done():
		}
	}()
	if r.GetCache().WaitForCacheSync(wctx) {
		return nil
	}
	return r.notReady(ctx, "its caches synced")
}

// WaitElected waits until the manager leads (at once without leader
// election); it fails when ctx ends first or the manager has exited.
func (r *Running) WaitElected(ctx context.Context) error {
	if r.exited() {
		return r.notReady(ctx, "it was elected")
	}
	select {
	case <-r.Elected():
		return nil
	case <-r.done:
	case <-ctx.Done():
	}
	return r.notReady(ctx, "it was elected")
}

func (r *Running) notReady(ctx context.Context, what string) error {
	switch {
	case r.exited():
		if r.err == nil {
			return fmt.Errorf("the operator's manager exited before %s", what)
		}
		return fmt.Errorf("the operator's manager exited before %s: %w", what, r.err)
	default:
		return fmt.Errorf("the operator's manager not ready (%s): %w", what, ctx.Err())
	}
}
