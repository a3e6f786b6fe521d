// Package controller holds the reconcilers: they read through a client,
// call the pure decision packages, perform the writes they decide and patch
// status once.
package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/leader"
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
// (readyMarks) and the back-off after a failed write (writeHolds).
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
	// AssessStatefulSetFunc defaults to rollout.AssessStatefulSet.
	AssessStatefulSetFunc StatefulSetAssessFunc
	// AssessDaemonSetFunc defaults to rollout.AssessDaemonSet.
	AssessDaemonSetFunc DaemonSetAssessFunc
	// DecideFunc defaults to appupgrade.Decide.
	DecideFunc DecideFunc
	// LeaseHeld, when set (leader election on: manager.LeaseGuard.Held),
	// is asked before a pass's writes — image writes and the status patch
	// — and an error stops the pass without writing: a leader that was
	// paused past its renew deadline must not act on a Lease another
	// replica may hold. nil: no leader election, every write allowed.
	LeaseHeld func() error
	// AllowCrossNamespaceRefs lets a component's Deployment be in another
	// namespace than its upgrade (--allow-cross-namespace-refs); off, such
	// a component fails before its Deployment is read.
	AllowCrossNamespaceRefs bool
	// DefaultServiceAccount is impersonated (in the upgrade's namespace)
	// for upgrades without spec.serviceAccountName
	// (--default-service-account); empty: the operator's own identity.
	DefaultServiceAccount string
	// Impersonate builds the clients for ServiceAccounts; nil refuses
	// upgrades that need one (see deploymentClient).
	Impersonate ImpersonateFunc

	// state is the back-off after a failed image write or status patch
	// (writeHolds) and the last status patches not yet in the cache
	// (ownStatuses).
	state *processState
}

// +kubebuilder:rbac:groups=upgrades.lunadas.dev,resources=applicationupgrades,verbs=get;list;watch
// +kubebuilder:rbac:groups=upgrades.lunadas.dev,resources=applicationupgrades/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate

// Reconcile performs one pass of the upgrade named by req. Configuration
// errors become a Failed component (or upgrade); API errors are returned so
// controller-runtime backs off and retries. A failed image write still
// records the writes that succeeded before it in status, then returns.
//
// A pass after which a component is Upgrading (its dependencies were just
// recorded rolled out; Decide writes its image only in a later pass, from a
// new observation) is followed at once by that later pass, in the same
// Reconcile: it reads the upgrade as patched (ownStatuses) and observes the
// workloads again from the cache, exactly as any pass does. Neither the
// watch event of the first pass's status patch nor a turn in the workqueue
// (behind every other upgrade's events under load) stands between the
// last old pod's deletion and the dependent's image write. Should the
// second pass leave a component Upgrading too, the third is asked for at
// once (AgainAt).
func (r *ApplicationUpgradeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, again, err := r.reconcilePass(ctx, req)
	if again && err == nil && res.IsZero() {
		res, again, err = r.reconcilePass(ctx, req)
	}
	if again && err == nil && res.IsZero() {
		res.RequeueAfter = AgainAt
	}
	return res, err
}

// AgainAt is the RequeueAfter of a pass that asks for the next one at once:
// controller-runtime puts a request with a positive RequeueAfter back in
// its queue after that delay without counting a failure (a zero one with
// Requeue would go through the per-item back-off, 5 ms first).
const AgainAt = time.Nanosecond

// reconcilePass is one pass of Reconcile; again reports that the pass ended
// with every write and its status patch done and a component Upgrading.
func (r *ApplicationUpgradeReconciler) reconcilePass(ctx context.Context, req ctrl.Request) (_ ctrl.Result, again bool, _ error) {
	// The upgrade is the cache's object, not a copy (as the workloads and
	// lists of observe): a pass reads it, builds its status patch on a
	// copy (patchStatus) and replaces it whole with its own newer status
	// (ownStatuses.newest), never changing what it shares with the cache;
	// the simulator checks that (simulator.CheckSharedReads).
	var u v1beta1.ApplicationUpgrade
	if err := r.Client.Get(ctx, req.NamespacedName, &u, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			r.writeHolds().clear(req.NamespacedName)
			r.ownStatuses().forget(req.NamespacedName)
		}
		return ctrl.Result{}, false, client.IgnoreNotFound(err)
	}
	r.ownStatuses().newest(req.NamespacedName, &u)
	if u.DeletionTimestamp != nil {
		r.writeHolds().clear(req.NamespacedName)
		r.ownStatuses().forget(req.NamespacedName)
		return ctrl.Result{}, false, nil
	}
	if wait := r.writeHolds().wait(req.NamespacedName, u.Generation, r.now()); wait > 0 {
		// Woken by a watch event during the back-off of a failed write.
		return ctrl.Result{RequeueAfter: wait}, false, nil
	}
	g, err := r.observeGraph(ctx, &u)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	decide := r.DecideFunc
	if decide == nil {
		decide = appupgrade.Decide
	}
	plan := decide(g)
	r.markReady(&u, g, plan)
	if err := r.leaseHeld(ctx); err != nil {
		return ctrl.Result{RequeueAfter: LeaseRetry}, false, nil
	}
	res := r.performWrites(ctx, &u, g, &plan)
	var backoff time.Duration
	if res.err != nil {
		backoff = r.writeHolds().failed(req.NamespacedName, u.Generation, r.now())
	}
	if res.err != nil && len(res.written) == 0 && len(res.refused) == 0 {
		// Nothing changed: no status patch, whose watch event would retry at
		// once and defeat the workqueue's back-off.
		r0, err := quietOnConflict(ctx, res.err, backoff)
		return r0, false, err
	}
	if err := r.leaseHeld(ctx); err != nil {
		return ctrl.Result{RequeueAfter: LeaseRetry}, false, nil
	}
	if err := r.patchStatus(ctx, &u, g, plan, res.written, res.refused); err != nil {
		if res.err == nil && deletedMeanwhile(err, &u) {
			// Deleted during the pass: its deletion's watch event ends
			// the upgrade's state here (the next pass finds it gone);
			// nothing to retry, and no "Reconciler error".
			log.FromContext(ctx).V(1).Info("applicationupgrade deleted during the pass; status not written", "error", err.Error())
			return ctrl.Result{}, false, nil
		}
		if res.err == nil {
			backoff = r.writeHolds().failed(req.NamespacedName, u.Generation, r.now())
		}
		if res.err == nil && apierrors.IsConflict(err) {
			// The upgrade changed since it was read (routine: its own
			// previous status patch had not reached the cache yet). Retry
			// after the back-off, quietly: "Reconciler error" is for real
			// faults.
			log.FromContext(ctx).V(1).Info("applicationupgrade changed since it was read; retrying", "error", err.Error(), "after", backoff.String())
			return ctrl.Result{RequeueAfter: backoff}, false, nil
		}
		return ctrl.Result{}, false, errors.Join(res.err, err)
	}
	if res.err == nil {
		r.writeHolds().clear(req.NamespacedName) // every write of the pass and its status patch succeeded
	}
	if res.gaveUp {
		return ctrl.Result{}, false, nil // Failed: nothing to retry
	}
	if res.err == nil && plan.Has(v1beta1.ComponentUpgrading) {
		return ctrl.Result{}, true, nil
	}
	r0, err := quietOnConflict(ctx, res.err, backoff)
	return r0, false, err
}

// deletedMeanwhile reports whether err, a status patch's, is the API
// server's 404 for u itself: the object was deleted since it was read
// (its details name it). A 404 without those details, such as a CRD
// served without the status subresource, is not.
func deletedMeanwhile(err error, u *v1beta1.ApplicationUpgrade) bool {
	var st apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &st) {
		return false
	}
	d := st.Status().Details
	return d != nil && d.Name == u.Name
}

// LeaseRetry is when a pass stopped by LeaseHeld is tried again (leader.Retry).
const LeaseRetry = leader.Retry

// leaseHeld is LeaseHeld's verdict, logged when it stops a pass.
func (r *ApplicationUpgradeReconciler) leaseHeld(ctx context.Context) error {
	return leader.Check(ctx, r.LeaseHeld)
}

// quietOnConflict returns err for controller-runtime's back-off, except a
// 409 Conflict of an image write (the workload changed since the
// reconcile read it: routine right after a tool or a person wrote it):
// that is retried after backoff (the write hold's, which a watch event
// does not shorten), logged at V(1) rather than as a "Reconciler error",
// which is for real faults.
func quietOnConflict(ctx context.Context, err error, backoff time.Duration) (ctrl.Result, error) {
	if err != nil && apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("a workload changed since it was read; retrying", "error", err.Error(), "after", backoff.String())
		return ctrl.Result{RequeueAfter: backoff}, nil
	}
	return ctrl.Result{}, err
}

// writeResult is what performWrites did: the Deployment generation each
// successful write produced and the refusedWrites count of each component
// whose write the API server refused for good, by component; gaveUp when
// a component reached MaxRefusedWrites; err is the first write error.
type writeResult struct {
	written map[string]int64
	refused map[string]int32
	gaveUp  bool
	err     error
}

// performWrites performs plan's writes in order and stops at the first
// failure: the components whose write did not happen go back to Upgrading
// in plan (so status does not claim a rollout that was never started). A
// write refused with a non-retryable error (TerminalWriteError) counts
// against the component; the MaxRefusedWrites-th makes it Failed with the
// API server's message and a Warning event.
func (r *ApplicationUpgradeReconciler) performWrites(ctx context.Context, u *v1beta1.ApplicationUpgrade, g appupgrade.Graph, plan *appupgrade.Plan) writeResult {
	res := writeResult{written: map[string]int64{}, refused: map[string]int32{}}
	for _, w := range plan.Writes {
		if res.err == nil {
			gen, err := r.writeImage(ctx, g, w)
			if err == nil {
				res.written[w.Component] = gen
				continue
			}
			res.err = err
			if TerminalWriteError(err) {
				n := u.Status.Component(w.Component).RefusedWrites + 1
				res.refused[w.Component] = n
				msg := appupgrade.SafeText(APIMessage(err), 2048)
				if n >= MaxRefusedWrites {
					note := fmt.Sprintf("Image write of component %s to %s refused %d times: %s", w.Component, w.Workload, n, msg)
					plan.FailComponent(w.Component, ReasonWriteRefused, note)
					r.event(u, corev1.EventTypeWarning, ReasonWriteRefused, note)
					res.gaveUp = true
					continue
				}
				setComponent(plan, w.Component, v1beta1.ComponentUpgrading,
					fmt.Sprintf("Image write refused (attempt %d of %d), retrying: %s", n, MaxRefusedWrites, msg))
				continue
			}
		}
		// Not written: the component stays as recorded (Upgrading), so the
		// status changes only by the writes that succeeded.
		setComponent(plan, w.Component, v1beta1.ComponentUpgrading, u.Status.Component(w.Component).Message)
	}
	return res
}

func setComponent(plan *appupgrade.Plan, name string, phase v1beta1.ComponentPhase, msg string) {
	for i := range plan.Components {
		if c := &plan.Components[i]; c.Name == name {
			c.Phase, c.Message = phase, msg
		}
	}
}

// MaxEventNote is the events.k8s.io/v1 note limit (1 kB: k8s.io/kubernetes
// pkg/apis/events/validation NoteLengthLimit); longer notes make the
// API server refuse the event.
const MaxEventNote = 1024

func (r *ApplicationUpgradeReconciler) event(u *v1beta1.ApplicationUpgrade, eventType, reason, note string) {
	r.eventRelated(u, nil, eventType, reason, note)
}

// eventRelated records an event regarding u and related to obj (may be
// nil), its note made safe (appupgrade.SafeText, MaxEventNote). The
// related object is part of client-go's event series key
// (k8s.io/client-go/tools/events getKey: action, reason, reporting
// controller, regarding, related — not the note), so two image writes of
// one pass, to two Deployments, are two events rather than one series
// naming only the first Deployment.
func (r *ApplicationUpgradeReconciler) eventRelated(u *v1beta1.ApplicationUpgrade, obj runtime.Object, eventType, reason, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(u, obj, eventType, reason, "Reconcile", "%s", appupgrade.SafeText(note, MaxEventNote))
	}
}

func (r *ApplicationUpgradeReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}
