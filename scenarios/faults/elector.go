package faults

import (
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// startElection adds the second replica (standing by) and runs both
// replicas under leader election (Replica.Elect); replica 0, already
// running, takes the lease at once.
func (in *Injector) startElection() {
	p0 := in.procs[0]
	p1, err := in.newProcess(in.ctx, 1)
	if err != nil {
		in.violate("start the second replica: %v", err)
		return
	}
	r1 := *in.base
	r1.ForgetProcessState() // another process: none of replica 0's memory
	r1.Client = newOpClient(p1)
	if in.guarded {
		r1.LeaseHeld = p1.LeaseHeld
	}
	p1.Ctl = in.sim.AddController("applicationupgrade-1", &r1, simrun.OperatorWatches(in.sim)...)
	p1.Ctl.Crash() // standing by until it holds the lease
	if p1.cache != nil {
		p1.cache.Attach(p1.Ctl)
	}
	in.elect(p0)
	if !p0.Leading() {
		p0.Ctl.Crash()
	}
	in.elect(p1)
}

func (in *Injector) elect(p *process) {
	if err := p.Elect(); err != nil {
		in.violate("%v", err)
	}
}

// startedLeading notes a new leader (not the first); the Replica then
// starts its controller with a cold cache.
func (in *Injector) startedLeading(p *process) {
	if in.elected {
		in.note(fmt.Sprintf("%s acquired the lease and starts its controller with a cold cache", p.Name))
		in.marker(p.Name + " leads")
	}
	in.elected = true
}

// stoppedLeading notes the manager's "leader election lost"; the Replica
// then exits the process and restarts it RestartDelay later, unless the
// test knob zombieLeaders keeps it running.
func (in *Injector) stoppedLeading(p *process) bool {
	in.note(fmt.Sprintf("%s failed to renew the lease for %s: leader election lost, the process exits", p.Name, simulator.DefaultRenewDeadline))
	in.marker(p.Name + " lost the lease")
	return !in.zombieLeaders
}

// marker records an event of the fault models (no fault of the schedule)
// for the timeline.
func (in *Injector) marker(label string) {
	in.fired = append(in.fired, Fired{Start: in.sim.Elapsed(), End: in.sim.Elapsed(), Note: label})
}

func (in *Injector) note(line string) {
	if in.out != nil {
		fmt.Fprintf(in.out, "[t=%7.1fs] %s\n\n", in.sim.Elapsed().Seconds(), line)
	}
}

// leaseExpired is the one-writer check's view of the lease: expired
// LeaseDurationSeconds after the holder's renewTime. (A candidate judges
// by its own clock, later still: simulator.LeaderElector.)
func leaseExpired(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return !now.Before(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// checkLeader is the single-writer check: a write by p is allowed only
// while p holds an unexpired lease in the store.
func (in *Injector) checkLeader(p *process, req simulator.APIRequest) {
	var l coordinationv1.Lease
	if err := in.sim.ClientFor("lease-checker").Get(in.ctx, LeaseKey, &l); err != nil {
		in.violate("%s wrote %s %s/%s at %s with no lease in the store", p.Name, req.GVK.Kind, req.Namespace, req.Name, simulator.FormatElapsed(in.sim.Elapsed()))
		return
	}
	holder := ptr.Deref(l.Spec.HolderIdentity, "")
	if holder != p.Identity() || leaseExpired(&l, in.sim.Now()) {
		in.violate("two writers: %s wrote %s %s/%s at %s while the lease is held by %s (expired: %v)", p.Identity(), req.GVK.Kind,
			req.Namespace, req.Name, simulator.FormatElapsed(in.sim.Elapsed()), holder, leaseExpired(&l, in.sim.Now()))
	}
}

// leaseLost stalls the leader's network: every API call of its process
// times out for the fault's duration.
func (in *Injector) leaseLost(f Fault) {
	p := in.target()
	d := f.Dur("for")
	p.stallUntil = in.sim.Now().Add(d)
	in.record(f, d, fmt.Sprintf("%s's network stalls for %s: every API call it makes times out", p.Name, d))
}

// pause stops the leader's process for the fault's duration
// (Replica.PauseFor): nothing of it runs, and it resumes with its memory
// as it was.
func (in *Injector) pause(f Fault) {
	p := in.target()
	d := f.Dur("for")
	if !p.PauseFor(d) {
		in.record(f, 0, fmt.Sprintf("%s is down or already paused", p.Name))
		return
	}
	in.record(f, d, fmt.Sprintf("%s's process is stopped for %s: no reconcile, no lease renewal, no timer of it runs; it resumes with its memory as it was", p.Name, d))
	incarnation := p.Incarnation
	in.sim.Schedule(d, "resumed "+p.Name, func() {
		if p.Incarnation == incarnation && p.Alive {
			in.note(fmt.Sprintf("%s resumes; it last renewed the lease %s ago", p.Name, in.sim.Now().Sub(p.renewed).Round(time.Millisecond)))
			in.marker(p.Name + " resumes")
		}
	})
}
