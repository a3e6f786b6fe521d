package cluster

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// The features' simulated operator reads the store directly until a
// scenario injects its first stale or drop: from then on every replica
// reads through an informer cache of its own and is woken only by its
// events — make simulate's model and wiring (faults.Cache, as the
// Injector gives each of its processes one), listed afresh at that
// instant as a synced cache is, and again at every cold start of the
// replica. Before the switch, reads through the cache would be as fresh
// as the store's, so a scenario without these faults runs as it always
// did.

// cacheFault injects stale or drop: the informers first, then the
// fault's window at f.At from now (its relists, later, list with the
// scenario's context, as the replicas' cold starts do).
func (s *Sim) cacheFault(ctx context.Context, f faults.Fault) error {
	if err := s.useInformers(ctx); err != nil {
		return fmt.Errorf("fault %s: %w", f, err)
	}
	s.at(f, func() {
		if err := faults.FireCacheFault(s.ctx, s.env.Sim, f, s.replicaCaches, s.faults.Record); err != nil {
			s.faults.Record(f, 0, err.Error())
		}
	})
	return nil
}

// useInformers gives every replica its cache, once.
func (s *Sim) useInformers(ctx context.Context) error {
	if s.informers {
		return nil
	}
	s.informers = true
	for i := range s.replicas {
		if err := s.addCache(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// addCache makes replica i's cache, lists the store into it (a running
// replica) and makes it the only way events reach the replica's
// controller.
func (s *Sim) addCache(ctx context.Context, i int) error {
	r := s.replicas[i]
	c, err := faults.NewCache(ctx, s.env.Sim, r.Name)
	if err != nil {
		return err
	}
	if err := c.Sync(ctx); err != nil {
		return fmt.Errorf("list the store into the informers of %s: %w", r.Name, err)
	}
	c.Attach(r.Ctl)
	s.caches = append(s.caches, c)
	return nil
}

// replicaCaches are the replicas' caches.
func (s *Sim) replicaCaches() []*faults.Cache { return s.caches }

// cacheOf is replica i's cache, nil while the replicas read the store.
func (s *Sim) cacheOf(i int) *faults.Cache {
	if i < len(s.caches) {
		return s.caches[i]
	}
	return nil
}

// startReplica cold-starts replica i's controller (faults.ReplicaHooks.Start):
// behind its cache once it has one, as make simulate's processes start.
func (s *Sim) startReplica(ctx context.Context, i int) {
	r := s.replicas[i]
	c := s.cacheOf(i)
	if c == nil {
		r.Ctl.Restart()
		return
	}
	incarnation := r.Incarnation
	c.Start(ctx, r.Ctl, r.Name, func() bool {
		return r.Alive && r.Incarnation == incarnation && r.Ctl.Crashed() && (!s.elected || r.Leading())
	})
}

// restoreDelivery ends a stall of replica i's watches: its controller is
// fed by its cache again once it has one, else by its own watches.
func (s *Sim) restoreDelivery(i int) {
	ctl := s.replicas[i].Ctl
	if c := s.cacheOf(i); c != nil {
		c.Attach(ctl)
		return
	}
	ctl.SetDelivery(nil)
}

// cacheSwitch is replica's client: reads through the replica's cache once
// it has one (faults.Cache.Reader), else every call through Client.
type cacheSwitch struct {
	client.Client
	s       *Sim
	replica int
}

func (c cacheSwitch) reader() client.Client {
	if cache := c.s.cacheOf(c.replica); cache != nil {
		return cache.Reader(c.Client)
	}
	return c.Client
}

func (c cacheSwitch) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reader().Get(ctx, key, obj, opts...)
}

func (c cacheSwitch) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.reader().List(ctx, list, opts...)
}
