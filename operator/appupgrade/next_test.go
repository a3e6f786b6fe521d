package appupgrade

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

var (
	rolled      = rollout.Verdict{State: rollout.Rolled, Reason: rollout.ReasonRolled, Message: "rolled"}
	rolling     = rollout.Verdict{State: rollout.Progressing, Reason: rollout.ReasonOldPodsExist, Message: "old pod x still exists"}
	failing     = rollout.Verdict{State: rollout.Failed, Reason: rollout.ReasonPodFailing, Message: "pod x: ErrImagePull"}
	errNotFound = errors.New(`deployment job-system/job-worker not found`)
)

// state builds a State in phase p where the worker currently runs workerImg
// with verdict wv and the API runs apiImg with verdict av.
func state(p v1.Phase, workerImg string, wv rollout.Verdict, apiImg string, av rollout.Verdict) State {
	u := &v1.ApplicationUpgrade{}
	u.Namespace, u.Name, u.Generation = "job-system", "upgrade-v2", 1
	u.Spec.Worker = v1.ComponentSpec{DeploymentRef: v1.DeploymentReference{Name: "job-worker"}, Image: "job-worker:v2"}
	u.Spec.API = v1.ComponentSpec{DeploymentRef: v1.DeploymentReference{Name: "job-api"}, Image: "job-api:v2"}
	u.Status.Phase, u.Status.Message = p, "previous message"
	if p != "" {
		u.Status.ObservedGeneration = 1
	}
	return State{Upgrade: u,
		Worker: Observed{Name: Worker, Spec: u.Spec.Worker, Key: types.NamespacedName{Namespace: "job-system", Name: "job-worker"},
			Container: "worker", Image: workerImg, Rollout: wv},
		API: Observed{Name: API, Spec: u.Spec.API, Key: types.NamespacedName{Namespace: "job-system", Name: "job-api"},
			Container: "api", Image: apiImg, Rollout: av},
	}
}

func TestNext(t *testing.T) {
	workerWrite := &ImageWrite{Component: Worker, Deployment: types.NamespacedName{Namespace: "job-system", Name: "job-worker"}, Container: "worker", Image: "job-worker:v2"}
	apiWrite := &ImageWrite{Component: API, Deployment: types.NamespacedName{Namespace: "job-system", Name: "job-api"}, Container: "api", Image: "job-api:v2"}
	cases := []struct {
		name   string
		s      State
		mutate func(*State)
		phase  v1.Phase
		reason string
		write  *ImageWrite
	}{
		{"new object is Pending", state("", "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1.PhasePending, ReasonSpecChanged, nil},
		{"Pending validates and moves on", state(v1.PhasePending, "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1.PhaseUpgradingWorkers, ReasonValidated, nil},
		{"UpgradingWorkers writes the worker", state(v1.PhaseUpgradingWorkers, "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1.PhaseWaitingForWorkers, ReasonWorkerPatched, workerWrite},
		{"C13 worker already at target: no write", state(v1.PhaseUpgradingWorkers, "job-worker:v2", rolled, "job-api:v1", rolled), nil, v1.PhaseWaitingForWorkers, ReasonWorkerAtTarget, nil},
		{"C01-C04 waiting while the worker is not rolled", state(v1.PhaseWaitingForWorkers, "job-worker:v2", rolling, "job-api:v1", rolled), nil, v1.PhaseWaitingForWorkers, ReasonWorkerRolling, nil},
		{"worker rolled: on to the API, no write yet", state(v1.PhaseWaitingForWorkers, "job-worker:v2", rolled, "job-api:v1", rolled), nil, v1.PhaseUpgradingAPI, ReasonWorkerRolledOut, nil},
		{"C06 worker rollout failed", state(v1.PhaseWaitingForWorkers, "job-worker:v2", failing, "job-api:v1", rolled), nil, v1.PhaseFailed, ReasonWorkerRolloutFail, nil},
		{"worker image reverted by someone: write again", state(v1.PhaseWaitingForWorkers, "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1.PhaseUpgradingWorkers, ReasonWorkerChanged, nil},
		{"UpgradingAPI writes the API when the worker is rolled", state(v1.PhaseUpgradingAPI, "job-worker:v2", rolled, "job-api:v1", rolled), nil, v1.PhaseWaitingForAPI, ReasonAPIPatched, apiWrite},
		{"UpgradingAPI never writes while the worker is rolling", state(v1.PhaseUpgradingAPI, "job-worker:v2", rolling, "job-api:v1", rolled), nil, v1.PhaseWaitingForWorkers, ReasonWorkerNoLongerDone, nil},
		{"UpgradingAPI never writes when the worker image changed", state(v1.PhaseUpgradingAPI, "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1.PhaseWaitingForWorkers, ReasonWorkerNoLongerDone, nil},
		{"API already at target", state(v1.PhaseUpgradingAPI, "job-worker:v2", rolled, "job-api:v2", rolled), nil, v1.PhaseWaitingForAPI, ReasonAPIAtTarget, nil},
		{"waiting for the API", state(v1.PhaseWaitingForAPI, "job-worker:v2", rolled, "job-api:v2", rolling), nil, v1.PhaseWaitingForAPI, ReasonAPIRolling, nil},
		{"API rolled: Completed", state(v1.PhaseWaitingForAPI, "job-worker:v2", rolled, "job-api:v2", rolled), nil, v1.PhaseCompleted, ReasonCompleted, nil},
		{"API rollout failed", state(v1.PhaseWaitingForAPI, "job-worker:v2", rolled, "job-api:v2", failing), nil, v1.PhaseFailed, ReasonAPIRolloutFail, nil},
		{"API image reverted: write again", state(v1.PhaseWaitingForAPI, "job-worker:v2", rolled, "job-api:v1", rolled), nil, v1.PhaseUpgradingAPI, ReasonAPIChanged, nil},
		{"Completed is terminal", state(v1.PhaseCompleted, "job-worker:v1", rolling, "job-api:v1", rolling), nil, v1.PhaseCompleted, string(v1.PhaseCompleted), nil},
		{"Failed is terminal", state(v1.PhaseFailed, "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1.PhaseFailed, string(v1.PhaseFailed), nil},
		{"spec change restarts a Failed upgrade", state(v1.PhaseFailed, "job-worker:v1", rolled, "job-api:v1", rolled),
			func(s *State) { s.Upgrade.Generation = 2 }, v1.PhasePending, ReasonSpecChanged, nil},
		{"spec change restarts mid-rollout", state(v1.PhaseWaitingForWorkers, "job-worker:v2", rolling, "job-api:v1", rolled),
			func(s *State) { s.Upgrade.Generation = 2 }, v1.PhasePending, ReasonSpecChanged, nil},
		{"C12 missing worker Deployment fails from Pending", state(v1.PhasePending, "", rolled, "job-api:v1", rolled),
			func(s *State) { s.Worker.ConfigError = errNotFound }, v1.PhaseFailed, ReasonConfigError, nil},
		{"config error mid-rollout fails", state(v1.PhaseWaitingForAPI, "job-worker:v2", rolled, "", rolled),
			func(s *State) { s.API.ConfigError = errNotFound }, v1.PhaseFailed, ReasonConfigError, nil},
		{"C14 claimed Deployment holds without writing", state(v1.PhaseUpgradingWorkers, "job-worker:v1", rolled, "job-api:v1", rolled),
			func(s *State) { s.ClaimedBy = "job-system/other" }, v1.PhaseUpgradingWorkers, ReasonDeploymentClaimed, nil},
		{"own API write not yet in the cache: keep waiting, no flap", state(v1.PhaseWaitingForAPI, "job-worker:v2", rolled, "job-api:v1", rolled),
			func(s *State) { s.Upgrade.Status.API.WrittenGeneration = 3; s.API.Deployment = deploymentAt(2) }, v1.PhaseWaitingForAPI, ReasonWriteNotObserved, nil},
		{"API reverted after our write was observed: write again", state(v1.PhaseWaitingForAPI, "job-worker:v2", rolled, "job-api:v1", rolled),
			func(s *State) { s.Upgrade.Status.API.WrittenGeneration = 3; s.API.Deployment = deploymentAt(4) }, v1.PhaseUpgradingAPI, ReasonAPIChanged, nil},
		{"own worker write not yet in the cache: keep waiting", state(v1.PhaseWaitingForWorkers, "job-worker:v1", rolled, "job-api:v1", rolled),
			func(s *State) { s.Upgrade.Status.Worker.WrittenGeneration = 5; s.Worker.Deployment = deploymentAt(4) }, v1.PhaseWaitingForWorkers, ReasonWriteNotObserved, nil},
		{"unknown phase starts over", state("Bogus", "job-worker:v1", rolled, "job-api:v1", rolled), nil, v1.PhasePending, ReasonSpecChanged, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			step := Next(s)
			assert.Equal(t, tc.phase, step.Phase, step.Message)
			assert.Equal(t, tc.reason, step.Reason, step.Message)
			assert.Equal(t, tc.write, step.Write)
			assert.NotEmpty(t, step.Message)
		})
	}
}

// TestNextNeverWritesAPIUnlessWorkerRolled enumerates every phase, verdict and
// image combination: an API write happens only when the worker is at its
// target and Rolled, and a step never writes both components.
func TestNextNeverWritesAPIUnlessWorkerRolled(t *testing.T) {
	phases := []v1.Phase{"", v1.PhasePending, v1.PhaseUpgradingWorkers, v1.PhaseWaitingForWorkers, v1.PhaseUpgradingAPI, v1.PhaseWaitingForAPI, v1.PhaseCompleted, v1.PhaseFailed}
	verdicts := []rollout.Verdict{rolled, rolling, failing}
	n := 0
	for _, p := range phases {
		for _, wimg := range []string{"job-worker:v1", "job-worker:v2"} {
			for _, wv := range verdicts {
				for _, aimg := range []string{"job-api:v1", "job-api:v2"} {
					for _, av := range verdicts {
						step := Next(state(p, wimg, wv, aimg, av))
						if step.Write != nil && step.Write.Component == API {
							n++
							assert.Equal(t, "job-worker:v2", wimg)
							assert.Equal(t, rollout.Rolled, wv.State, "API written while worker %s", wv)
							assert.Equal(t, v1.PhaseUpgradingAPI, p)
						}
					}
				}
			}
		}
	}
	assert.Equal(t, 3, n, "API writes happen from UpgradingAPI with the worker rolled, for each API verdict")
}

func deploymentAt(generation int64) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Generation = generation
	return d
}
