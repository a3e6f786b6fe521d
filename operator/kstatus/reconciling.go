// Package kstatus holds what the operator's custom resources share so that
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status, which Flux's health
// checks and `kubectl wait` users rely on) reads them right.
package kstatus

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types shared by ApplicationUpgrade (v1alpha1, v1beta1) and
// Upgrade: each API package declares constants with these values.
const (
	progressing = "Progressing"
	reconciling = "Reconciling"
)

// SetReconciling copies the Progressing condition (status, reason,
// message, observedGeneration, lastTransitionTime) as Reconciling, the
// condition kstatus reads (kstatus/status/core.go, checkGenericProperties:
// Reconciling True is InProgress). Without it kstatus would call a rolling
// upgrade Current as soon as observedGeneration matched. Call it after the
// Progressing condition is set; with no Progressing condition it does
// nothing.
func SetReconciling(conditions *[]metav1.Condition) {
	p := meta.FindStatusCondition(*conditions, progressing)
	if p == nil {
		return
	}
	c := *p
	c.Type = reconciling
	meta.SetStatusCondition(conditions, c)
}
