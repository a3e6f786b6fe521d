package starlingx

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Config describes the system at model time Start.
type Config struct {
	Start             time.Time  // model time at creation
	Name              string     // isystem name; default "starlingx"
	Mode              SystemMode // simplex (default), duplex, duplex-direct
	SystemType        string     // "All-in-one" or "Standard"; default All-in-one without workers
	Workers           int        // worker hosts worker-0..; ignored on simplex
	ActiveController  string     // default controller-0
	Releases          []Release  // uploaded releases
	DeployedRelease   string     // release id every host runs; must be in Releases
	KubeVersions      []KubeVersion
	ActiveKubeVersion string // version every control plane and kubelet runs
	Alarms            []Alarm
	// StepDurations overrides the model-time length of steps by step name;
	// a duration above the VIM's step timeout makes the step time out.
	StepDurations map[string]time.Duration
	Faults        Faults
	Seed          uint64 // seeds the uuids
}

// Alarm is an active fault-management alarm (fm alarm), as far as the
// VIM's query-alarms step cares.
type Alarm struct {
	ID               string // "100.114"
	Severity         string // critical / major / minor / warning
	Reason           string
	EntityInstanceID string
	MgmtAffecting    bool // blocks orchestration under "relaxed" too
}

// Deploy is USM's deploy record (GET /v1/deploy; software_controller.py
// software_deploy_show_api).
type Deploy struct {
	FromRelease    string // sw_version "MM.mm.P" deployed before
	ToRelease      string // sw_version "MM.mm.P" being deployed
	FeedRepo       string
	CommitID       string
	RebootRequired bool
	State          string // Deploy* constants

	toID        string   // release id being deployed
	fromID      string   // release id deployed before (the rollback target)
	together    []string // older patches of the same major deployed with it
	initialKube string   // active Kubernetes version at deploy start (software_deploy_abort_api checks it)
	removing    []string // a patch removal: the newer patches of the running major being removed
}

// KubeUpgradeRecord is sysinv's kube_upgrade (GET /v1/kube_upgrade).
type KubeUpgradeRecord struct {
	UUID        string
	FromVersion string
	ToVersion   string
	State       string // KubeUpgrade* constants
}

// System is the model. Not safe for concurrent use: fakevim wraps it in a
// mutex, the simulator drives it from its one goroutine.
type System struct {
	cfg         Config
	now         time.Time
	hosts       []*Host
	releases    []Release
	deployed    string
	kubes       []KubeVersion
	alarms      []Alarm
	deploy      *Deploy
	kubeUpgrade *KubeUpgradeRecord
	strategy    *Strategy
	faults      Faults
	rng         *rand.Rand
	uuid        string
	events      []Event
}

// New builds a system from cfg: hosts all running cfg.DeployedRelease and
// cfg.ActiveKubeVersion, the deployed release (and older deployed patches of
// its major) in state "deployed".
func New(cfg Config) (*System, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	s := &System{cfg: cfg, now: cfg.Start, deployed: cfg.DeployedRelease, faults: cfg.Faults.clone()}
	s.rng = rand.New(rand.NewPCG(cfg.Seed, 0x5354584d))
	s.uuid = s.newUUID()
	for _, r := range cfg.Releases {
		r = r.clone()
		if r.ID == cfg.DeployedRelease {
			r.State = ReleaseDeployed
		}
		s.releases = append(s.releases, r)
	}
	for _, k := range cfg.KubeVersions {
		s.kubes = append(s.kubes, k.clone())
	}
	s.alarms = append([]Alarm(nil), cfg.Alarms...)
	s.buildHosts()
	return s, nil
}

func (c *Config) defaults() error {
	if c.Mode == "" {
		c.Mode = Simplex
	}
	if c.Name == "" {
		c.Name = "starlingx"
	}
	if c.SystemType == "" {
		c.SystemType = "All-in-one"
		if c.Mode.IsDuplex() && c.Workers > 0 {
			c.SystemType = "Standard"
		}
	}
	if c.ActiveController == "" || !c.Mode.IsDuplex() {
		c.ActiveController = Controller0
	}
	if c.ActiveController != Controller0 && c.ActiveController != Controller1 {
		return fmt.Errorf("starlingx config: active controller %q is not controller-0 or controller-1", c.ActiveController)
	}
	return c.validateCatalog()
}

func (c *Config) validateCatalog() error {
	found := false
	for _, r := range c.Releases {
		if _, err := parseReleaseID(r.ID); err != nil {
			return fmt.Errorf("starlingx config: releases: %w", err)
		}
		found = found || r.ID == c.DeployedRelease
	}
	if !found {
		return fmt.Errorf("starlingx config: deployed release %q is not among the releases; add it to Releases", c.DeployedRelease)
	}
	found = false
	for _, k := range c.KubeVersions {
		if _, err := parseKubeVersion(k.Version); err != nil {
			return fmt.Errorf("starlingx config: kube versions: %w", err)
		}
		found = found || k.Version == c.ActiveKubeVersion
	}
	if !found {
		return fmt.Errorf("starlingx config: active kubernetes version %q is not among the kube versions; add it to KubeVersions", c.ActiveKubeVersion)
	}
	return nil
}

func (s *System) buildHosts() {
	sub := PersonalityController
	if s.cfg.SystemType == "All-in-one" {
		sub = "controller,worker"
	}
	names := []string{Controller0}
	if s.cfg.Mode.IsDuplex() {
		names = append(names, Controller1)
	}
	for _, n := range names {
		s.hosts = append(s.hosts, s.newHost(n, PersonalityController, sub, n == s.cfg.ActiveController))
	}
	if s.cfg.Mode.IsDuplex() {
		for i := 0; i < s.cfg.Workers; i++ {
			s.hosts = append(s.hosts, s.newHost(fmt.Sprintf("worker-%d", i), PersonalityWorker, PersonalityWorker, false))
		}
	}
}

func (s *System) newHost(name, personality, sub string, active bool) *Host {
	h := &Host{
		UUID: s.newUUID(), Hostname: name, Personality: personality, Subfunctions: sub,
		Administrative: "unlocked", Operational: "enabled", Availability: "available",
		SoftwareRelease: s.cfg.DeployedRelease, KubeletVersion: s.cfg.ActiveKubeVersion, Active: active,
	}
	if personality == PersonalityController {
		h.ControlPlaneVersion = s.cfg.ActiveKubeVersion
	}
	return h
}

// newUUID returns a random (seeded) RFC 4122 version 4 uuid.
func (s *System) newUUID() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := s.rng.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
