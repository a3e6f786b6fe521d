// Package controller holds the reconcilers: they read through a client,
// call the pure decision packages, perform at most one write and patch
// status once.
package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// AssessFunc is the rollout assessment the reconciler uses; rollout.Assess
// in the product, a deliberately weakened policy in mutation tests.
type AssessFunc func(*appsv1.Deployment, []appsv1.ReplicaSet, []corev1.Pod, rollout.Options) rollout.Verdict

// DecideFunc is the decision the reconciler takes from what it observed;
// appupgrade.Next in the product, a deliberately broken transition policy
// in mutation tests.
type DecideFunc func(appupgrade.State) appupgrade.Step

// ApplicationUpgradeReconciler drives one ApplicationUpgrade a step at a
// time: get → observe both Deployments → appupgrade.Next → at most one image
// write → one status patch. Nothing is kept between reconciles.
type ApplicationUpgradeReconciler struct {
	// Client reads (normally from the cache) and writes.
	Client client.Client
	// Clock stamps condition transition times.
	Clock clock.PassiveClock
	// Recorder emits Kubernetes events on the ApplicationUpgrade; may be nil.
	Recorder events.EventRecorder
	// WatchNamespaces is the --watch-namespaces list; empty means all.
	WatchNamespaces []string
	// AssessOptions tune the rollout assessment.
	AssessOptions rollout.Options
	// AssessFunc defaults to rollout.Assess.
	AssessFunc AssessFunc
	// DecideFunc defaults to appupgrade.Next.
	DecideFunc DecideFunc
}

// +kubebuilder:rbac:groups=upgrades.lunadas.dev,resources=applicationupgrades,verbs=get;list;watch
// +kubebuilder:rbac:groups=upgrades.lunadas.dev,resources=applicationupgrades/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile performs one step of the upgrade named by req. Configuration
// errors become a terminal Failed phase; API errors are returned so
// controller-runtime backs off and retries.
func (r *ApplicationUpgradeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var u upgradesv1alpha1.ApplicationUpgrade
	if err := r.Client.Get(ctx, req.NamespacedName, &u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if u.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	state, err := r.observeAll(ctx, &u)
	if err != nil {
		return ctrl.Result{}, err
	}
	decide := r.DecideFunc
	if decide == nil {
		decide = appupgrade.Next
	}
	step := decide(state)
	var writtenGen int64
	if step.Write != nil {
		if writtenGen, err = r.writeImage(ctx, state, step.Write); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, r.patchStatus(ctx, &u, state, step, writtenGen)
}

func (r *ApplicationUpgradeReconciler) observeAll(ctx context.Context, u *upgradesv1alpha1.ApplicationUpgrade) (appupgrade.State, error) {
	s := appupgrade.State{Upgrade: u}
	if u.Status.Phase.Terminal() && u.Generation == u.Status.ObservedGeneration {
		return s, nil // nothing to observe: Next keeps a terminal phase
	}
	var err error
	if s.Worker, err = r.observe(ctx, u, appupgrade.Worker, u.Spec.Worker); err != nil {
		return s, err
	}
	if s.API, err = r.observe(ctx, u, appupgrade.API, u.Spec.API); err != nil {
		return s, err
	}
	s.ClaimedBy, err = r.claimedBy(ctx, u)
	return s, err
}

// writeImage patches one container image with an optimistic lock on the
// resourceVersion that was observed, so a decision taken on a stale read
// fails with Conflict instead of writing twice. It returns the
// Deployment's generation after the write.
func (r *ApplicationUpgradeReconciler) writeImage(ctx context.Context, s appupgrade.State, w *appupgrade.ImageWrite) (int64, error) {
	obs := s.Worker
	if w.Component == appupgrade.API {
		obs = s.API
	}
	d := obs.Deployment
	patched := d.DeepCopy()
	for i := range patched.Spec.Template.Spec.Containers {
		if patched.Spec.Template.Spec.Containers[i].Name == w.Container {
			patched.Spec.Template.Spec.Containers[i].Image = w.Image
		}
	}
	if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(d, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("deployment changed since it was read; retrying", "deployment", w.Deployment)
		}
		return 0, fmt.Errorf("set image of container %q in deployment %s to %s: %w", w.Container, w.Deployment, w.Image, err)
	}
	log.FromContext(ctx).Info("image written", "component", w.Component, "deployment", w.Deployment, "image", w.Image)
	observeWrite(w.Component, &s.Upgrade.Status, r.now())
	r.event(s.Upgrade, corev1.EventTypeNormal, writeReason(w), fmt.Sprintf("Set %s image to %s on deployment %s", w.Component, w.Image, w.Deployment))
	return patched.Generation, nil
}

func writeReason(w *appupgrade.ImageWrite) string {
	if w.Component == appupgrade.API {
		return appupgrade.ReasonAPIPatched
	}
	return appupgrade.ReasonWorkerPatched
}

func (r *ApplicationUpgradeReconciler) event(u *upgradesv1alpha1.ApplicationUpgrade, eventType, reason, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(u, nil, eventType, reason, "Reconcile", "%s", note)
	}
}
