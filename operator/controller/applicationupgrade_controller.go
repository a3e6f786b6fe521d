// Package controller holds the reconcilers: they read through a client,
// call the pure decision packages, perform the writes they decide and patch
// status once.
package controller

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// AssessFunc is the rollout assessment the reconciler uses; rollout.Assess
// in the product, a deliberately weakened policy in mutation tests.
type AssessFunc func(*appsv1.Deployment, []appsv1.ReplicaSet, []corev1.Pod, rollout.Options) rollout.Verdict

// DecideFunc is the decision the reconciler takes from the graph it
// observed; appupgrade.Decide in the product, a deliberately broken policy
// in mutation tests.
type DecideFunc func(appupgrade.Graph) appupgrade.Plan

// ApplicationUpgradeReconciler drives one v1beta1 ApplicationUpgrade (a
// v1alpha1 one arrives converted: a two-component graph) a pass at a time:
// get → observe every component → appupgrade.Decide → the plan's image
// writes → one status patch. Nothing that decides is kept between
// reconciles; the only in-process memory is the handoff metric's start times
// (readyMarks).
type ApplicationUpgradeReconciler struct {
	// Client reads (normally from the cache) and writes.
	Client client.Client
	// Clock stamps condition transition times and measures handoffs.
	Clock clock.PassiveClock
	// Recorder emits Kubernetes events on the ApplicationUpgrade; may be nil.
	Recorder events.EventRecorder
	// WatchNamespaces is the --watch-namespaces list; empty means all.
	WatchNamespaces []string
	// AssessOptions tune the rollout assessment.
	AssessOptions rollout.Options
	// AssessFunc defaults to rollout.Assess.
	AssessFunc AssessFunc
	// DecideFunc defaults to appupgrade.Decide.
	DecideFunc DecideFunc
}

// +kubebuilder:rbac:groups=upgrades.lunadas.dev,resources=applicationupgrades,verbs=get;list;watch
// +kubebuilder:rbac:groups=upgrades.lunadas.dev,resources=applicationupgrades/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile performs one pass of the upgrade named by req. Configuration
// errors become a Failed component (or upgrade); API errors are returned so
// controller-runtime backs off and retries. A failed image write still
// records the writes that succeeded before it in status, then returns.
func (r *ApplicationUpgradeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var u v1beta1.ApplicationUpgrade
	if err := r.Client.Get(ctx, req.NamespacedName, &u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if u.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	g, err := r.observeGraph(ctx, &u)
	if err != nil {
		return ctrl.Result{}, err
	}
	decide := r.DecideFunc
	if decide == nil {
		decide = appupgrade.Decide
	}
	plan := decide(g)
	r.markReady(&u, g, plan)
	written, werr := r.performWrites(ctx, &u, g, &plan)
	if werr != nil && len(written) == 0 {
		// Nothing changed: no status patch, whose watch event would retry at
		// once and defeat the workqueue's back-off.
		return ctrl.Result{}, werr
	}
	if err := r.patchStatus(ctx, &u, g, plan, written); err != nil {
		if werr == nil && apierrors.IsConflict(err) {
			// The upgrade changed since it was read (routine: its own
			// previous status patch had not reached the cache yet). Retry
			// with back-off, quietly: "Reconciler error" is for real faults.
			log.FromContext(ctx).V(1).Info("applicationupgrade changed since it was read; retrying", "error", err.Error())
			return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // rate-limited requeue, honoured by controller-runtime
		}
		return ctrl.Result{}, errors.Join(werr, err)
	}
	return ctrl.Result{}, werr
}

// performWrites performs plan's writes in order and stops at the first
// failure: the components whose write did not happen go back to Upgrading
// in plan (so status does not claim a rollout that was never started).
// It returns the Deployment generation each successful write produced, by
// component, and the first error.
func (r *ApplicationUpgradeReconciler) performWrites(ctx context.Context, u *v1beta1.ApplicationUpgrade, g appupgrade.Graph, plan *appupgrade.Plan) (map[string]int64, error) {
	written := map[string]int64{}
	var failed error
	for _, w := range plan.Writes {
		if failed == nil {
			gen, err := r.writeImage(ctx, g, w)
			if err == nil {
				written[w.Component] = gen
				continue
			}
			failed = err
		}
		// Not written: the component stays as recorded (Upgrading), so the
		// status changes only by the writes that succeeded.
		for i := range plan.Components {
			if c := &plan.Components[i]; c.Name == w.Component {
				c.Phase, c.Message = v1beta1.ComponentUpgrading, u.Status.Component(w.Component).Message
			}
		}
	}
	return written, failed
}

func (r *ApplicationUpgradeReconciler) event(u *v1beta1.ApplicationUpgrade, eventType, reason, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(u, nil, eventType, reason, "Reconcile", "%s", note)
	}
}

func (r *ApplicationUpgradeReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}
