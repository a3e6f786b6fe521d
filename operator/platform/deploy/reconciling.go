package deploy

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// SetReconcilingCondition copies the Progressing condition as Reconciling,
// the condition kstatus reads (sigs.k8s.io/cli-utils/pkg/kstatus/status:
// Reconciling True is InProgress). Call it after SetProgressingCondition.
func SetReconcilingCondition(st *v1alpha1.UpgradeStatus) {
	p := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionProgressing)
	if p == nil {
		return
	}
	c := *p
	c.Type = v1alpha1.ConditionReconciling
	meta.SetStatusCondition(&st.Conditions, c)
}
