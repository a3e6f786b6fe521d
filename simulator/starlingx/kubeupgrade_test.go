package starlingx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func kubeStates(s *System) map[string]string {
	out := map[string]string{}
	for _, k := range s.KubeVersions(s.Now()) {
		out[k.Version] = k.State
	}
	return out
}

func TestKubeUpgradeDuplex(t *testing.T) {
	s := newSystem(t, Duplex)
	assert.Equal(t, map[string]string{"v1.32.2": KubeUnavailable, "v1.33.0": KubeActive, "v1.34.1": KubeAvailable},
		kubeStates(s))
	st := built(t, s, kubeReq("v1.34.1"))
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	assert.Equal(t, []string{StepQueryAlarms, StepQueryKubeVersions, StepQueryKubeUpgrade, StepKubeCleanupAborted, StepQueryKubeHostUpgrade},
		stepNames(st.Build.Stages[0]))
	assert.Equal(t, []string{
		StageKubeUpgradeStart, StageKubeDownloadImages, StageKubePreApplication, StageKubeNetworking, StageKubeStorage,
		"kube-upgrade-first-control-plane v1.34.1", "kube-upgrade-second-control-plane v1.34.1",
		"kube-upgrade-kubelet v1.34.1", "kube-upgrade-kubelet v1.34.1", "kube-upgrade-kubelet v1.34.1", "kube-upgrade-kubelet v1.34.1",
		StageKubeUpgradeComplete, StageKubePostApplication, StageKubeUpgradeCleanup,
	}, stageNames(st.Apply))
	assert.Equal(t, []string{Controller1}, st.Apply.Stages[5].Steps[0].EntityNames)
	assert.Equal(t, []string{Controller0}, st.Apply.Stages[6].Steps[0].EntityNames)
	assert.Equal(t, StepSwactHosts, st.Apply.Stages[8].Steps[0].Name, "controller-0's kubelet: swact away first")

	_, err := s.ApplyStrategy(s.Now(), KubeUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runUntil(t, s, func() bool { return s.Hosts(s.Now())[1].ControlPlaneVersion == "v1.34.1" })
	assert.Equal(t, KubePartial, kubeStates(s)["v1.34.1"])
	assert.Equal(t, KubePartial, kubeStates(s)["v1.33.0"])
	assert.Equal(t, "", s.ActiveKubeVersion(s.Now()))
	ku := s.KubeUpgrades(s.Now())
	require.Len(t, ku, 1)
	assert.Equal(t, "upgrading-second-master", ku[0].State, "the second control plane's step runs: sysinv shows it in progress")
	assert.Equal(t, "v1.33.0", ku[0].FromVersion)

	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), KubeUpgrade)
	require.Equal(t, StateApplied, got.State, got.Apply.Reason)
	assert.Equal(t, "v1.34.1", s.ActiveKubeVersion(s.Now()))
	assert.Equal(t, KubeActive, kubeStates(s)["v1.34.1"])
	assert.Empty(t, s.KubeUpgrades(s.Now()), "kube-upgrade-cleanup removed the record")
	assert.Equal(t, Controller1, s.ActiveController(s.Now()), "the kubelet stages left controller-1 active")
}

func TestKubeUpgradeSimplexHopsMinors(t *testing.T) {
	s := newSystem(t, Simplex, func(c *Config) { c.ActiveKubeVersion = "v1.32.2" })
	st := built(t, s, kubeReq("v1.34.1"))
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	assert.Equal(t, []string{
		StageKubeUpgradeStart, StageKubeDownloadImages, StageKubePreApplication, StageKubeNetworking, StageKubeStorage,
		StageKubeHostCordon,
		"kube-upgrade-first-control-plane v1.33.0", "kube-upgrade-first-control-plane v1.34.1",
		"kube-upgrade-kubelet v1.34.1",
		StageKubeHostUncordon, StageKubeUpgradeComplete, StageKubePostApplication, StageKubeUpgradeCleanup,
	}, stageNames(st.Apply))
	assert.Equal(t, []string{StepKubeHostKubelet, StepSystemStabilize}, stepNames(st.Apply.Stages[8]), "AIO-SX kubelets upgrade without a lock")
	_, err := s.ApplyStrategy(s.Now(), KubeUpgrade, "", nil)
	require.NoError(t, err)
	runToEnd(t, s)
	assert.Equal(t, "v1.34.1", s.ActiveKubeVersion(s.Now()))
}

func TestKubeUpgradeBuildFailures(t *testing.T) {
	cases := []struct {
		name   string
		mode   SystemMode
		to     string
		mutate func(*Config)
		reason string
	}{
		{"duplex multi-minor", Duplex, "v1.34.1", func(c *Config) { c.ActiveKubeVersion = "v1.32.2" },
			"duplex systems upgrade kubernetes one minor version per strategy"},
		{"not supported by the running release", Simplex, "v1.35.0", nil, "Invalid to_version value: 'v1.35.0'"},
		{"already active", Simplex, "v1.33.0", nil, "Kubernetes version v1.33.0 is already active"},
		{"older", Simplex, "v1.32.2", nil, "Invalid to_version value: 'v1.32.2'"},
		{"unknown", Simplex, "v1.99.0", nil, "Invalid to_version value: 'v1.99.0'"},
		{"upgrade_from", Simplex, "v1.34.1", func(c *Config) { c.KubeVersions[2].UpgradeFrom = []string{"v1.33.9"} },
			"kubernetes version v1.34.1 cannot be upgraded to from v1.33.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSystem(t, c.mode, func(cfg *Config) {
				if c.mutate != nil {
					c.mutate(cfg)
				}
			})
			st := built(t, s, kubeReq(c.to))
			assert.Equal(t, StateBuildFailed, st.State)
			assert.Contains(t, st.Build.Reason, c.reason)
		})
	}
}
