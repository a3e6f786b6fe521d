// Package controller is the platform Upgrade controller: it reconciles the
// singleton `system` Upgrade (upgrade.starlingx.io/v1alpha1) by driving the
// StarlingX VIM's sw-deploy (sw-upgrade) and kube-upgrade strategies one
// step at a time. Each reconcile: get the Upgrade → observe the live system
// through the VIM client → deploy.Next (pure) → at most one VIM write →
// one status patch → the decision's events.
package controller

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/leader"
	"github.com/lunadas/upgrade-operator/operator/platform/deploy"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// Default intervals.
const (
	DefaultPollInterval     = 30 * time.Second
	DefaultIdlePollInterval = 5 * time.Minute
	DefaultSoonInterval     = 2 * time.Second
)

// UpgradeReconciler reconciles the `system` Upgrade. It keeps nothing
// between reconciles: the step to run is derived from the live system
// every time (see package deploy).
type UpgradeReconciler struct {
	// Client reads and writes Upgrades (normally through the cache).
	Client client.Client
	// VIM is the StarlingX system: *vim.HTTPClient, or a model in tests.
	VIM vim.Client
	// Clock stamps start times, durations and conditions.
	Clock clock.PassiveClock
	// Recorder emits the Kubernetes events; may be nil.
	Recorder events.EventRecorder
	// PollInterval is how often a running strategy is polled.
	PollInterval time.Duration
	// IdlePollInterval is how often an idle system is observed again.
	IdlePollInterval time.Duration
	// SoonInterval is the pause after a write before looking again (at
	// most PollInterval).
	SoonInterval time.Duration
	// MaxBuildRetries bounds automatic retries of a failed build per step.
	MaxBuildRetries int
	// LeaseHeld, when set (leader election on: manager.LeaseGuard.Held),
	// is asked after the observation, before the pass's VIM action and its
	// status patch; an error stops the pass with neither (retried after
	// leader.Retry): a replica paused past its renew deadline must not
	// create, apply, abort or delete a strategy on a Lease another replica
	// may hold. nil: no leader election.
	LeaseHeld func() error
}

// +kubebuilder:rbac:groups=upgrade.starlingx.io,resources=upgrades,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=upgrade.starlingx.io,resources=upgrades/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile performs one decision for the `system` Upgrade; other names
// are ignored (the webhook refuses them).
func (r *UpgradeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != v1alpha1.SystemName || req.Namespace != "" {
		return ctrl.Result{}, nil
	}
	var u v1alpha1.Upgrade
	if err := r.Client.Get(ctx, req.NamespacedName, &u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	live, err := Observe(ctx, r.VIM)
	if err != nil {
		return r.unobserved(ctx, &u, "observe the system", err)
	}
	d := deploy.Next(deploy.Input{Upgrade: &u, Live: live, Now: r.now(), MaxBuildRetries: r.MaxBuildRetries})
	logger := log.FromContext(ctx)
	if err := leader.Check(ctx, r.LeaseHeld); err != nil {
		return ctrl.Result{RequeueAfter: leader.Retry}, nil
	}
	if d.Action.Kind != deploy.ActNone {
		if err := act(ctx, r.VIM, d.Action); err != nil {
			if d.Action.Kind == deploy.ActAbort && vim.IsBadRequest(err) {
				d = deploy.AbortRefused(&u, d, err, r.now())
				logger.Info("the VIM refused the abort; asking again at the next poll", "error", err.Error())
				if err := r.patchStatus(ctx, &u, d.Status); err != nil {
					return ctrl.Result{}, err
				}
				r.emit(&u, d.Events)
				return ctrl.Result{RequeueAfter: r.interval(d.Requeue)}, nil
			}
			if vim.IsConflict(err) || vim.IsNotFound(err) {
				logger.Info("the system changed under the action; observing again", "action", d.Action.String(), "error", err.Error())
				return ctrl.Result{RequeueAfter: r.interval(deploy.RequeueSoon)}, nil
			}
			return r.unobserved(ctx, &u, d.Action.String(), err)
		}
		logger.Info("vim action done", "action", d.Action.String(), "phase", d.Phase, "message", d.Message)
	}
	if err := r.patchStatus(ctx, &u, d.Status); err != nil {
		return ctrl.Result{}, err
	}
	r.emit(&u, d.Events)
	return ctrl.Result{RequeueAfter: r.interval(d.Requeue)}, nil
}

// unobserved records a failed observation or action in the conditions:
// transient failures are polled again at the normal interval, others are
// returned for controller-runtime's back-off.
func (r *UpgradeReconciler) unobserved(ctx context.Context, u *v1alpha1.Upgrade, what string, err error) (ctrl.Result, error) {
	if lerr := leader.Check(ctx, r.LeaseHeld); lerr != nil {
		return ctrl.Result{RequeueAfter: leader.Retry}, nil
	}
	transient := vim.IsUnavailable(err) || errors.Is(err, context.DeadlineExceeded)
	st, _ := deploy.Unobserved(u, transient, what, err, r.now())
	if perr := r.patchStatus(ctx, u, st); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	if transient {
		log.FromContext(ctx).Info("the system is unavailable; polling again", "what", what, "error", err.Error())
		return ctrl.Result{RequeueAfter: r.interval(deploy.RequeueActive)}, nil
	}
	return ctrl.Result{}, err
}

func (r *UpgradeReconciler) interval(q deploy.Requeue) time.Duration {
	pick := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	poll := pick(r.PollInterval, DefaultPollInterval)
	switch q {
	case deploy.RequeueSoon:
		return min(pick(r.SoonInterval, DefaultSoonInterval), poll)
	case deploy.RequeueActive:
		return poll
	}
	return max(pick(r.IdlePollInterval, DefaultIdlePollInterval), poll)
}

func (r *UpgradeReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}
