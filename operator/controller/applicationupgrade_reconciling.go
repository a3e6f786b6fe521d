package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// setReconcilingCondition copies the Progressing condition (status, reason,
// message, generation, transition time) as Reconciling, the condition
// kstatus reads (sigs.k8s.io/cli-utils/pkg/kstatus/status, kstatusReconciling):
// without it kstatus would call a rolling upgrade Current as soon as
// observedGeneration matched. Call it after setProgressingCondition.
func setReconcilingCondition(st *v1beta1.ApplicationUpgradeStatus) {
	p := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionProgressing)
	if p == nil {
		return
	}
	c := *p
	c.Type = v1beta1.ConditionReconciling
	meta.SetStatusCondition(&st.Conditions, c)
}
