package deploy

import (
	"fmt"
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
