package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// The v1alpha1 worker's rolled-out event announces the API's upgrade only
// when the API is still to roll out: a worker rolled out again after a
// revert, or an upgrade whose API was already at its target, finds the
// API Rolled (a tenant trial saw "upgrading API" with no write after it).
func TestWorkerRolledOutEventSaysWhetherTheAPIComesNext(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "side"}}
	u.Spec.Components = []v1beta1.Component{
		{Name: legacyWorker, DeploymentRef: v1beta1.DeploymentReference{Name: "side-worker"}, Image: "w:v2"},
		{Name: legacyAPI, DeploymentRef: v1beta1.DeploymentReference{Name: "side-api"}, Image: "a:v2", DependsOn: []string{legacyWorker}},
	}
	plan := func(api v1beta1.ComponentPhase) appupgrade.Plan {
		return appupgrade.Plan{Components: []appupgrade.ComponentStep{
			{Name: legacyWorker, Phase: v1beta1.ComponentRolled}, {Name: legacyAPI, Phase: api}}}
	}
	reason, note := rolledOutEvent(u, appupgrade.Graph{Upgrade: u}, plan(v1beta1.ComponentUpgrading), legacyWorker)
	assert.Equal(t, ReasonWorkerRolledOut, reason)
	assert.Equal(t, "Worker rolled out, every old worker pod gone: upgrading API team-a/side-api", note)

	_, note = rolledOutEvent(u, appupgrade.Graph{Upgrade: u}, plan(v1beta1.ComponentRolled), legacyWorker)
	assert.Equal(t, "Worker rolled out, every old worker pod gone; API team-a/side-api already rolled out at its target image", note)
}
