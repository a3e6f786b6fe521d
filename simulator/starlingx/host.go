package starlingx

// Host is one host as sysinv's /v1/ihosts reports the fields the operator
// reads (api/controllers/v1/host.py). Capabilities.Personality is
// "Controller-Active" / "Controller-Standby" on controllers
// (HostController._update_controller_personality).
type Host struct {
	UUID                string
	Hostname            string // controller-0, controller-1, worker-0, ...
	Personality         string // PersonalityController / PersonalityWorker
	Subfunctions        string // "controller,worker" on all-in-one controllers
	Administrative      string // "unlocked" / "locked"
	Operational         string // "enabled" / "disabled"
	Availability        string // "available" / "online" / "offline"
	SoftwareRelease     string // release id the host runs (USM deploy host)
	ControlPlaneVersion string // Kubernetes control plane on controllers, "" on workers
	KubeletVersion      string // kubelet version
	Active              bool   // the active controller
}

// ActivityCapability is sysinv's capabilities.Personality value.
func (h Host) ActivityCapability() string {
	if h.Personality != PersonalityController {
		return ""
	}
	if h.Active {
		return "Controller-Active"
	}
	return "Controller-Standby"
}

func (h *Host) isController() bool { return h.Personality == PersonalityController }

func (s *System) host(name string) *Host {
	for _, h := range s.hosts {
		if h.Hostname == name {
			return h
		}
	}
	return nil
}

func (s *System) activeController() *Host {
	for _, h := range s.hosts {
		if h.Active {
			return h
		}
	}
	return nil
}

func (s *System) controllers() []*Host {
	var out []*Host
	for _, h := range s.hosts {
		if h.isController() {
			out = append(out, h)
		}
	}
	return out
}

func (s *System) workers() []*Host {
	var out []*Host
	for _, h := range s.hosts {
		if !h.isController() {
			out = append(out, h)
		}
	}
	return out
}

// runningKube counts control planes and kubelets per version, the input of
// kubeVersionStates.
func (s *System) runningKube() map[string]int {
	n := map[string]int{}
	for _, h := range s.hosts {
		if h.ControlPlaneVersion != "" {
			n[h.ControlPlaneVersion]++
		}
		if h.KubeletVersion != "" {
			n[h.KubeletVersion]++
		}
	}
	return n
}
