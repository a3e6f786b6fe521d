package manager

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/leaderelection"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// RenewDeadline is how long a leader keeps acting on its last renewal of
// the Lease: controller-runtime's default renew deadline (10 s; the Lease
// lasts 15 s, a candidate retries every 2 s). client-go's elector steps
// down when it has not renewed within it (tools/leaderelection
// LeaderElector.renew).
const RenewDeadline = 10 * time.Second

// LeaseGuard is the manager's leader-election lock (client-go's LeaseLock,
// built as controller-runtime builds it: leaderelection.NewResourceLock)
// that remembers when this process last renewed its own record. Held says
// whether that renewal is younger than RenewDeadline.
//
// It closes the window client-go's elector leaves to a process that was
// paused (a long GC or CPU-throttling stop, SIGSTOP): a paused leader's
// timers stop with it, so once it runs again its controllers keep
// reconciling until the elector's next renew attempt fails, up to a renew
// deadline later, while another replica may hold the Lease already (seen on
// the local control plane: docs/design-vs-implementation.md, seventh
// session). The reconciler checks Held before its writes. Leader election is
// still not fencing: a pause between the check and the write is not caught.
type LeaseGuard struct {
	resourcelock.Interface
	clock clock.PassiveClock
	bound time.Duration

	mu      sync.Mutex
	renewed time.Time // when the last successful write of this process's own record was sent

	events *leaseEvents // the lock's event recorder, shut down with the manager (nil for NewLeaseGuard's)
}

// NewLeaseGuard wraps lock; bound is how long a renewal is trusted.
func NewLeaseGuard(lock resourcelock.Interface, c clock.PassiveClock, bound time.Duration) *LeaseGuard {
	return &LeaseGuard{Interface: lock, clock: c, bound: bound}
}

// Create implements resourcelock.Interface.
func (g *LeaseGuard) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := g.clock.Now()
	err := g.Interface.Create(ctx, ler)
	g.mark(sent, ler, err)
	return err
}

// Update implements resourcelock.Interface.
func (g *LeaseGuard) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := g.clock.Now()
	err := g.Interface.Update(ctx, ler)
	g.mark(sent, ler, err)
	return err
}

// mark records a successful write of this process's own record (a release,
// HolderIdentity empty, is no renewal).
func (g *LeaseGuard) mark(sent time.Time, ler resourcelock.LeaderElectionRecord, err error) {
	if err != nil || ler.HolderIdentity != g.Identity() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if sent.After(g.renewed) {
		g.renewed = sent
	}
}

// Held returns nil while this process's last renewal of the Lease is
// younger than the bound, else an error saying how old it is
// (RenewalHeld).
func (g *LeaseGuard) Held() error {
	g.mu.Lock()
	renewed := g.renewed
	g.mu.Unlock()
	return RenewalHeld(g.Describe(), renewed, g.clock, g.bound)
}

// RenewalHeld is LeaseGuard's decision, pure: nil while renewed — when
// this process last sent a successful write of its own record of lease
// (zero: never) — is younger than bound by c, else an error saying how
// old it is. The simulator's operator replicas (scenarios/faults.Replica)
// decide with it too, so a simulated replica stops a pass as the binary
// does.
func RenewalHeld(lease string, renewed time.Time, c clock.PassiveClock, bound time.Duration) error {
	if renewed.IsZero() {
		return fmt.Errorf("this replica has not acquired the leader-election Lease %s", lease)
	}
	if age := c.Since(renewed); age >= bound {
		return fmt.Errorf("this replica last renewed the leader-election Lease %s %s ago (longer than the renew deadline, %s): another replica may hold it", lease, age.Round(time.Millisecond), bound)
	}
	return nil
}

// newLeaseGuard builds the leader-election lock as controller-runtime's
// manager would (leaderelection.NewResourceLock: a Lease named id in
// namespace, the in-cluster namespace when empty; identity hostname_UUID;
// its events recorded for the Lease) and wraps it.
func newLeaseGuard(cfg *rest.Config, id, namespace string) (*LeaseGuard, error) {
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	// NewResourceLock sets the user agent and a request timeout (half the
	// renew deadline) on the config it is given, in place: it gets a copy,
	// as the manager gives it (a shared config would cut every later watch
	// of its callers after 5 s).
	events := &leaseEvents{cs: cs}
	lock, err := leaderelection.NewResourceLock(rest.CopyConfig(cfg), events, leaderelection.Options{
		LeaderElection:          true,
		LeaderElectionID:        id,
		LeaderElectionNamespace: namespace,
		RenewDeadline:           RenewDeadline,
	})
	if err != nil {
		return nil, err
	}
	g := NewLeaseGuard(lock, clock.RealClock{}, RenewDeadline)
	g.events = events
	return g, nil
}

// leaseEvents records the lock's events ("… became leader") as the
// manager's own leader-election recorder does, on the core Events API
// (the lock asks only for GetEventRecorderFor). Its broadcaster is shut
// down with the manager (Start, a runnable that needs no leadership), so
// a process that builds several managers (tests restarting the operator
// in-process) leaves no recording goroutines behind.
type leaseEvents struct {
	cs kubernetes.Interface

	mu          sync.Mutex
	broadcaster record.EventBroadcaster
}

// GetEventRecorder implements recorder.Provider; the lock never calls it,
// and what it returns drops every event.
func (*leaseEvents) GetEventRecorder(string) recorder.EventRecorder { return dropEvents{} }

type dropEvents struct{}

func (dropEvents) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...interface{}) {
}

func (dropEvents) AnnotatedEventf(runtime.Object, runtime.Object, map[string]string, string, string, string, string, ...interface{}) {
}

var _ recorder.Provider = (*leaseEvents)(nil)

// GetEventRecorderFor implements recorder.Provider: one broadcaster,
// started on the first call.
func (p *leaseEvents) GetEventRecorderFor(name string) record.EventRecorder {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broadcaster == nil {
		p.broadcaster = record.NewBroadcaster()
		p.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: p.cs.CoreV1().Events("")})
	}
	return p.broadcaster.NewRecorder(NewScheme(), corev1.EventSource{Component: name})
}

// Start implements manager.Runnable: it waits for the manager to stop and
// shuts the broadcaster down (queued events are flushed first).
func (p *leaseEvents) Start(ctx context.Context) error {
	<-ctx.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broadcaster != nil {
		p.broadcaster.Shutdown()
		p.broadcaster = nil
	}
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: a standby
// that never leads stops its broadcaster too.
func (*leaseEvents) NeedLeaderElection() bool { return false }
