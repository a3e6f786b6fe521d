package deploy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

func answers() Answers {
	return Answers{
		System: &vim.System{SystemMode: "duplex"},
		Releases: []vim.Release{
			{ReleaseID: "starlingx-13.01.10", State: "available"},
			{ReleaseID: "starlingx-13.01.2", State: "deployed"},
			{ReleaseID: "starlingx-13.01.0", State: "deployed"},
			{ReleaseID: "starlingx-27.03.0", State: "available", Requires: []string{"starlingx-13.01.2"}},
			{ReleaseID: "starlingx-40.01.0", State: "unavailable"},
		},
		KubeVersions: []vim.KubeVersion{
			{Version: "v1.34.1", State: "available", UpgradeFrom: []string{"v1.33.0"}},
			{Version: "v1.33.0", State: "active"},
		},
		Hosts: []vim.Host{{Hostname: "controller-0"}, {Hostname: "controller-1", Capabilities: map[string]any{"Personality": "Controller-Active"}}},
	}
}

func TestLiveFrom(t *testing.T) {
	l, err := LiveFrom(answers())
	require.NoError(t, err)
	assert.Equal(t, "starlingx-13.01.2 / v1.33.0", l.Running.String(), "the highest deployed release, compared as numbers")
	assert.Equal(t, "duplex", string(l.Mode))
	assert.Equal(t, "controller-1", l.ActiveController)
	var ids, kubes []string
	for _, p := range l.Products {
		ids = append(ids, p.ReleaseID)
	}
	for _, k := range l.Kubes {
		kubes = append(kubes, k.Version+"="+string(k.State))
	}
	assert.Equal(t, []string{"starlingx-13.01.0", "starlingx-13.01.2", "starlingx-13.01.10", "starlingx-27.03.0", "starlingx-40.01.0"}, ids)
	assert.Equal(t, []string{"v1.33.0=active", "v1.34.1=available"}, kubes,
		"sysinv's list as it is: nothing invented for releases not running yet")
	assert.Empty(t, l.Skipped)
	assert.Nil(t, l.Strategy)
}

func TestLiveFromMidKubeUpgrade(t *testing.T) {
	a := answers()
	a.KubeVersions = []vim.KubeVersion{{Version: "v1.33.0", State: "partial"}, {Version: "v1.34.1", State: "partial"}}
	a.KubeUpgrades = []vim.KubeUpgrade{{FromVersion: "v1.33.0", ToVersion: "v1.34.1", State: "upgraded-first-master"}}
	a.Strategy = &vim.Strategy{UUID: "u", Name: vim.StrategyKubeUpgrade, State: vim.StateApplying, CurrentPhase: "apply",
		ApplyPhase: vim.Phase{Stages: []vim.Stage{{StageName: "kube-upgrade-start"}, {StageName: "kube-upgrade-kubelets-controllers v1.34.1"}}, TotalStages: 2, CurrentStage: 1}}
	l, err := LiveFrom(a)
	require.NoError(t, err)
	assert.Equal(t, "v1.33.0", l.Running.Kubernetes.String(), "while mixed, the version the upgrade started from")
	assert.Equal(t, "v1.33.0 → v1.34.1 (upgraded-first-master)", l.KubeUpgradeInProgress)
	require.NotNil(t, l.Strategy)
	assert.Equal(t, plan.KubeUpgrade, l.Strategy.Kind)
	assert.Equal(t, "v1.34.1", l.Strategy.Target)
	assert.Equal(t, "apply(0%)/stg:(1/2) kube-upgrade-kubelets-controllers v1.34.1", l.Strategy.Progress)
}

func TestLiveFromErrors(t *testing.T) {
	a := answers()
	a.Releases = []vim.Release{{ReleaseID: "starlingx-13.01.0", State: "available"}}
	_, err := LiveFrom(a)
	assert.ErrorContains(t, err, "no deployed product release")
	a = answers()
	a.KubeVersions = []vim.KubeVersion{{Version: "v1.33.0", State: "partial"}}
	_, err = LiveFrom(a)
	assert.ErrorContains(t, err, "running version is unknown")
}

// TestLiveFromSkipsWhatThePlannerCannotUse: USM ids are
// <component>-MM.mm[.pp] (utils.py get_component_and_versions); another
// component, an id without one, a malformed id or requires entry is left
// out and named, never a failed observation; a GA id without the patch
// part is a product release.
func TestLiveFromSkipsWhatThePlannerCannotUse(t *testing.T) {
	a := answers()
	a.Releases = append(a.Releases,
		vim.Release{ReleaseID: "13.01", State: "available"},
		vim.Release{ReleaseID: "pxeboot-13.01.1", State: "deployed"},
		vim.Release{ReleaseID: "starlingx-13.01.x", State: "available"},
		vim.Release{ReleaseID: "starlingx-41.03", State: "available", Requires: []string{"starlingx-13.01.2", "firmware-1.0.3", "junk"}},
		vim.Release{ReleaseID: "starlingx-13.01.11", State: "deployed-partial"},
		vim.Release{ReleaseID: "starlingx-13.01.12", State: ""})
	l, err := LiveFrom(a)
	require.NoError(t, err)
	assert.Equal(t, "starlingx-13.01.2 / v1.33.0", l.Running.String(), "deployed-partial is not the running release")
	var ids []string
	for _, p := range l.Products {
		ids = append(ids, p.ReleaseID+"="+string(p.State))
		if p.ReleaseID == "starlingx-41.03" {
			assert.Equal(t, []string{"starlingx-13.01.2"}, p.Requires)
		}
	}
	assert.Equal(t, []string{"starlingx-13.01.0=deployed", "starlingx-13.01.2=deployed", "starlingx-13.01.10=available",
		"starlingx-13.01.11=deployed-partial", "starlingx-13.01.12=", "starlingx-27.03.0=available", "starlingx-40.01.0=unavailable",
		"starlingx-41.03=available"}, ids)
	require.Len(t, l.Skipped, 5)
	assert.Contains(t, l.Skipped[0], `usm release "13.01"`)
	assert.Contains(t, l.Skipped[1], `usm release "pxeboot-13.01.1"`)
	assert.Contains(t, l.Skipped[2], `usm release "starlingx-13.01.x"`)
	assert.Contains(t, l.Skipped[3], `usm release "starlingx-41.03" requires "firmware-1.0.3"`)
	assert.Contains(t, l.Skipped[4], `requires "junk"`)
}

func TestStrategyFromSwUpgrade(t *testing.T) {
	s := StrategyFrom(&vim.Strategy{UUID: "u", Name: vim.StrategySwUpgrade, Release: vim.ReleaseList{"starlingx-13.01.2"}, State: vim.StateBuildFailed,
		CurrentPhase: "build", BuildPhase: vim.Phase{Reason: "precheck failed"}})
	assert.Equal(t, Strategy{Kind: plan.SwDeploy, UUID: "u", State: vim.StateBuildFailed, Target: "starlingx-13.01.2",
		Progress: "build(0%)/stg:(0/0)", Reason: "precheck failed"}, *s)
}

// TestStrategyFromApplyFailedThenAborted: the real VIM aborts a strategy
// whose apply failed (nfv_common strategy/_strategy.py phase_complete →
// _abort), so "aborted" with a failed apply phase is an apply failure,
// with the apply phase's reason.
func TestStrategyFromApplyFailedThenAborted(t *testing.T) {
	for _, c := range []struct {
		state       vim.StrategyState
		apply, want string
		failed, to  bool
	}{
		{vim.StateAborted, vim.ResultFailed, "deploy host failed", true, false},
		{vim.StateAborting, vim.ResultTimedOut, "deploy host failed", true, true},
		{vim.StateAbortFailed, vim.ResultFailed, "deploy host failed; abort phase: unlock failed", true, false},
		{vim.StateAborted, "aborted", "", false, false},
	} {
		phase := vim.Phase{Result: c.apply, Reason: "deploy host failed"}
		if c.apply == "aborted" {
			phase.Reason = ""
		}
		abort := vim.Phase{}
		if c.state == vim.StateAbortFailed {
			abort = vim.Phase{Result: "failed", Reason: "unlock failed"}
		}
		s := StrategyFrom(&vim.Strategy{UUID: "u", Name: vim.StrategySwUpgrade, Release: vim.ReleaseList{"starlingx-13.01.2"}, State: c.state,
			CurrentPhase: "abort", ApplyPhase: phase, AbortPhase: abort})
		assert.Equal(t, c.failed, s.ApplyFailed, c.state)
		assert.Equal(t, c.to, s.ApplyTimedOut, c.state)
		assert.Equal(t, c.want, s.Reason, c.state)
	}
}
