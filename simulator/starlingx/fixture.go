package starlingx

import "time"

// DemoConfig is the system of the seed's examples: starlingx-13.01.0 on
// Kubernetes v1.33.0, patches 13.01.1 and 13.01.2 uploaded, the major
// release 27.03.0 (and its patch 27.03.1) uploaded, Kubernetes v1.32.2 …
// v1.35.0 known. Duplex systems get two workers.
//
//	release            requires            k8s
//	starlingx-13.01.0  -                   v1.32.2 v1.33.0 v1.34.1
//	starlingx-13.01.1  13.01.0             v1.32.2 v1.33.0 v1.34.1
//	starlingx-13.01.2  13.01.1             v1.32.2 v1.33.0 v1.34.1
//	starlingx-27.03.0  13.01.2 (reboot)    v1.34.1 v1.35.0
//	starlingx-27.03.1  27.03.0             v1.34.1 v1.35.0
func DemoConfig(mode SystemMode, start time.Time) Config {
	old := []string{"v1.32.2", "v1.33.0", "v1.34.1"}
	next := []string{"v1.34.1", "v1.35.0"}
	workers := 0
	if mode.IsDuplex() {
		workers = 2
	}
	return Config{
		Start: start, Mode: mode, Workers: workers,
		Releases: []Release{
			demoRelease("starlingx-13.01.0", ReleaseDeployed, nil, old, false),
			demoRelease("starlingx-13.01.1", ReleaseAvailable, []string{"starlingx-13.01.0"}, old, false),
			demoRelease("starlingx-13.01.2", ReleaseAvailable, []string{"starlingx-13.01.1"}, old, false),
			demoRelease("starlingx-27.03.0", ReleaseAvailable, []string{"starlingx-13.01.2"}, next, true),
			demoRelease("starlingx-27.03.1", ReleaseAvailable, []string{"starlingx-27.03.0"}, next, false),
		},
		DeployedRelease: "starlingx-13.01.0",
		KubeVersions: []KubeVersion{
			{Version: "v1.32.2"},
			{Version: "v1.33.0", UpgradeFrom: []string{"v1.32.2"}, DowngradeTo: []string{"v1.32.2"}},
			{Version: "v1.34.1", UpgradeFrom: []string{"v1.33.0"}, DowngradeTo: []string{"v1.33.0"}},
			{Version: "v1.35.0", UpgradeFrom: []string{"v1.34.1"}, DowngradeTo: []string{"v1.34.1"}},
		},
		ActiveKubeVersion: "v1.33.0",
		Seed:              1,
	}
}

func demoRelease(id, state string, requires, kube []string, reboot bool) Release {
	r := Release{
		ID: id, State: state, Status: "REL", Requires: requires, FeedKubeVersions: kube,
		RebootRequired: reboot, Summary: id + " release", Description: "StarlingX " + id,
	}
	if mustID(id).patch == 0 {
		r.Unremovable, r.PrepatchedISO = true, true
	}
	return r
}
