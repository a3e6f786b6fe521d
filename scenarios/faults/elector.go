package faults

import (
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// Leader election as controller-runtime configures client-go's
// leaderelection package by default.
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
	// restartDelay is how long a replica that lost its lease is down
	// (controller-runtime exits the process; the kubelet restarts it).
	restartDelay = time.Second
)

var leaseKey = types.NamespacedName{Namespace: "upgrade-operator-system", Name: manager.DefaultLeaderElectionID}

// startElection adds the second replica (standing by) and starts both
// electors; replica 0, already running, takes the lease.
func (in *Injector) startElection() {
	p0 := in.procs[0]
	p1, err := in.newProcess(in.ctx, 1)
	if err != nil {
		in.violate("start the second replica: %v", err)
		return
	}
	r1 := *in.base
	r1.ForgetProcessState() // another process: none of replica 0's memory
	r1.Client = &opClient{Client: p1.writer, p: p1}
	p1.ctl = in.sim.AddController("applicationupgrade-1", &r1, simrun.OperatorWatches(in.sim)...)
	p1.ctl.Crash() // standing by until it holds the lease
	if p1.cache != nil {
		in.attachCache(p1)
	}
	in.acquire(p0)
	if !p0.leader {
		p0.ctl.Crash()
	}
	for i, p := range in.procs {
		p := p
		in.sim.Schedule(time.Duration(i)*time.Second+retryPeriod, "leader election "+p.name, func() { in.electorTick(p) })
	}
}

// electorTick is one retry period of p's elector: the leader renews (and
// gives up past the renew deadline), a candidate tries to acquire.
func (in *Injector) electorTick(p *process) {
	defer in.sim.Schedule(retryPeriod, "leader election "+p.name, func() { in.electorTick(p) })
	if !p.alive {
		return
	}
	if p.leader {
		if in.renew(p) {
			return
		}
		if in.sim.Now().Sub(p.lastRenew) >= renewDeadline {
			in.note(fmt.Sprintf("%s failed to renew the lease for %s: leader election lost, the process exits", p.name, renewDeadline))
			in.marker(p.name + " lost the lease")
			if in.zombieLeaders { // test knob: a process that keeps running without its lease
				p.leader = false
				return
			}
			in.kill(p)
			in.sim.Schedule(restartDelay, "restart "+p.name, func() { in.restart(p) })
		}
		return
	}
	in.acquire(p)
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

// renew updates the lease's renewTime if p still holds it.
func (in *Injector) renew(p *process) bool {
	var l coordinationv1.Lease
	if err := p.lease.Get(in.ctx, leaseKey, &l); err != nil || ptr.Deref(l.Spec.HolderIdentity, "") != p.identity() {
		return false
	}
	now := metav1.NewMicroTime(in.sim.Now())
	l.Spec.RenewTime = &now
	if err := p.lease.Update(in.ctx, &l); err != nil {
		return false
	}
	p.lastRenew = in.sim.Now()
	return true
}

// acquire takes the lease when it is free or expired; the new leader
// cold-starts its controller.
func (in *Injector) acquire(p *process) {
	var l coordinationv1.Lease
	now := metav1.NewMicroTime(in.sim.Now())
	spec := coordinationv1.LeaseSpec{HolderIdentity: ptr.To(p.identity()), LeaseDurationSeconds: ptr.To(int32(leaseDuration / time.Second)),
		AcquireTime: &now, RenewTime: &now}
	err := p.lease.Get(in.ctx, leaseKey, &l)
	switch {
	case apierrors.IsNotFound(err):
		l = coordinationv1.Lease{Spec: spec}
		l.Namespace, l.Name = leaseKey.Namespace, leaseKey.Name
		err = p.lease.Create(in.ctx, &l)
	case err != nil:
		return
	case !leaseExpired(&l, in.sim.Now()):
		return
	default:
		spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
		l.Spec = spec
		err = p.lease.Update(in.ctx, &l)
	}
	if err != nil {
		return
	}
	p.leader, p.lastRenew = true, in.sim.Now()
	if in.elected {
		in.note(fmt.Sprintf("%s acquired the lease and starts its controller with a cold cache", p.identity()))
		in.marker(p.name + " leads")
	}
	in.elected = true
	if p.ctl != nil && p.ctl.Crashed() {
		p.start(in.ctx)
	}
}

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
	if err := in.sim.ClientFor("lease-checker").Get(in.ctx, leaseKey, &l); err != nil {
		in.violate("%s wrote %s %s/%s at %s with no lease in the store", p.name, req.GVK.Kind, req.Namespace, req.Name, simulator.FormatElapsed(in.sim.Elapsed()))
		return
	}
	holder := ptr.Deref(l.Spec.HolderIdentity, "")
	if holder != p.identity() || leaseExpired(&l, in.sim.Now()) {
		in.violate("two writers: %s wrote %s %s/%s at %s while the lease is held by %s (expired: %v)", p.identity(), req.GVK.Kind,
			req.Namespace, req.Name, simulator.FormatElapsed(in.sim.Elapsed()), holder, leaseExpired(&l, in.sim.Now()))
	}
}

// leaseLost stalls the leader's network: every API call of its process
// times out for the fault's duration.
func (in *Injector) leaseLost(f Fault) {
	p := in.target()
	d := f.Dur("for")
	p.stallUntil = in.sim.Now().Add(d)
	in.record(f, d, fmt.Sprintf("%s's network stalls for %s: every API call it makes times out", p.identity(), d))
}
