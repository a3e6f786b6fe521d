package controller

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/kstatus"
)

// patchStatus records plan in u's status — phase, message, rolledOut, one
// entry per component (wave, phase, image, writtenGeneration, message),
// observedGeneration, phaseStartTime and the three conditions — with one
// optimistic-locked patch when anything changed, then emits the events of
// the phase changes. written holds the generation each image write of this
// pass produced, refused the refusedWrites count of each component whose
// write was refused for good, by component. Every message is made safe
// (appupgrade.SafeText: no control characters, at most MaxStatusMessage
// bytes).
func (r *ApplicationUpgradeReconciler) patchStatus(ctx context.Context, u *v1beta1.ApplicationUpgrade, g appupgrade.Graph, plan appupgrade.Plan, written map[string]int64, refused map[string]int32) error {
	// The status is built on a copy of its own; the whole object is copied
	// only when the status changed (most passes change nothing). The copy
	// leaves out the component entries, which componentStatuses replaces
	// with a new slice below.
	prev := u.Status
	prev.Components = nil
	st := prev.DeepCopy()
	st.Phase, st.Message, st.ObservedGeneration = plan.Phase, appupgrade.SafeText(plan.Message, MaxStatusMessage), u.Generation
	st.Components = componentStatuses(u.Status, g, plan, written, refused)
	st.RolledOut = v1beta1.RolledOut(st.Components)
	st.Workloads = v1beta1.Workloads(u.Spec.Components)
	now := metav1.NewTime(r.now())
	if st.PhaseStartTime == nil || phasesChanged(u.Status, *st) {
		st.PhaseStartTime = &now
	}
	reason := conditionReason(g, plan)
	setReadyCondition(st, reason, u.Generation, now)
	stalled := st.Phase == v1beta1.PhaseFailed || stalledByRevert(plan)
	setProgressingCondition(st, reason, u.Generation, now, stalled)
	setStalledCondition(st, reason, u.Generation, now, stalled)
	kstatus.SetReconciling(&st.Conditions)
	// reflect.DeepEqual first: strict equality implies the semantic one
	// and answers a pass that changed nothing without the semantic
	// comparison's allocations (its time comparisons box both values).
	if reflect.DeepEqual(&u.Status, st) || apiequality.Semantic.DeepEqual(&u.Status, st) {
		return nil
	}
	next := &v1beta1.ApplicationUpgrade{TypeMeta: u.TypeMeta, Status: *st}
	u.ObjectMeta.DeepCopyInto(&next.ObjectMeta)
	u.Spec.DeepCopyInto(&next.Spec)
	st = &next.Status
	patch, err := statusMergePatch(u, next)
	if err != nil {
		return err
	}
	sent := r.now()
	if err := r.Client.Status().Patch(ctx, next, patch); err != nil {
		return fmt.Errorf("patch status of applicationupgrade %s/%s: %w", u.Namespace, u.Name, err)
	}
	// next is kept as it is (only read from here on).
	r.ownStatuses().wrote(client.ObjectKeyFromObject(u), u.ResourceVersion, next)
	// Logged, with the component phases, when the patch was sent and the
	// resourceVersion it returned (the upgrade's), so a status write can be
	// attributed to the replica that made it (as "image written" is, with
	// the workload's resourceVersion): at info when the upgrade's or a
	// component's phase changed (a claim users read), else at V(1).
	logger := log.FromContext(ctx)
	if !phasesChanged(u.Status, next.Status) {
		logger = logger.V(1)
	}
	if logger.Enabled() {
		phases := make([]string, len(st.Components))
		for i, c := range st.Components {
			phases[i] = c.Name + "=" + string(c.Phase)
		}
		logger.Info("status written", "phase", string(st.Phase), "components", strings.Join(phases, ","),
			"resourceVersion", next.ResourceVersion, "sent", sent.UTC().Format(time.RFC3339Nano))
	}
	observeTransition(&u.Status, plan.Phase, now.Time)
	r.transitionEvents(u, g, plan, reason)
	return nil
}

// componentStatuses is the status entry of every component of plan: the
// image observed on its Deployment, or the image this pass wrote (then with
// the generation that write produced; otherwise the previously recorded
// writtenGeneration is kept). Components not observed in this pass (a
// terminal upgrade) keep their recorded image.
func componentStatuses(prev v1beta1.ApplicationUpgradeStatus, g appupgrade.Graph, plan appupgrade.Plan, written map[string]int64, refused map[string]int32) []v1beta1.ComponentStatus {
	out := make([]v1beta1.ComponentStatus, 0, len(plan.Components))
	for _, step := range plan.Components {
		before := prev.Component(step.Name)
		cs := v1beta1.ComponentStatus{Name: step.Name, Kind: kindOf(g.Upgrade, step.Name), Wave: step.Wave, Phase: step.Phase, Message: appupgrade.SafeText(step.Message, MaxStatusMessage),
			Image: before.Image, WrittenGeneration: before.WrittenGeneration}
		if n, ok := refused[step.Name]; ok {
			cs.RefusedWrites = n
		} else if step.Phase == v1beta1.ComponentUpgrading || step.Phase == v1beta1.ComponentFailed {
			// Kept while retrying, and on the Failed component it made
			// Failed (a Failed upgrade is still observed: RolloutRecovered).
			cs.RefusedWrites = before.RefusedWrites
		}
		for _, c := range g.Components {
			if c.Spec.Name == step.Name && (c.Deployment != nil || c.Workload != nil || c.ConfigError != nil) {
				cs.Image = appupgrade.SafeText(c.Image, 0)
			}
		}
		if gen, ok := written[step.Name]; ok {
			cs.WrittenGeneration = gen
			for _, w := range plan.Writes {
				if w.Component == step.Name {
					cs.Image = w.Image
				}
			}
		}
		cs.ShortImage = ShortImage(cs.Image)
		out = append(out, cs)
	}
	return out
}

// kindOf is the workload kind of component name in u's spec ("" when
// the spec has no such component).
func kindOf(u *v1beta1.ApplicationUpgrade, name string) v1beta1.WorkloadKind {
	for i := range u.Spec.Components {
		if c := &u.Spec.Components[i]; c.Name == name {
			return c.Kind()
		}
	}
	return ""
}

// MaxStatusMessage bounds every message the operator writes to status
// (metav1.Condition allows 32,768 bytes; the rest of the status shares
// the object's size limit).
const MaxStatusMessage = 4096

// phasesChanged reports whether the upgrade or any component changed phase.
func phasesChanged(prev, next v1beta1.ApplicationUpgradeStatus) bool {
	if prev.Phase != next.Phase || len(prev.Components) != len(next.Components) {
		return true
	}
	for _, c := range next.Components {
		if prev.Component(c.Name).Phase != c.Phase {
			return true
		}
	}
	return false
}

// transitionEvents emits the events users watch for: RolledOut per
// component reaching Rolled (RolloutRecovered too when it leaves Failed),
// Completed and Failed (image writes emit
// ImageWritten). A v1alpha1-shaped upgrade keeps v1alpha1's reasons (see
// legacyShape).
func (r *ApplicationUpgradeReconciler) transitionEvents(u *v1beta1.ApplicationUpgrade, g appupgrade.Graph, plan appupgrade.Plan, reason string) {
	for _, step := range plan.Components {
		workload := componentWorkload(g, step.Name)
		if step.Phase == v1beta1.ComponentReverted && u.Status.Component(step.Name).Phase != v1beta1.ComponentReverted {
			r.eventRelated(u, workload, corev1.EventTypeWarning, appupgrade.ReasonImageReverted, step.Name+": "+step.Message)
		}
		if step.Phase != v1beta1.ComponentRolled || u.Status.Component(step.Name).Phase == v1beta1.ComponentRolled {
			continue
		}
		if step.Reason == appupgrade.ReasonRecovered {
			r.eventRelated(u, workload, corev1.EventTypeNormal, appupgrade.ReasonRecovered, "Component "+step.Name+": "+step.Message)
		}
		if evReason, note := rolledOutEvent(u, g, plan, step.Name); evReason != "" {
			r.eventRelated(u, workload, corev1.EventTypeNormal, evReason, note)
		}
	}
	if appupgrade.WaitingReasons[reason] && readyReason(u) != reason {
		r.event(u, corev1.EventTypeWarning, reason, plan.Message)
	}
	if plan.Phase == u.Status.Phase {
		return
	}
	switch plan.Phase {
	case v1beta1.PhaseCompleted:
		r.event(u, corev1.EventTypeNormal, "Completed", plan.Message)
	case v1beta1.PhaseFailed:
		r.event(u, corev1.EventTypeWarning, "Failed", reason+": "+plan.Message)
	}
}

// componentWorkload is the observed workload of component name in g, the
// related object of that component's events (nil when not observed).
// client-go folds events of one regarding object, related object, reason
// and action into one series keeping the first note, so without it two
// components reaching Rolled within the series window showed as one
// RolledOut event naming only the first (32 components rolled out, 21
// RolledOut events: tenant trial, 2026-12-03).
func componentWorkload(g appupgrade.Graph, name string) runtime.Object {
	for _, c := range g.Components {
		if c.Spec.Name != name {
			continue
		}
		if o, ok := c.Workload.(client.Object); ok && o != nil {
			return o
		}
		if c.Deployment != nil {
			return c.Deployment
		}
	}
	return nil
}

// readyReason is the reason of u's recorded Ready condition, or "".
func readyReason(u *v1beta1.ApplicationUpgrade) string {
	if c := meta.FindStatusCondition(u.Status.Conditions, v1beta1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// rolledOutEvent is the reason and note of the event for component name
// reaching Rolled in plan; an empty reason means no event. The v1alpha1
// worker's note says the API is upgraded next only when plan has the API
// still to write or roll out (a worker rolled out again after a revert
// finds the API already Rolled).
func rolledOutEvent(u *v1beta1.ApplicationUpgrade, g appupgrade.Graph, plan appupgrade.Plan, name string) (string, string) {
	key := ""
	for _, c := range g.Components {
		if c.Spec.Name == name {
			key = c.WorkloadKey().String()
		}
	}
	if legacyShape(u) {
		if name != legacyWorker {
			return "", "" // v1alpha1 announced the API's rollout as Completed only
		}
		for _, step := range plan.Components {
			if step.Name == legacyAPI && step.Phase == v1beta1.ComponentRolled {
				return ReasonWorkerRolledOut, "Worker rolled out, every old worker pod gone; API " + apiKey(u) + " already rolled out at its target image"
			}
		}
		return ReasonWorkerRolledOut, "Worker rolled out, every old worker pod gone: upgrading API " + apiKey(u)
	}
	return ReasonComponentRolledOut, fmt.Sprintf("Component %s rolled out on %s, every old pod gone", name, key)
}

// ShortImage drops the registry and repository path of an image reference
// and abbreviates a digest to its algorithm and first 12 hex digits, as
// `docker images` shows image IDs:
//
//	"registry.example.com/team/job-worker:v2.0.0" → "job-worker:v2.0.0"
//	"registry.example.com/job-worker@sha256:0123…(64 hex)" → "job-worker@sha256:0123456789ab"
//	"job-worker:v2@sha256:0123…" → "job-worker:v2@sha256:0123456789ab"
//
// The full reference stays in status image.
func ShortImage(image string) string {
	ref, digest, hasDigest := strings.Cut(image, "@")
	if slash := strings.LastIndex(ref, "/"); slash >= 0 {
		ref = ref[slash+1:]
	}
	if !hasDigest {
		return ref
	}
	if alg, hex, ok := strings.Cut(digest, ":"); ok && len(hex) > shortDigest && strings.Trim(hex, "0123456789abcdef") == "" {
		digest = alg + ":" + hex[:shortDigest]
	}
	return ref + "@" + digest
}

// shortDigest is how many hex digits of a digest ShortImage keeps.
const shortDigest = 12

// conditionReason is the plan's reason, with v1alpha1's per-component
// rollout failure reasons for a v1alpha1-shaped upgrade.
func conditionReason(g appupgrade.Graph, plan appupgrade.Plan) string {
	if plan.Phase != v1beta1.PhaseFailed || plan.Reason != appupgrade.ReasonRolloutFailed || !legacyShape(g.Upgrade) {
		return plan.Reason
	}
	for _, c := range plan.Components {
		if c.Phase == v1beta1.ComponentFailed && c.Name == legacyAPI {
			return ReasonAPIRolloutFailed
		}
	}
	return ReasonWorkerRolloutFailed
}

// reasonOr is reason, or "Unknown" when empty (a condition needs one).
func reasonOr(reason string) string {
	if reason == "" {
		return "Unknown"
	}
	return reason
}

// setReadyCondition: Ready=True only when Completed (kstatus "Current").
func setReadyCondition(st *v1beta1.ApplicationUpgradeStatus, reason string, gen int64, now metav1.Time) {
	c := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: reasonOr(reason),
		Message: st.Message, ObservedGeneration: gen, LastTransitionTime: now}
	if st.Phase == v1beta1.PhaseCompleted {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// setProgressingCondition: Progressing=True while not terminal and not
// stalled.
func setProgressingCondition(st *v1beta1.ApplicationUpgradeStatus, reason string, gen int64, now metav1.Time, stalled bool) {
	c := metav1.Condition{Type: v1beta1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: reasonOr(reason),
		Message: st.Message, ObservedGeneration: gen, LastTransitionTime: now}
	if st.Phase.Terminal() || stalled {
		c.Status = metav1.ConditionFalse
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// setStalledCondition: Stalled=True when Failed, or when stalled by a
// revert (stalledByRevert) (kstatus "Failed").
func setStalledCondition(st *v1beta1.ApplicationUpgradeStatus, reason string, gen int64, now metav1.Time, stalled bool) {
	c := metav1.Condition{Type: v1beta1.ConditionStalled, Status: metav1.ConditionFalse, Reason: reasonOr(reason),
		Message: st.Message, ObservedGeneration: gen, LastTransitionTime: now}
	if stalled {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// stalledByRevert reports whether plan can move only when a person acts:
// a component is Reverted (its image taken back by a GitOps tool, Helm or
// a person, never written again: docs/gitops.md) and no component is
// being written or rolling out. Everything else then waits on the
// Reverted one; the upgrade is Stalled (kstatus Failed: a Flux health
// check fails at once instead of at its timeout, Argo CD says Degraded)
// until the template carries the target again.
func stalledByRevert(plan appupgrade.Plan) bool {
	reverted := false
	for _, c := range plan.Components {
		switch c.Phase {
		case v1beta1.ComponentUpgrading, v1beta1.ComponentRollingOut:
			return false
		case v1beta1.ComponentReverted:
			reverted = true
		}
	}
	return reverted
}
