package kstatus

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetReconcilingMirrorsProgressing(t *testing.T) {
	var none []metav1.Condition
	SetReconciling(&none)
	assert.Empty(t, none, "no Progressing condition: nothing to mirror")

	at := metav1.Unix(1700000000, 0)
	conds := []metav1.Condition{{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Upgrading", Message: "worker 1/3", ObservedGeneration: 4, LastTransitionTime: at}}
	SetReconciling(&conds)
	assert.Equal(t, []metav1.Condition{conds[0], {Type: "Reconciling", Status: metav1.ConditionTrue, Reason: "Upgrading", Message: "worker 1/3", ObservedGeneration: 4, LastTransitionTime: at}}, conds)

	conds[0].Status, conds[0].Reason = metav1.ConditionFalse, "Completed"
	SetReconciling(&conds)
	assert.Len(t, conds, 2)
	assert.Equal(t, metav1.ConditionFalse, conds[1].Status)
	assert.Equal(t, "Completed", conds[1].Reason)
}
