package simulator

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Watch says which objects' changes enqueue which requests.
type Watch struct {
	// Object is a prototype of the watched kind, e.g. &appsv1.Deployment{}.
	Object client.Object
	// Map turns a changed object into requests; nil means the object's own
	// key (handler.EnqueueRequestForObject). For updates both the old and
	// the new object are mapped, as handler.EnqueueRequestsFromMapFunc does.
	Map func(ctx context.Context, obj client.Object) []reconcile.Request
	// Filter, when set, drops the events it returns false for (a predicate).
	Filter func(ev WatchEvent) bool
}

// FilterOf turns a controller-runtime predicate into a Watch's Filter:
// Added is its Create, Modified its Update (old and new), Deleted its
// Delete. A nil predicate passes every event.
func FilterOf(p predicate.Predicate) func(WatchEvent) bool {
	if p == nil {
		return nil
	}
	return func(ev WatchEvent) bool {
		switch ev.Type {
		case watch.Added:
			return p.Create(crevent.CreateEvent{Object: ev.Object})
		case watch.Modified:
			return p.Update(crevent.UpdateEvent{ObjectOld: ev.Old, ObjectNew: ev.Object})
		case watch.Deleted:
			return p.Delete(crevent.DeleteEvent{Object: ev.Object})
		}
		return p.Generic(crevent.GenericEvent{Object: ev.Object})
	}
}

type boundWatch struct {
	Watch
	gvk schema.GroupVersionKind
}

// Controller runs one reconcile.Reconciler the way controller-runtime's
// controller does (pkg/internal/controller/controller.go): a deduplicating
// work queue, one reconcile at a time, Result.RequeueAfter as a delayed add
// that keeps the earliest time, errors (and Result.Requeue) re-added with
// per-item exponential back-off (5 ms doubling to 1000 s, reset on
// success) and the controller-wide token bucket (10/s, burst 100),
// reconcile.TerminalError not retried.
type Controller struct {
	s       *Sim
	name    string
	r       reconcile.Reconciler
	watches []boundWatch

	queue    []reconcile.Request
	queued   map[reconcile.Request]bool
	waiting  map[reconcile.Request]time.Time
	failures map[reconcile.Request]int
	bucket   *rate.Limiter

	crashed       bool
	paused        bool
	epoch         int
	workerPending bool
	busyUntil     time.Time
	reconciles    int

	watchDelay    time.Duration
	reconcileTime time.Duration
	writeTime     time.Duration
	// writes counts the API writes of the reconcile running now.
	writes   int
	delivery func(WatchEvent) (time.Duration, bool)
	// watchWhat names a watch event's delivery to this controller in the
	// event heap, kickWhat its worker's turn (made once, not per event).
	watchWhat, kickWhat string
}

// AddController registers a reconciler fed by the given watches and starts
// it: like a manager starting, every existing object of each watched kind
// is enqueued through its Map (an informer's initial list). It panics if a
// watched kind is not in the scheme.
func (s *Sim) AddController(name string, r reconcile.Reconciler, watches ...Watch) *Controller {
	c := &Controller{s: s, name: name, r: r, watchWhat: "watch event to " + name, kickWhat: "reconcile by " + name}
	for _, w := range watches {
		gvk, err := s.store.gvkFor(w.Object)
		if err != nil {
			panic(fmt.Sprintf("simulator: controller %s: %v", name, err))
		}
		c.watches = append(c.watches, boundWatch{Watch: w, gvk: gvk})
	}
	if len(s.ctrls) == 0 {
		s.subs = append(s.subs, subscriber{raw: s.dispatch})
	}
	s.ctrls = append(s.ctrls, c)
	c.reset()
	c.initialList()
	return c
}

// Controller returns the controller registered under name, or nil.
func (s *Sim) Controller(name string) *Controller {
	for _, c := range s.ctrls {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Name is the name given to AddController.
func (c *Controller) Name() string { return c.name }

// Reconciles is how many reconciles have run so far.
func (c *Controller) Reconciles() int { return c.reconciles }

// Crashed reports whether the controller is down (Crash without Restart).
func (c *Controller) Crashed() bool { return c.crashed }

// QueueLen is the number of requests waiting to be reconciled now.
func (c *Controller) QueueLen() int { return len(c.queue) }

// SetWatchDelay delays every watch event's delivery to this controller by
// d of virtual time (default 0; events stay in commit order).
func (c *Controller) SetWatchDelay(d time.Duration) *Controller { c.watchDelay = d; return c }

// SetReconcileDuration makes each reconcile occupy the controller for d of
// virtual time: its reads and writes happen at the start, and the next
// reconcile starts d later (default 0).
func (c *Controller) SetReconcileDuration(d time.Duration) *Controller { c.reconcileTime = d; return c }

// SetWriteDuration makes each API write (create, update, patch, delete,
// deletecollection; refused ones included: the round trip happens) of a
// reconcile occupy the controller for d more of virtual time, as
// sequential API round trips do: the writes still take effect at once,
// the next reconcile starts later (default 0).
func (c *Controller) SetWriteDuration(d time.Duration) *Controller { c.writeTime = d; return c }

// SetDelivery installs a per-event delivery decision for fault injection:
// f returns the delay for this event, or drop=true to lose it. Nil restores
// the fixed watch delay.
func (c *Controller) SetDelivery(f func(ev WatchEvent) (delay time.Duration, drop bool)) {
	c.delivery = f
}

// Crash kills the controller's process: its queue, back-offs and pending
// requeues are dropped and it receives no events until Restart. A reconcile
// running at the time sees every further API call fail, and its result is
// discarded.
func (c *Controller) Crash() {
	c.crashed = true
	c.reset()
}

// Pause stops the controller's process without killing it (SIGSTOP, a
// long GC or CPU-throttling stop): no reconcile starts until Resume. Watch
// events and requeues that fall due meanwhile are queued — a stopped
// process's socket buffers and overdue timers hold them — and are worked
// off on Resume; the queue, the back-offs and the reconciler's memory are
// kept. (A simulated reconcile runs at one instant, so a pause falls
// between reconciles.)
func (c *Controller) Pause() { c.paused = true }

// Paused reports whether the controller is between Pause and Resume.
func (c *Controller) Paused() bool { return c.paused }

// Resume continues a paused controller: its queue is worked off from now,
// in order, as the continued process's worker does.
func (c *Controller) Resume() {
	if !c.paused {
		return
	}
	c.paused = false
	if c.busyUntil.Before(c.s.now) {
		c.busyUntil = c.s.now
	}
	c.kick()
}

// Restart cold-starts the controller: every existing object of each watched
// kind is enqueued through its Map, like an informer's initial list. A
// paused controller's process is replaced: the new one runs.
func (c *Controller) Restart() {
	c.crashed = false
	c.paused = false
	c.reset()
	c.busyUntil = c.s.now
	c.initialList()
}

// ProcessState is implemented by a reconciler that keeps memory between
// reconciles which its process loses when it dies (a back-off, a cache of
// its own): the controller calls ForgetProcessState when it crashes or
// restarts, as a real restart starts a new process.
type ProcessState interface {
	ForgetProcessState()
}

func (c *Controller) reset() {
	if p, ok := c.r.(ProcessState); ok {
		p.ForgetProcessState()
	}
	c.epoch++
	c.queue = nil
	c.queued = map[reconcile.Request]bool{}
	c.waiting = map[reconcile.Request]time.Time{}
	c.failures = map[reconcile.Request]int{}
	c.workerPending = false
}

// initialList enqueues every stored object of each watched kind, at the
// watch's version; an object whose conversion fails is skipped (logged),
// as a real informer's list would fail.
func (c *Controller) initialList() {
	for _, w := range c.watches {
		sgvk := c.s.store.storageGVK(w.gvk)
		for _, o := range c.s.store.list(sgvk) {
			obj, err := c.s.store.convert(o, sgvk, w.gvk)
			if err != nil {
				c.s.logger.Error(err, "initial list of controller "+c.name+": object skipped", "kind", w.gvk, "object", objectName(o))
				continue
			}
			c.enqueueMapped(w, obj.DeepCopyObject().(client.Object))
		}
	}
}

// dispatch hands a committed change to every running controller watching
// its kind (at the watch's version), after the controller's delivery delay.
func (s *Sim) dispatch(v *versionedEvent) {
	gk := v.gvk.GroupKind()
	for _, c := range s.ctrls {
		if c.crashed {
			continue
		}
		for _, w := range c.watches {
			if w.gvk.GroupKind() != gk {
				continue
			}
			ev, ok := v.at(w.gvk)
			if ok && (w.Filter == nil || w.Filter(ev)) {
				c.deliver(w, ev)
			}
		}
	}
}

// Inject hands ev to the controller now, through every watch of its kind,
// as if the watch had delivered it — for informer models of your own that
// delay, reorder, drop or relist events (pair it with a SetDelivery that
// drops the direct deliveries). ev may be at any version of a watched
// kind; it is converted to each watch's version. A crashed controller
// ignores it.
func (c *Controller) Inject(ev WatchEvent) {
	if c.crashed {
		return
	}
	gvk := ev.Object.GetObjectKind().GroupVersionKind()
	for _, w := range c.watches {
		if w.gvk.GroupKind() != gvk.GroupKind() {
			continue
		}
		ev, err := c.s.store.convertEvent(ev, gvk, w.gvk)
		if err != nil {
			c.s.logger.Error(err, "injected event dropped: conversion failed", "controller", c.name, "kind", w.gvk)
			continue
		}
		if w.Filter == nil || w.Filter(ev) {
			c.enqueueMapped(w, ev.Object)
			if ev.Type == watch.Modified && ev.Old != nil && w.Map != nil {
				c.enqueueMapped(w, ev.Old)
			}
		}
	}
}

func (c *Controller) deliver(w boundWatch, ev WatchEvent) {
	delay := c.watchDelay
	if c.delivery != nil {
		d, drop := c.delivery(ev)
		if drop {
			return
		}
		delay = d
	}
	c.s.scheduleDelivery(delay, c.watchWhat, c, delivery{w: w, ev: ev, epoch: c.epoch})
}

// arrive is a delivered watch event reaching the controller's queue,
// unless the controller crashed since it was sent.
func (c *Controller) arrive(d *delivery) {
	if c.crashed || c.epoch != d.epoch {
		return
	}
	c.enqueueMapped(d.w, d.ev.Object)
	if d.ev.Type == watch.Modified && d.ev.Old != nil && d.w.Map != nil {
		c.enqueueMapped(d.w, d.ev.Old)
	}
}

func (c *Controller) enqueueMapped(w boundWatch, obj client.Object) {
	if w.Map == nil {
		c.add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		return
	}
	for _, req := range w.Map(c.s.ctx(), obj) {
		c.add(req)
	}
}
