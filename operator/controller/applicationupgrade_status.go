package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// patchStatus records step in u's status (phase, message, observed images,
// observedGeneration, conditions) with one optimistic-locked patch, when
// anything changed, and emits the transition's event.
func (r *ApplicationUpgradeReconciler) patchStatus(ctx context.Context, u *upgradesv1alpha1.ApplicationUpgrade, s appupgrade.State, step appupgrade.Step, writtenGen int64) error {
	next := u.DeepCopy()
	st := &next.Status
	st.Phase, st.Message, st.ObservedGeneration = step.Phase, step.Message, u.Generation
	if s.Worker.Name != "" {
		st.Worker = componentStatus(s.Worker, step.Write, u.Status.Worker.WrittenGeneration, writtenGen)
		st.API = componentStatus(s.API, step.Write, u.Status.API.WrittenGeneration, writtenGen)
	}
	now := metav1.NewTime(r.now())
	if step.Phase != u.Status.Phase || st.PhaseStartTime == nil {
		st.PhaseStartTime = &now
	}
	setReadyCondition(st, step, u.Generation, now)
	setProgressingCondition(st, step, u.Generation, now)
	setStalledCondition(st, step, u.Generation, now)
	if apiequality.Semantic.DeepEqual(u.Status, next.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, next, client.MergeFromWithOptions(u, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patch status of applicationupgrade %s/%s: %w", u.Namespace, u.Name, err)
	}
	if step.Phase != u.Status.Phase {
		observeTransition(&u.Status, step.Phase, now.Time)
		r.transitionEvent(u, step)
	}
	return nil
}

func (r *ApplicationUpgradeReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// transitionEvent emits the events users watch for: WorkerRolledOut,
// Completed and Failed (image writes emit WorkerPatched / APIPatched).
func (r *ApplicationUpgradeReconciler) transitionEvent(u *upgradesv1alpha1.ApplicationUpgrade, step appupgrade.Step) {
	switch step.Phase {
	case upgradesv1alpha1.PhaseUpgradingAPI:
		if step.Reason == appupgrade.ReasonWorkerRolledOut {
			r.event(u, corev1.EventTypeNormal, appupgrade.ReasonWorkerRolledOut, step.Message)
		}
	case upgradesv1alpha1.PhaseCompleted:
		r.event(u, corev1.EventTypeNormal, "Completed", step.Message)
	case upgradesv1alpha1.PhaseFailed:
		r.event(u, corev1.EventTypeWarning, "Failed", step.Reason+": "+step.Message)
	}
}

// componentStatus is the image observed on the Deployment, or the image
// this very step writes to it (then with the generation that write
// produced; otherwise the previously recorded one is kept).
func componentStatus(o appupgrade.Observed, w *appupgrade.ImageWrite, prevGen, writtenGen int64) upgradesv1alpha1.ComponentStatus {
	img, gen := o.Image, prevGen
	if w != nil && w.Component == o.Name {
		img, gen = w.Image, writtenGen
	}
	return upgradesv1alpha1.ComponentStatus{Image: img, ShortImage: ShortImage(img), WrittenGeneration: gen}
}

// ShortImage drops the registry and repository path of an image reference:
// "registry.example.com/team/job-worker:v2.0.0" → "job-worker:v2.0.0".
// Digests are kept ("job-worker@sha256:…").
func ShortImage(image string) string {
	ref := image
	if at := strings.Index(ref, "@"); at >= 0 {
		if slash := strings.LastIndex(ref[:at], "/"); slash >= 0 {
			return ref[slash+1:]
		}
		return ref
	}
	if slash := strings.LastIndex(ref, "/"); slash >= 0 {
		return ref[slash+1:]
	}
	return ref
}

// setReadyCondition: Ready=True only when Completed (kstatus "Current").
func setReadyCondition(st *upgradesv1alpha1.ApplicationUpgradeStatus, step appupgrade.Step, gen int64, now metav1.Time) {
	c := metav1.Condition{Type: upgradesv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: step.Reason,
		Message: step.Message, ObservedGeneration: gen, LastTransitionTime: now}
	if step.Phase == upgradesv1alpha1.PhaseCompleted {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// setProgressingCondition: Progressing=True while not terminal.
func setProgressingCondition(st *upgradesv1alpha1.ApplicationUpgradeStatus, step appupgrade.Step, gen int64, now metav1.Time) {
	c := metav1.Condition{Type: upgradesv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: step.Reason,
		Message: step.Message, ObservedGeneration: gen, LastTransitionTime: now}
	if step.Phase.Terminal() {
		c.Status = metav1.ConditionFalse
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// setStalledCondition: Stalled=True when Failed (kstatus "Failed").
func setStalledCondition(st *upgradesv1alpha1.ApplicationUpgradeStatus, step appupgrade.Step, gen int64, now metav1.Time) {
	c := metav1.Condition{Type: upgradesv1alpha1.ConditionStalled, Status: metav1.ConditionFalse, Reason: step.Reason,
		Message: step.Message, ObservedGeneration: gen, LastTransitionTime: now}
	if step.Phase == upgradesv1alpha1.PhaseFailed {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, c)
}
