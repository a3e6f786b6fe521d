package simulator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// client-go's DefaultTypedControllerRateLimiter, which controller-runtime
// and kube-controller-manager use: the larger of a per-item exponential
// back-off (5 ms doubling to 1000 s) and one token bucket per controller
// (10 per second, burst 100) that throttles hot loops.
const (
	backoffBase = 5 * time.Millisecond
	backoffMax  = 1000 * time.Second
	bucketQPS   = 10
	bucketBurst = 100
)

// shiftQueue is the longest work queue whose front is taken by shifting
// the rest down (longer ones slide, so draining one stays linear).
const shiftQueue = 16

// errProcessKilled fails the API calls of a reconcile whose controller was
// crashed while it ran.
var errProcessKilled = errors.New("simulator: the controller's process was killed")

// add enqueues req unless it is already waiting (the work queue's dedup;
// a request being reconciled can be queued again, as a dirty item is).
func (c *Controller) add(req reconcile.Request) {
	if c.crashed || c.queued[req] {
		return
	}
	c.queued[req] = true
	c.queue = append(c.queue, req)
	c.kick()
}

// kick schedules the worker unless it is already scheduled.
func (c *Controller) kick() {
	if c.workerPending || c.crashed || c.paused || len(c.queue) == 0 {
		return
	}
	c.workerPending = true
	epoch := c.epoch
	at := c.s.now
	if c.busyUntil.After(at) {
		at = c.busyUntil
	}
	c.s.scheduleKick(at, c.kickWhat, c, epoch)
}

// work runs one reconcile and schedules the next, so controllers and
// timers due at the same virtual instant interleave fairly.
func (c *Controller) work() {
	c.workerPending = false
	if c.crashed || c.paused || len(c.queue) == 0 {
		return
	}
	req := c.queue[0]
	if len(c.queue) <= shiftQueue {
		// Shifted down in place (a queue is mostly a few requests long),
		// so the next add appends into the same array instead of a new
		// one once a sliding front has used up its capacity.
		n := copy(c.queue, c.queue[1:])
		c.queue[n] = reconcile.Request{}
		c.queue = c.queue[:n]
	} else {
		c.queue = c.queue[1:]
	}
	delete(c.queued, req)
	c.reconciles++
	c.writes = 0
	res, err := c.reconcile(req)
	c.busyUntil = c.s.now.Add(c.reconcileTime + time.Duration(c.writes)*c.writeTime)
	if c.crashed {
		return // the process died mid-reconcile: its result is lost
	}
	c.handle(req, res, err)
	c.kick()
}

func (c *Controller) reconcile(req reconcile.Request) (reconcile.Result, error) {
	prev := c.s.active
	c.s.active = c
	defer func() { c.s.active = prev }()
	logger := c.s.logger
	if logger.GetSink() == nil {
		// A discarding logger takes no values (its WithValues is itself),
		// so every reconcile's context is the same one.
		return c.r.Reconcile(c.s.discardCtx(), req)
	}
	logger = logger.WithValues("controller", c.name, "request", req.String())
	ctx := logr.NewContext(c.s.ctx(), logger)
	return c.r.Reconcile(ctx, req)
}

// discardCtx is logr.NewContext(s.ctx(), s.logger) for a discarding
// logger, made once per run context (contexts are immutable; setRunCtx
// drops it).
func (s *Sim) discardCtx() context.Context {
	if s.reconcileCtx == nil || s.reconcileCtxLogger != s.logger {
		s.reconcileCtx, s.reconcileCtxLogger = logr.NewContext(s.ctx(), s.logger), s.logger
	}
	return s.reconcileCtx
}

// setRunCtx sets the context of the events run from now on.
func (s *Sim) setRunCtx(ctx context.Context) {
	s.runCtx = ctx
	s.reconcileCtx = nil
}

// handle mirrors controller-runtime's reconcileHandler.
func (c *Controller) handle(req reconcile.Request, res reconcile.Result, err error) {
	switch {
	case err != nil:
		if !errors.Is(err, reconcile.TerminalError(nil)) {
			c.addRateLimited(req)
		}
	case res.RequeueAfter > 0:
		delete(c.failures, req)
		c.addAfter(req, res.RequeueAfter)
	case res.Requeue: //nolint:staticcheck // controller-runtime still honours it
		c.addRateLimited(req)
	default:
		delete(c.failures, req)
	}
}

// Backoff is the delay before the n-th consecutive retry (n from 0) of a
// failing request: 5 ms doubling, capped at 1000 s.
func Backoff(n int) time.Duration {
	if n > 20 {
		return backoffMax
	}
	d := backoffBase << n
	if d > backoffMax {
		return backoffMax
	}
	return d
}

func (c *Controller) addRateLimited(req reconcile.Request) {
	d := Backoff(c.failures[req])
	c.failures[req]++
	if c.bucket == nil {
		c.bucket = rate.NewLimiter(bucketQPS, bucketBurst)
	}
	d = max(d, c.bucket.ReserveN(c.s.now, 1).DelayFrom(c.s.now))
	c.addAfter(req, d)
}

// addAfter enqueues req after d; if req already waits for an earlier time
// that one stands (client-go's delaying queue).
func (c *Controller) addAfter(req reconcile.Request, d time.Duration) {
	if d <= 0 {
		c.add(req)
		return
	}
	at := c.s.now.Add(d)
	if w, ok := c.waiting[req]; ok && !at.Before(w) {
		return
	}
	c.waiting[req] = at
	epoch := c.epoch
	c.s.scheduleAt(at, fmt.Sprintf("requeue %s by %s", req, c.name), func() {
		if c.epoch != epoch {
			return
		}
		if w, ok := c.waiting[req]; !ok || !w.Equal(at) {
			return
		}
		delete(c.waiting, req)
		c.add(req)
	})
}
