package cluster

import (
	"context"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// Inject implements Cluster: the API faults act at the operator's
// recording client as in the simulator (inject); a crash now is a restart
// of the operator; the cluster actors (scale, edit, respec, delete,
// gitops-revert, node-lost: faults.LiveActors, make simulate's code) act
// on the API server with clients of their own, on real timers; and
// webhook-down makes the harness's validating webhook (in this process)
// unreachable for the scenario's namespace. What a
// real cluster cannot produce on demand is refused in one line.
func (r *Real) Inject(ctx context.Context, f faults.Fault) error {
	if r.OutOfProcess() {
		switch f.Kind {
		case faults.Conflict, faults.Unavailable, faults.Timeout, faults.AmbiguousW:
			return refuse(BackendReal, f, "it acts at the in-process operator's recording client; the operator's binary (-real.operator=process) has none: tag the scenario @in-process")
		}
	}
	return inject(r.faults, f, func(f faults.Fault) error { return r.injectOwn(ctx, f) })
}

func (r *Real) injectOwn(ctx context.Context, f faults.Fault) error {
	switch f.Kind {
	case faults.Crash:
		switch {
		case f.Call > 0 || f.Float("p") > 0:
			return refuse(BackendReal, f, "the in-process manager cannot be killed inside its own API call; crash@0s restarts it between steps")
		case f.At > 0:
			return refuse(BackendReal, f, "a step's fault fires at once (@0s) on a real cluster: nothing schedules it later")
		case f.Str("down") != "2s":
			return refuse(BackendReal, f, "down is the simulator's: a new manager starts as soon as the old one has stopped")
		}
		if err := r.RestartOperator(ctx); err != nil {
			return err
		}
		r.faults.Record(f, 0, "the operator's manager stopped and a new one started with a cold cache")
		return nil
	case faults.LeaseLost:
		if r.OutOfProcess() {
			return r.freezeLeader(ctx, f)
		}
		return refuse(BackendReal, f, "the in-process manager is one replica; two run under leader election only out of process (-real.operator=process, tag @process)")
	case faults.Pause:
		return refuse(BackendReal, f, "on a real cluster lease-lost is already the leader process's SIGSTOP (out of process, @process): use the step \"the leader's network stalls for N seconds\"")
	case faults.KCMLag:
		return refuse(BackendReal, f, "the watches of the real kube-controller-manager cannot be delayed from outside")
	case faults.Stale, faults.Drop:
		return refuse(BackendReal, f, StaleDropRealRefusal)
	}
	if faults.Implements(f.Kind) {
		return r.actors.Inject(f)
	}
	return refuseInFeatures(BackendReal, f)
}

// StaleDropRealRefusal is why the real backend refuses stale and drop:
// the operator's informers there are controller-runtime's, fed by
// kube-apiserver's watches with no model in between (the simulator
// backend runs them through faults.Cache, as make simulate does).
const StaleDropRealRefusal = "it lags or cuts the operator's informers, which on a real cluster are controller-runtime's cache fed by kube-apiserver's watches with no model in between to hold back; the simulator backend injects it (a scenario without @real)"

// Fired implements Cluster.
func (r *Real) Fired() []faults.Fired { return r.faults.Fired() }

// Violations implements Cluster.
func (r *Real) Violations() []string { return r.actors.Violations() }
