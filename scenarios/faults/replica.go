package faults

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/simulator"
)

// LeaseKey is the operator's leader election Lease: the manager's
// LeaderElectionID in the namespace deploy/ installs it in.
var LeaseKey = types.NamespacedName{Namespace: "upgrade-operator-system", Name: manager.DefaultLeaderElectionID}

// RestartDelay is how long an operator process that lost its lease is
// down: controller-runtime's manager exits on "leader election lost"
// (pkg/manager/internal.go, OnStoppedLeading), the kubelet's PLEG notices
// the exited container at its next relist (pkg/kubelet/kubelet.go
// genericPlegRelistPeriod, 1 s) and restarts it at once (the first
// restart has no back-off: pkg/kubelet/kuberuntime/kuberuntime_manager.go
// doBackOff), the image cached.
const RestartDelay = time.Second

// Replica is one operator process in the simulator, as a Deployment's pod
// runs it: its controller, its incarnations (each restart is a new
// process, cold) and, once Elect is called, its part in the leader
// election the manager runs (operator/manager: LeaderElection,
// LeaderElectionReleaseOnCancel). Under election, each incarnation is a
// candidate of its own (identity Name_Incarnation, as controller-runtime's
// hostname_uuid is new for each process) for the Lease LeaseKey, through
// its own lease client; the controller runs only while the replica leads
// (OnStartedLeading cold-starts it), and when the replica stops leading
// the process exits and is back RestartDelay later as a new candidate.
// The election itself is simulator.LeaderElector (client-go's
// tools/leaderelection in virtual time). One goroutine, as the simulator.
type Replica struct {
	// Name names the process: its lease client is Sim.ClientFor(Name+"/lease").
	Name string
	// Ctl is the process's controller; set it before Elect, Kill or Restart.
	Ctl *simulator.Controller
	// Incarnation counts the processes, from 1.
	Incarnation int
	// Alive is false from Kill to Restart.
	Alive bool
	// Paused is true from Pause to Resume (the process stopped, not dead).
	Paused bool

	sim     *simulator.Sim
	hooks   ReplicaHooks
	lease   client.Client
	elector *simulator.LeaderElector // under election: this incarnation's
	// renewed is when this incarnation last sent a successful write of its
	// own Lease record (LeaseGuard's memory, operator/manager); zero: never.
	renewed time.Time
}

// ReplicaHooks connect a Replica to its runner. Every field may be nil.
type ReplicaHooks struct {
	// Stalled is the error the replica's lease calls fail with while its
	// network stalls (a timeout), nil otherwise.
	Stalled func() error
	// Start cold-starts the controller; nil: Ctl.Restart.
	Start func()
	// Led is told when the replica starts leading, before its controller
	// starts.
	Led func()
	// Lost is told when the replica stops leading, before its process
	// exits; false keeps the process running without its lease and
	// without a restart (a test's zombie, to prove a one-writer check).
	Lost func() bool
	// Pause and Resume are told when the process stops (after its
	// controller and elector stopped) and continues (after its controller,
	// before its elector), for the runner's parts of the process (its
	// informers).
	Pause, Resume func()
}

// NewReplica returns replica name's first incarnation, alive.
func NewReplica(sim *simulator.Sim, name string, hooks ReplicaHooks) *Replica {
	r := &Replica{Name: name, Incarnation: 1, Alive: true, sim: sim, hooks: hooks}
	r.lease = leaseClient{Client: sim.ClientFor(name + "/lease"), r: r}
	return r
}

// Identity is the current incarnation's holderIdentity.
func (r *Replica) Identity() string { return fmt.Sprintf("%s_%d", r.Name, r.Incarnation) }

// Leading reports whether the replica leads now (its controller may run).
func (r *Replica) Leading() bool { return r.elector != nil && r.elector.Leading() }

// LeaseHeld is the reconciler's LeaseHeld of this replica, as the
// manager wires it to its LeaseGuard: nil while this incarnation's last
// successful renewal of the Lease is younger than the renew deadline
// (manager.RenewalHeld, the guard's own decision, on the simulator's
// clock), else why not.
func (r *Replica) LeaseHeld() error {
	return manager.RenewalHeld(LeaseKey.String(), r.renewed, r.sim.Clock(), manager.RenewDeadline)
}

// markRenewal is LeaseGuard.mark: a successful write of this
// incarnation's own record (not a release, not another holder's), sent
// at sent.
func (r *Replica) markRenewal(sent time.Time, obj client.Object, err error) {
	l, ok := obj.(*coordinationv1.Lease)
	if err != nil || !ok || ptr.Deref(l.Spec.HolderIdentity, "") != r.Identity() {
		return
	}
	if sent.After(r.renewed) {
		r.renewed = sent
	}
}

// Elect runs the current incarnation as a candidate; from then on the
// replica is under leader election, its restarts included.
func (r *Replica) Elect() error {
	le, err := r.sim.NewLeaderElector(simulator.LeaderElectionConfig{
		Lease: LeaseKey, Identity: r.Identity(), Client: r.lease, ReleaseOnCancel: true,
		Callbacks: simulator.LeaderCallbacks{OnStartedLeading: r.startedLeading, OnStoppedLeading: r.stoppedLeading},
	})
	if err != nil {
		return fmt.Errorf("leader election of %s: %w", r.Name, err)
	}
	r.elector = le
	r.renewed = time.Time{} // a new process: no renewal of its own yet
	le.Run()
	return nil
}

// startedLeading starts the controller with a cold cache.
func (r *Replica) startedLeading() {
	if r.hooks.Led != nil {
		r.hooks.Led()
	}
	if r.Ctl.Crashed() {
		r.start()
	}
}

// stoppedLeading is the manager's "leader election lost": the process
// exits and is restarted RestartDelay later as a new candidate.
func (r *Replica) stoppedLeading() {
	if r.hooks.Lost != nil && !r.hooks.Lost() {
		return
	}
	r.Kill()
	r.sim.Schedule(RestartDelay, "restart "+r.Name, r.Restart)
}

func (r *Replica) start() {
	if r.hooks.Start != nil {
		r.hooks.Start()
		return
	}
	r.Ctl.Restart()
}

// Pause stops the process without killing it (SIGSTOP, a long GC or
// CPU-throttling stop): nothing of it runs — no reconcile, no lease
// renewal, no timer — until Resume, and it keeps all it had in memory:
// its elector still believes it leads, its reconciler's state and its
// work queue are as they were. False: the process is down or already
// paused.
func (r *Replica) Pause() bool {
	if !r.Alive || r.Paused {
		return false
	}
	r.Paused = true
	if r.elector != nil {
		r.elector.Pause()
	}
	r.Ctl.Pause()
	if r.hooks.Pause != nil {
		r.hooks.Pause()
	}
	return true
}

// Resume continues a paused process (SIGCONT). What fell due while it was
// stopped runs now: first its controller's queue (a reconcile may start
// before its informers apply the watch events buffered meanwhile and
// before the elector's overdue renewal — the goroutines of a continued
// process race, and this is the order that tests the lease guard), then
// the runner's parts (hooks.Resume), then the elector's overdue loops
// (simulator.LeaderElector.Resume: a leader whose lease was taken
// meanwhile finds out at that renewal and leads on until its renew
// deadline, as client-go's elector does).
func (r *Replica) Resume() {
	if !r.Paused {
		return
	}
	r.Paused = false
	r.Ctl.Resume()
	if r.hooks.Resume != nil {
		r.hooks.Resume()
	}
	if r.elector != nil {
		r.elector.Resume()
	}
}

// PauseFor pauses the process now and resumes it d later, unless it was
// killed meanwhile (a new incarnation is a new, running process).
func (r *Replica) PauseFor(d time.Duration) bool {
	if !r.Pause() {
		return false
	}
	incarnation := r.Incarnation
	r.sim.Schedule(d, "resume "+r.Name, func() {
		if r.Incarnation == incarnation && r.Alive {
			r.Resume()
		}
	})
	return true
}

// Kill is the death of the process (SIGKILL, OOM, leader election lost):
// its controller and its elector stop at once; a lease it held stays held
// until the other candidates see it expire. A paused process can be
// killed.
func (r *Replica) Kill() {
	r.Alive = false
	r.Paused = false
	if r.elector != nil {
		r.elector.Kill()
	}
	r.Ctl.Crash()
}

// Restart brings the replica back as a new incarnation: a candidate under
// leader election, else its controller cold-starts at once.
func (r *Replica) Restart() {
	r.Alive = true
	r.Incarnation++
	if r.elector == nil {
		r.start()
		return
	}
	if err := r.Elect(); err != nil {
		panic(err) // the configuration of the first incarnation was accepted
	}
}

// CrashFor kills the process now and restarts it down later.
func (r *Replica) CrashFor(down time.Duration) {
	r.Kill()
	r.sim.Schedule(down, "restart "+r.Name, r.Restart)
}

// Leader is the index of the replica that leads now, -1 for none.
func Leader(rs []*Replica) int {
	for i, r := range rs {
		if r.Leading() {
			return i
		}
	}
	return -1
}

// leaseClient is a replica's client for its Lease (the elector's get,
// create and update): its calls time out while the replica is stalled,
// as the rest of its calls do.
type leaseClient struct {
	client.Client
	r *Replica
}

func (c leaseClient) stalled() error {
	if c.r.hooks.Stalled == nil {
		return nil
	}
	return c.r.hooks.Stalled()
}

func (c leaseClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.stalled(); err != nil {
		return err
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// Create and Update are the lock's writes, through the replica's lease
// guard (markRenewal), as the manager's lock goes through LeaseGuard.
func (c leaseClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.stalled(); err != nil {
		return err
	}
	sent := c.r.sim.Now()
	err := c.Client.Create(ctx, obj, opts...)
	c.r.markRenewal(sent, obj, err)
	return err
}

func (c leaseClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.stalled(); err != nil {
		return err
	}
	sent := c.r.sim.Now()
	err := c.Client.Update(ctx, obj, opts...)
	c.r.markRenewal(sent, obj, err)
	return err
}
