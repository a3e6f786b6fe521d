package starlingx

import "time"

// SystemInfo is sysinv's isystem (GET /v1/isystems).
type SystemInfo struct {
	UUID            string
	Name            string
	SystemType      string     // "All-in-one" / "Standard"
	SystemMode      SystemMode // simplex / duplex / duplex-direct
	SoftwareVersion string     // "MM.mm" of the deployed release
}

// Now is the model time the system has been run to.
func (s *System) Now() time.Time { return s.now }

// SystemInfo returns the isystem at now.
func (s *System) SystemInfo(now time.Time) SystemInfo {
	s.Advance(now)
	return SystemInfo{
		UUID: s.uuid, Name: s.cfg.Name, SystemType: s.cfg.SystemType,
		SystemMode: s.cfg.Mode, SoftwareVersion: mustID(s.deployed).majorStr,
	}
}

// Hosts returns copies of the hosts at now.
func (s *System) Hosts(now time.Time) []Host {
	s.Advance(now)
	out := make([]Host, len(s.hosts))
	for i, h := range s.hosts {
		out[i] = *h
	}
	return out
}

// ActiveController is the hostname of the active controller at now.
func (s *System) ActiveController(now time.Time) string {
	s.Advance(now)
	if h := s.activeController(); h != nil {
		return h.Hostname
	}
	return ""
}

// Releases returns the uploaded releases at now, in upload order.
func (s *System) Releases(now time.Time) []Release {
	s.Advance(now)
	out := make([]Release, len(s.releases))
	for i, r := range s.releases {
		out[i] = r.clone()
	}
	return out
}

// Release returns one release by id.
func (s *System) Release(now time.Time, id string) (Release, bool) {
	s.Advance(now)
	if r := s.release(id); r != nil {
		return r.clone(), true
	}
	return Release{}, false
}

func (s *System) release(id string) *Release {
	for i := range s.releases {
		if s.releases[i].ID == id {
			return &s.releases[i]
		}
	}
	return nil
}

// DeployedRelease is the release id the system runs at now.
func (s *System) DeployedRelease(now time.Time) string {
	s.Advance(now)
	return s.deployed
}

// Deploys returns USM's deploy records: none, or the one in progress.
func (s *System) Deploys(now time.Time) []Deploy {
	s.Advance(now)
	if s.deploy == nil {
		return nil
	}
	d := *s.deploy
	d.together = append([]string(nil), d.together...)
	return []Deploy{d}
}

// KubeVersions returns the Kubernetes versions sysinv lists at now: those
// the deployed release supports plus any version still running (sysinv's
// list is the running release's static list), with derived states.
func (s *System) KubeVersions(now time.Time) []KubeVersionView {
	s.Advance(now)
	return s.kubeVersionViews()
}

func (s *System) kubeVersionViews() []KubeVersionView {
	running := s.runningKube()
	var listed []KubeVersion
	dep := s.release(s.deployed)
	for _, k := range s.kubes {
		if running[k.Version] > 0 || len(dep.FeedKubeVersions) == 0 || dep.supportsKube(k.Version) {
			listed = append(listed, k)
		}
	}
	states := kubeVersionStates(listed, running)
	out := make([]KubeVersionView, len(listed))
	for i, k := range listed {
		v := KubeVersionView{KubeVersion: k.clone(), State: states[k.Version]}
		if s.kubeUpgrade != nil {
			v.Target = s.kubeUpgrade.ToVersion == k.Version
		} else {
			v.Target = v.State == KubeActive
		}
		out[i] = v
	}
	return out
}

// ActiveKubeVersion is the single Kubernetes version every control plane
// and kubelet runs, or "" while an upgrade left them mixed.
func (s *System) ActiveKubeVersion(now time.Time) string {
	s.Advance(now)
	return s.activeKube()
}

func (s *System) activeKube() string {
	var v string
	for ver, n := range s.runningKube() {
		if n > 0 {
			if v != "" {
				return ""
			}
			v = ver
		}
	}
	return v
}

func (s *System) kubeVersion(v string) *KubeVersion {
	for i := range s.kubes {
		if s.kubes[i].Version == v {
			return &s.kubes[i]
		}
	}
	return nil
}

// KubeUpgrades returns sysinv's kube_upgrade records: none or one.
func (s *System) KubeUpgrades(now time.Time) []KubeUpgradeRecord {
	s.Advance(now)
	if s.kubeUpgrade == nil {
		return nil
	}
	return []KubeUpgradeRecord{*s.kubeUpgrade}
}

// Alarms returns the active alarms: the configured ones and the one the
// VIM raises for its strategy (alarms.go vimAlarm).
func (s *System) Alarms(now time.Time) []Alarm {
	s.Advance(now)
	return s.activeAlarms()
}

// SetAlarms replaces the active alarms.
func (s *System) SetAlarms(now time.Time, alarms []Alarm) {
	s.Advance(now)
	s.alarms = append([]Alarm(nil), alarms...)
}

// Faults returns the pending injected faults.
func (s *System) Faults() Faults { return s.faults.clone() }

// SetFaults replaces the pending injected faults.
func (s *System) SetFaults(f Faults) { s.faults = f.clone() }
