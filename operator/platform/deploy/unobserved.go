package deploy

import (
	"fmt"
	"k8s.io/apimachinery/pkg/api/meta"
	"time"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/kstatus"
)

// Unobserved is the status to write when the system could not be observed
// or refused the reconcile's action: the recorded deployment stays as it
// is (a VIM outage is never a failed deployment), only the duration moves
// on and the conditions say what happened. transient (503, timeouts,
// connection errors) gives PhaseUnavailable, anything else PhaseVIMError.
// status.observedGeneration is left alone, so a spec change not yet acted
// on is still seen as one by the next reconcile.
func Unobserved(u *v1alpha1.Upgrade, transient bool, what string, err error, now time.Time) (v1alpha1.UpgradeStatus, Phase) {
	st := *u.Status.DeepCopy()
	ad := &st.ActiveDeploy
	if ad.Status == v1alpha1.DeployStatusDeploying {
		if t, perr := time.Parse(time.RFC3339, ad.TimeStart); perr == nil {
			ad.TimeDuration = FormatDuration(now.Sub(t))
		}
	}
	p, reason, msg := PhaseVIMError, "VIMError", fmt.Sprintf("%s: %v", what, err)
	if transient {
		p, reason = PhaseUnavailable, "VIMUnavailable"
		msg += "; retrying"
	}
	gen := u.Generation
	SetReadyCondition(&st, p, reason, msg, gen, now)
	SetProgressingCondition(&st, p, reason, msg, gen, now)
	kstatus.SetReconciling(&st.Conditions)
	SetStalledCondition(&st, p, reason, msg, gen, now)
	return st, p
}

// AbortRefused is the decision to keep when the VIM refused the abort
// action with 400 "Abort rejected: …": it refuses while the current stage
// or step is not abortable (nfv _vim_sw_update_api_events.py _is_abortable;
// the sw-upgrade controller stages are, SwDeployControllerHostsMixin), so
// the abort is asked again at the next poll, once the stage has moved on.
// The refusal is reported in the conditions and, once per distinct
// refusal, as a Warning event.
func AbortRefused(u *v1alpha1.Upgrade, dec Decision, err error, now time.Time) Decision {
	msg := fmt.Sprintf("the VIM refused the abort for now (%v); asking again at the next poll", err)
	st := dec.Status
	prev := meta.FindStatusCondition(u.Status.Conditions, v1alpha1.ConditionProgressing) // as stored: Next already rewrote dec.Status
	dec.Events = nil
	if prev == nil || prev.Message != msg {
		dec.Events = []Event{{Warning: true, Reason: ReasonAbortRefused, Message: msg}}
	}
	gen := u.Generation
	SetReadyCondition(&st, PhaseAborting, "AbortRefused", msg, gen, now)
	SetProgressingCondition(&st, PhaseAborting, "AbortRefused", msg, gen, now)
	kstatus.SetReconciling(&st.Conditions)
	SetStalledCondition(&st, PhaseAborting, "AbortRefused", msg, gen, now)
	dec.Status, dec.Phase, dec.Reason, dec.Message = st, PhaseAborting, "AbortRefused", msg
	dec.Action, dec.Requeue = Action{}, RequeueActive
	return dec
}
