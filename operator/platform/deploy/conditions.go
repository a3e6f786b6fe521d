package deploy

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// SetReadyCondition: Ready is True when the system runs spec.release with
// nothing left in progress (PhaseIdle), Unknown when the system could not
// be observed, else False.
func SetReadyCondition(st *v1alpha1.UpgradeStatus, p Phase, reason, msg string, gen int64, now time.Time) {
	status := metav1.ConditionFalse
	switch p {
	case PhaseIdle:
		status = metav1.ConditionTrue
	case PhaseUnavailable, PhaseVIMError:
		status = metav1.ConditionUnknown
	}
	set(st, v1alpha1.ConditionReady, status, reason, msg, gen, now)
}

// SetProgressingCondition: Progressing is True while a deployment or an
// abort runs (also while the system is briefly unavailable during one),
// else False.
func SetProgressingCondition(st *v1alpha1.UpgradeStatus, p Phase, reason, msg string, gen int64, now time.Time) {
	status := metav1.ConditionFalse
	switch p {
	case PhaseDeploying, PhaseAborting:
		status = metav1.ConditionTrue
	case PhaseUnavailable, PhaseBlocked:
		if st.ActiveDeploy.Status == v1alpha1.DeployStatusDeploying {
			status = metav1.ConditionTrue
		}
	}
	set(st, v1alpha1.ConditionProgressing, status, reason, msg, gen, now)
}

// SetStalledCondition: Stalled is True when the deployment cannot go on
// without the user (build failed beyond its retries, apply failed, no plan,
// aborted midway) or the system refuses the operator; else False.
func SetStalledCondition(st *v1alpha1.UpgradeStatus, p Phase, reason, msg string, gen int64, now time.Time) {
	status := metav1.ConditionFalse
	switch p {
	case PhaseBuildFailed, PhaseApplyFailed, PhaseFailed, PhaseInvalid, PhaseVIMError:
		status = metav1.ConditionTrue
	}
	set(st, v1alpha1.ConditionStalled, status, reason, msg, gen, now)
}

// SetReleasesSkippedCondition: ReleasesSkipped is True, naming them, while
// the last observation left out USM releases or requires entries the
// planner cannot use; absent otherwise (the usual case adds nothing). It
// reports whether the message changed (a new set of skipped entries), so
// the caller warns once per change, not every reconcile.
func SetReleasesSkippedCondition(st *v1alpha1.UpgradeStatus, skipped []string, gen int64, now time.Time) bool {
	if len(skipped) == 0 {
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionReleasesSkipped)
		return false
	}
	msg := fmt.Sprintf("left out of planning (not a product release starlingx-MM.mm[.pp] as USM parses ids): %s", strings.Join(skipped, "; "))
	old := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReleasesSkipped)
	set(st, v1alpha1.ConditionReleasesSkipped, metav1.ConditionTrue, "ReleasesSkipped", msg, gen, now)
	return old == nil || old.Message != msg
}

func set(st *v1alpha1.UpgradeStatus, typ string, status metav1.ConditionStatus, reason, msg string, gen int64, now time.Time) {
	if reason == "" {
		reason = "Unknown"
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(now)})
}
