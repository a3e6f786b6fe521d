package appupgrade

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

var (
	rolled      = rollout.Verdict{State: rollout.Rolled, Reason: rollout.ReasonRolled, Message: "rolled"}
	rolling     = rollout.Verdict{State: rollout.Progressing, Reason: rollout.ReasonOldPodsExist, Message: "old pod x still exists"}
	failing     = rollout.Verdict{State: rollout.Failed, Reason: rollout.ReasonPodFailing, Message: "pod x: ErrImagePull"}
	errNotFound = errors.New(`deployment job-system/job-worker not found`)
)

// pair is the v1alpha1 worker → API upgrade as a graph (what conversion
// produces) with the upgrade in phase p, the worker in wp and the API in
// ap; the worker runs workerImg with verdict wv, the API apiImg with av.
func pair(p v1beta1.Phase, wp, ap v1beta1.ComponentPhase, workerImg string, wv rollout.Verdict, apiImg string, av rollout.Verdict) Graph {
	u := &v1beta1.ApplicationUpgrade{}
	u.Namespace, u.Name, u.Generation = "job-system", "upgrade-v2", 1
	u.Spec.Components = []v1beta1.Component{
		{Name: "worker", DeploymentRef: v1beta1.DeploymentReference{Name: "job-worker"}, Image: "job-worker:v2"},
		{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "job-api"}, Image: "job-api:v2", DependsOn: []string{"worker"}},
	}
	u.Status.Phase, u.Status.Message = p, "previous message"
	if p != "" {
		u.Status.ObservedGeneration = 1
		u.Status.Components = []v1beta1.ComponentStatus{{Name: "worker", Phase: wp}, {Name: "api", Wave: 1, Phase: ap}}
	}
	return Graph{Upgrade: u, Components: []Component{
		{Spec: u.Spec.Components[0], Key: types.NamespacedName{Namespace: "job-system", Name: "job-worker"}, Deployment: deploymentAt(1),
			Container: "worker", Image: workerImg, Rollout: wv},
		{Spec: u.Spec.Components[1], Key: types.NamespacedName{Namespace: "job-system", Name: "job-api"}, Deployment: deploymentAt(1),
			Container: "api", Image: apiImg, Rollout: av},
	}}
}

const (
	pending    = v1beta1.ComponentPending
	upgrading  = v1beta1.ComponentUpgrading
	rollingOut = v1beta1.ComponentRollingOut
	done       = v1beta1.ComponentRolled
	failed     = v1beta1.ComponentFailed
	blocked    = v1beta1.ComponentBlocked
	progress   = v1beta1.PhaseProgressing
	revertedP  = v1beta1.ComponentReverted
)

// TestDecideCases are the v1alpha1 decision's table cases (next_test.go,
// removed with appupgrade.Next) on the two-component graph: the upgrade
// phase, each component's phase, the reason and the write.
func TestDecideCases(t *testing.T) {
	workerWrite := []ImageWrite{{Component: "worker", Workload: v1beta1.WorkloadKey{Kind: v1beta1.KindDeployment, Namespace: "job-system", Name: "job-worker"}, Container: "worker", Image: "job-worker:v2"}}
	apiWrite := []ImageWrite{{Component: "api", Workload: v1beta1.WorkloadKey{Kind: v1beta1.KindDeployment, Namespace: "job-system", Name: "job-api"}, Container: "api", Image: "job-api:v2"}}
	cases := []struct {
		name   string
		g      Graph
		mutate func(*Graph)
		phase  v1beta1.Phase
		worker v1beta1.ComponentPhase
		api    v1beta1.ComponentPhase
		reason string
		writes []ImageWrite
	}{
		{"new object is Pending", pair("", "", "", "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1beta1.PhasePending, pending, pending, ReasonSpecChanged, nil},
		{"Pending moves the worker to Upgrading", pair(v1beta1.PhasePending, pending, pending, "job-worker:v1", rolled, "job-api:v1", rolled), nil, progress, upgrading, pending, ReasonDependenciesRolled, nil},
		{"Upgrading writes the worker", pair(progress, upgrading, pending, "job-worker:v1", rolled, "job-api:v1", rolled), nil, progress, rollingOut, pending, ReasonImageWritten, workerWrite},
		{"C13 worker already at target: no write", pair(progress, upgrading, pending, "job-worker:v2", rolled, "job-api:v1", rolled), nil, progress, rollingOut, pending, ReasonAtTarget, nil},
		{"C01-C04 waiting while the worker is not rolled", pair(progress, rollingOut, pending, "job-worker:v2", rolling, "job-api:v1", rolled), nil, progress, rollingOut, pending, ReasonProgressing, nil},
		{"worker rolled: API Upgrading, no write yet", pair(progress, rollingOut, pending, "job-worker:v2", rolled, "job-api:v1", rolled), nil, progress, done, upgrading, ReasonRolledOut, nil},
		{"C06 worker rollout failed: API blocked", pair(progress, rollingOut, pending, "job-worker:v2", failing, "job-api:v1", rolled), nil, v1beta1.PhaseFailed, failed, blocked, ReasonRolloutFailed, nil},
		{"worker image reverted by someone: reported, not written again", pair(progress, rollingOut, pending, "job-worker:v1", rolled, "job-api:v1", rolled), nil, progress, revertedP, pending, ReasonImageReverted, nil},
		{"reverted worker back at target: rolled, API next", pair(progress, revertedP, pending, "job-worker:v2", rolled, "job-api:v1", rolled), nil, progress, done, upgrading, ReasonRolledOut, nil},
		{"reverted worker still reverted: no write", pair(progress, revertedP, pending, "job-worker:v1", rolled, "job-api:v1", rolled), nil, progress, revertedP, pending, ReasonImageReverted, nil},
		{"API Upgrading writes the API when the worker is rolled", pair(progress, done, upgrading, "job-worker:v2", rolled, "job-api:v1", rolled), nil, progress, done, rollingOut, ReasonImageWritten, apiWrite},
		{"never writes the API while the worker is rolling", pair(progress, done, upgrading, "job-worker:v2", rolling, "job-api:v1", rolled), nil, progress, rollingOut, pending, ReasonDependencyNotDone, nil},
		{"never writes the API when the worker image was reverted", pair(progress, done, upgrading, "job-worker:v1", rolled, "job-api:v1", rolled), nil, progress, revertedP, pending, ReasonImageReverted, nil},
		{"worker reverted after the API was written: reported, not Completed", pair(progress, done, rollingOut, "job-worker:v1", rolled, "job-api:v2", rolled), nil, progress, revertedP, done, ReasonImageReverted, nil},
		{"API already at target", pair(progress, done, upgrading, "job-worker:v2", rolled, "job-api:v2", rolled), nil, progress, done, rollingOut, ReasonAtTarget, nil},
		{"waiting for the API", pair(progress, done, rollingOut, "job-worker:v2", rolled, "job-api:v2", rolling), nil, progress, done, rollingOut, ReasonProgressing, nil},
		{"API rolled: Completed", pair(progress, done, rollingOut, "job-worker:v2", rolled, "job-api:v2", rolled), nil, v1beta1.PhaseCompleted, done, done, ReasonCompleted, nil},
		{"API rollout failed", pair(progress, done, rollingOut, "job-worker:v2", rolled, "job-api:v2", failing), nil, v1beta1.PhaseFailed, done, failed, ReasonRolloutFailed, nil},
		{"API image reverted: reported", pair(progress, done, rollingOut, "job-worker:v2", rolled, "job-api:v1", rolled), nil, progress, done, revertedP, ReasonImageReverted, nil},
		{"Completed is terminal while the images stay", pair(v1beta1.PhaseCompleted, done, done, "job-worker:v2", rolling, "job-api:v2", rolling), nil, v1beta1.PhaseCompleted, done, done, string(v1beta1.PhaseCompleted), nil},
		{"Completed, not observed (superseded): kept", pair(v1beta1.PhaseCompleted, done, done, "", rolling, "", rolling), func(g *Graph) { g.Components = nil }, v1beta1.PhaseCompleted, done, done, string(v1beta1.PhaseCompleted), nil},
		{"revert after Completed: reported, no write", pair(v1beta1.PhaseCompleted, done, done, "job-worker:v1", rolled, "job-api:v2", rolled), nil, progress, revertedP, done, ReasonImageReverted, nil},
		{"Failed is terminal", pair(v1beta1.PhaseFailed, failed, blocked, "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1beta1.PhaseFailed, failed, blocked, string(v1beta1.PhaseFailed), nil},
		{"spec change restarts a Failed upgrade", pair(v1beta1.PhaseFailed, failed, blocked, "job-worker:v1", rolled, "job-api:v1", rolled),
			func(g *Graph) { g.Upgrade.Generation = 2 }, v1beta1.PhasePending, pending, pending, ReasonSpecChanged, nil},
		{"spec change restarts mid-rollout", pair(progress, rollingOut, pending, "job-worker:v2", rolling, "job-api:v1", rolled),
			func(g *Graph) { g.Upgrade.Generation = 2 }, v1beta1.PhasePending, pending, pending, ReasonSpecChanged, nil},
		{"C12 missing worker Deployment fails from Pending", pair(v1beta1.PhasePending, pending, pending, "", rolled, "job-api:v1", rolled),
			func(g *Graph) { g.Components[0].ConfigError = errNotFound }, v1beta1.PhaseFailed, failed, blocked, ReasonConfigError, nil},
		{"config error mid-rollout fails the component", pair(progress, done, rollingOut, "job-worker:v2", rolled, "", rolled),
			func(g *Graph) { g.Components[1].ConfigError = errNotFound }, v1beta1.PhaseFailed, done, failed, ReasonConfigError, nil},
		{"C14 claimed Deployment holds without writing", pair(progress, upgrading, pending, "job-worker:v1", rolled, "job-api:v1", rolled),
			func(g *Graph) { g.ClaimedBy = "job-system/other" }, progress, upgrading, pending, ReasonDeploymentClaimed, nil},
		{"own API write not yet in the cache: keep waiting, no flap", pair(progress, done, rollingOut, "job-worker:v2", rolled, "job-api:v1", rolled),
			func(g *Graph) {
				g.Upgrade.Status.Components[1].WrittenGeneration = 3
				g.Components[1].Deployment = deploymentAt(2)
			},
			progress, done, rollingOut, ReasonProgressing, nil},
		{"API reverted after our write was observed: reported", pair(progress, done, rollingOut, "job-worker:v2", rolled, "job-api:v1", rolled),
			func(g *Graph) {
				g.Upgrade.Status.Components[1].WrittenGeneration = 3
				g.Components[1].Deployment = deploymentAt(4)
			},
			progress, done, revertedP, ReasonImageReverted, nil},
		{"own worker write not yet in the cache: keep waiting", pair(progress, rollingOut, pending, "job-worker:v1", rolled, "job-api:v1", rolled),
			func(g *Graph) {
				g.Upgrade.Status.Components[0].WrittenGeneration = 5
				g.Components[0].Deployment = deploymentAt(4)
			},
			progress, rollingOut, pending, ReasonProgressing, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			if tc.mutate != nil {
				tc.mutate(&g)
			}
			p := Decide(g)
			assert.Equal(t, tc.phase, p.Phase, p.Message)
			assert.Equal(t, tc.worker, p.Components[0].Phase, "worker: %s", p.Components[0].Message)
			assert.Equal(t, tc.api, p.Components[1].Phase, "api: %s", p.Components[1].Message)
			assert.Equal(t, tc.reason, p.Reason, p.Message)
			assert.Equal(t, tc.writes, p.Writes)
			assert.NotEmpty(t, p.Message)
		})
	}
}

// TestDecideNeverWritesAPIUnlessWorkerRolled enumerates every phase
// combination v1alpha1 can express, verdict and image: an API write
// happens only when the worker is at its target and Rolled, and only from
// API Upgrading; the worker and the API are never written in one pass.
func TestDecideNeverWritesAPIUnlessWorkerRolled(t *testing.T) {
	type phases struct {
		p      v1beta1.Phase
		wp, ap v1beta1.ComponentPhase
	}
	all := []phases{{"", "", ""}, {v1beta1.PhasePending, pending, pending}, {progress, upgrading, pending}, {progress, rollingOut, pending},
		{progress, done, upgrading}, {progress, done, rollingOut}, {v1beta1.PhaseCompleted, done, done}, {v1beta1.PhaseFailed, failed, blocked}}
	verdicts := []rollout.Verdict{rolled, rolling, failing}
	n := 0
	for _, ph := range all {
		for _, wimg := range []string{"job-worker:v1", "job-worker:v2"} {
			for _, wv := range verdicts {
				for _, aimg := range []string{"job-api:v1", "job-api:v2"} {
					for _, av := range verdicts {
						p := Decide(pair(ph.p, ph.wp, ph.ap, wimg, wv, aimg, av))
						assert.LessOrEqual(t, len(p.Writes), 1)
						for _, w := range p.Writes {
							if w.Component == "api" {
								n++
								assert.Equal(t, "job-worker:v2", wimg)
								assert.Equal(t, rollout.Rolled, wv.State, "API written while worker %s", wv)
								assert.Equal(t, upgrading, ph.ap)
							}
						}
					}
				}
			}
		}
	}
	assert.Equal(t, 3, n, "API writes happen from API Upgrading with the worker rolled, for each API verdict")
}

func deploymentAt(generation int64) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Generation = generation
	return d
}

// A revert's message says "after the operator wrote" the target only when
// the status records a write of it; a component found at its target and
// never written says "after it reached the target" (a tenant trial read
// an invented write).
func TestRevertedMessageSaysWhetherTheOperatorWrote(t *testing.T) {
	g := pair(progress, done, pending, "job-worker:v3", rolled, "job-api:v1", rolled)
	p := Decide(g)
	assert.Equal(t, revertedP, p.Components[0].Phase)
	assert.Contains(t, p.Components[0].Message, "to job-worker:v3 after it reached the target job-worker:v2: not written again")
	assert.NotContains(t, p.Components[0].Message, "operator wrote")

	g = pair(progress, done, pending, "job-worker:v3", rolled, "job-api:v1", rolled)
	g.Upgrade.Status.Components[0].WrittenGeneration = 2
	p = Decide(g)
	assert.Contains(t, p.Components[0].Message, "to job-worker:v3 after the operator wrote job-worker:v2: not written again")
}

// ownedBy sets d's managedFields so that manager owns container's image.
func ownedBy(d *appsv1.Deployment, manager, container string) *appsv1.Deployment {
	raw := `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"` + container + `\"}":{"f:image":{}}}}}}}`
	d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}}}
	return d
}

// A Completed upgrade whose worker now runs an image the operator itself
// wrote (a newer upgrade's target; that upgrade perhaps deleted since)
// stays Completed: the operator writes only targets, so it is no revert.
// The same image put there by kustomize-controller is one.
func TestAnotherUpgradesImageIsNoRevert(t *testing.T) {
	completed := v1beta1.PhaseCompleted
	g := pair(completed, done, done, "job-worker:v3", rolled, "job-api:v2", rolled)
	g.Components[0].Deployment = ownedBy(deploymentAt(3), FieldManager, "worker")
	p := Decide(g)
	assert.Equal(t, completed, p.Phase, p.Message)
	assert.Equal(t, done, p.Components[0].Phase)

	g = pair(completed, done, done, "job-worker:v1", rolled, "job-api:v2", rolled)
	g.Components[0].Deployment = ownedBy(deploymentAt(3), "kustomize-controller", "worker")
	p = Decide(g)
	assert.Equal(t, revertedP, p.Components[0].Phase)
	assert.Contains(t, p.Components[0].Message, "reverted by kustomize-controller")
}
