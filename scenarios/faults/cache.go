package faults

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/simulator"
)

// Cache is one simulated operator process's informer cache (the model of
// informer.go: controller-runtime's cache, one informer per kind) and its
// wiring into that process: reads of the informers' kinds come from it
// (Reader), the process's controller is woken only by its events
// (Attach), and every cold start lists the store afresh before the
// controller starts (Start), as the manager waits for its caches to sync.
// The stale and drop faults lag or cut it (FireCacheFault). make
// simulate's processes (the Injector's) and the features' simulated
// operator replicas (scenarios/cluster's Sim) are wired by this one type.
type Cache struct {
	sim *simulator.Sim
	inf *informers
	// held are the cache's timers (a sync retry) that fell due while its
	// process was paused
	held []func()
}

// NewCache returns the informers of operator process name, listing the
// store through sim.ClientFor(name+"/informer"), with the operator's
// field indexes (controller.SetupIndexes). They follow the store from now
// on; until Attach no controller is woken by them.
func NewCache(ctx context.Context, sim *simulator.Sim, name string) (*Cache, error) {
	inf, err := newInformers(sim, sim.ClientFor(name+"/informer"))
	if err != nil {
		return nil, err
	}
	if err := controller.SetupIndexes(ctx, inf); err != nil {
		return nil, fmt.Errorf("index the informers of %s: %w", name, err)
	}
	return &Cache{sim: sim, inf: inf}, nil
}

// Attach makes the cache the only way events reach ctl: its own watch
// deliveries are dropped (those already scheduled still arrive).
func (c *Cache) Attach(ctl *simulator.Controller) {
	c.inf.ctl = ctl
	ctl.SetDelivery(DropAllDeliveries)
}

// DropAllDeliveries is a simulator.Controller delivery that drops every
// watch event: a controller fed by a Cache, or a stalled one.
func DropAllDeliveries(simulator.WatchEvent) (time.Duration, bool) { return 0, true }

// Sync is a cold start's list of every informer (lags and drops in force
// stay in force); an error means a list failed and the caches have not
// synced.
func (c *Cache) Sync(ctx context.Context) error { return c.inf.reset(ctx) }

// Start cold-starts ctl behind the cache: the informers list afresh, then
// the controller restarts (every object enqueued). A failed list is
// retried a second later while again() holds (the same process, still
// down and allowed to run), as the manager waits for its caches to sync.
func (c *Cache) Start(ctx context.Context, ctl *simulator.Controller, what string, again func() bool) {
	if err := c.Sync(ctx); err != nil {
		var retry func()
		retry = func() {
			if c.inf.paused {
				c.held = append(c.held, retry)
				return
			}
			if again() {
				c.Start(ctx, ctl, what, again)
			}
		}
		c.sim.Schedule(time.Second, "cache sync of "+what, retry)
		return
	}
	ctl.Restart()
}

// Pause stops the cache with its process (SIGSTOP): the watch events that
// commit meanwhile wait, reads see the cache as it was, relists and sync
// retries wait too.
func (c *Cache) Pause() { c.inf.pause() }

// Resume continues it: pending events are applied and delivered, a relist
// that fell due runs, each in a scheduled event of its own (the process's
// reconciles may run first, on the cache as it was), and a sync retry
// that fell due runs.
func (c *Cache) Resume(ctx context.Context) {
	c.inf.resume(ctx)
	held := c.held
	c.held = nil
	for _, fn := range held {
		c.sim.Schedule(0, "overdue cache sync", fn)
	}
}

// Reader returns cl reading the informers' kinds from the cache (such
// reads never fail: no API call) and making every other call through cl.
func (c *Cache) Reader(cl client.Client) client.Client { return cacheReader{Client: cl, c: c} }

type cacheReader struct {
	client.Client
	c *Cache
}

func (r cacheReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if i, _ := r.c.inf.tracks(obj); i != nil {
		return r.c.inf.Get(key, obj)
	}
	return r.Client.Get(ctx, key, obj, opts...)
}

func (r cacheReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if i, _ := r.c.inf.tracks(list); i != nil {
		return r.c.inf.List(list, opts...)
	}
	return r.Client.List(ctx, list, opts...)
}

// IsCacheFault reports whether k lags or cuts the operator's informers
// (stale, drop): a run injecting one needs a Cache per operator process.
func IsCacheFault(k Kind) bool { return k == Stale || k == Drop }

// FireCacheFault fires a stale or drop fault now on the caches caches
// returns (called again at the window's end, so a process made meanwhile
// is released too) and records it with record: the note and the window
// are those of make simulate's transcript.
func FireCacheFault(ctx context.Context, sim *simulator.Sim, f Fault, caches func() []*Cache, record func(Fault, time.Duration, string) int) error {
	d, kind := f.Dur("for"), f.Str("kind")
	var start, end func(*Cache)
	switch f.Kind {
	case Stale:
		lag, events := f.Dur("lag"), f.Int("events")
		how := fmt.Sprintf("%s behind", lag)
		if events > 0 {
			how = fmt.Sprintf("%d events behind", events)
			lag = 0
		}
		record(f, d, fmt.Sprintf("%s %s for %s", operatorsWatches(kind, "informer runs", "informers run"), how, d))
		start = func(c *Cache) { c.inf.setLag(kind, lag, events) }
		end = func(c *Cache) { c.inf.setLag(kind, 0, 0) }
	case Drop:
		record(f, d, fmt.Sprintf("%s every event for %s, then relist", operatorsWatches(kind, "watch loses", "watches lose"), d))
		start = func(c *Cache) { c.inf.setDrop(ctx, kind, true) }
		end = func(c *Cache) { c.inf.setDrop(ctx, kind, false) }
	default:
		return fmt.Errorf("fault %s does not act on the operator's informers (stale, drop do)", f)
	}
	for _, c := range caches() {
		start(c)
	}
	sim.Schedule(d, "end of "+f.String(), func() {
		for _, c := range caches() {
			end(c)
		}
	})
	return nil
}

// operatorsWatches is the subject and verb of a transcript line about
// the operator's informers (or watches) of kind: "all the operator's
// informers run" (many) for kind "all", else "the operator's deployments
// informer runs" (one).
func operatorsWatches(kind, one, many string) string {
	if kind == "all" {
		return "all the operator's " + many
	}
	return "the operator's " + kind + " " + one
}
