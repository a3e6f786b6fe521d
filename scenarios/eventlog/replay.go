package eventlog

import (
	"sort"
	"strconv"
)

// Ordered returns events in a global order: by resourceVersion when every
// event carries a numeric one (one etcd, or the simulator's store, orders
// all writes), else as recorded. The input is not modified.
func Ordered(events []Event) []Event {
	rvs := make([]uint64, len(events))
	sorted := true
	for i, e := range events {
		rv, err := strconv.ParseUint(e.RV, 10, 64)
		if err != nil {
			return append([]Event(nil), events...)
		}
		rvs[i] = rv
		sorted = sorted && (i == 0 || rvs[i-1] <= rv)
	}
	if sorted { // a log recorded in commit order, the usual case: one copy
		return append([]Event(nil), events...)
	}
	idx := make([]int, len(events))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rvs[idx[a]] < rvs[idx[b]] })
	out := make([]Event, len(events))
	for i, j := range idx {
		out[i] = events[j]
	}
	return out
}

// Key is "namespace/name", the key of every map of a State.
func Key(namespace, name string) string { return namespace + "/" + name }

// DeploymentState is a workload as the log says it stood: a Deployment,
// or the StatefulSet or DaemonSet Kind names (its hashes are then its
// pods' controller-revision-hash values).
type DeploymentState struct {
	Namespace, Name string
	// Kind is "" for a Deployment, else "StatefulSet" or "DaemonSet".
	Kind string
	// Containers are the pod template's containers, Hash its
	// pod-template-hash (the last DeploymentWrite's HashAfter).
	Containers []Container
	Hash       string
	// Rewrites counts the template changes after the creation (writes of
	// one resourceVersion count once).
	Rewrites int
	// New holds the hashes the template took from its first rewrite on:
	// a pod of any other hash is old (Old). Empty before the first rewrite.
	New map[string]bool
	// Counters are the last DeploymentStatus's (detailed logs only).
	Counters *Counters

	lastRV string
	// templates are the containers of each hash's template, as written
	templates map[string][]Container
}

// Image is the image of the template's container named name, or "".
func (d *DeploymentState) Image(name string) string {
	img, _ := imageIn(d.Containers, name)
	return img
}

// PodState is a live pod (terminating ones included).
type PodState struct {
	Namespace, Name          string
	Deployment, ReplicaSet   string
	Kind                     string // of the workload Deployment names ("" for a Deployment)
	Hash                     string
	Containers               []Container
	Ready, Deleting          bool
	CreatedAt, DeletingSince float64
}

// UpgradeState is an ApplicationUpgrade's phase and component phases.
type UpgradeState struct {
	Phase      string
	Components map[string]string
}

// State is the cluster as an event log says it stood after one event.
// Replay reuses it from event to event: read it inside the callback only.
type State struct {
	// Event is the event just applied.
	Event Event
	// Deployments (every workload, by WorkloadKey), Pods and Upgrades by
	// Key; ReplicaSets counts the live
	// pods of each ReplicaSet by its Key.
	Deployments map[string]*DeploymentState
	Pods        map[string]*PodState
	ReplicaSets map[string]int
	Upgrades    map[string]*UpgradeState
	// Gone is the pod a PodDeleted event just removed (nil otherwise).
	Gone *PodState
	// Rewrite is the Deployment whose template the event changed after
	// its creation, the first event of its resourceVersion (nil otherwise).
	Rewrite *DeploymentState
}

// Old reports whether p is an old pod of its workload (OldHash). A pod
// of no known workload is not old.
func (s *State) Old(p *PodState) bool {
	d := s.Deployments[WorkloadKey(p.Kind, p.Namespace, p.Deployment)]
	if d == nil || p.Deployment == "" {
		return false
	}
	return d.OldHash(p.Hash)
}

// OldHash reports whether a pod of pod-template-hash hash is old: hash is
// none of the hashes d's template took from its first rewrite on (before
// any rewrite: not its current hash), or it is one of them but its
// template named another image than the template now does in one of its
// containers (by name). The second test catches the pods of a template
// that came back: a GitOps tool re-applying the previous image puts the
// creation's hash among the rewrites, and once Git carries the target
// again those pods are old again; a template change of no image (an
// annotation, an env var) leaves the pods of the previous hash new. It
// compares templates, not pods' own specs, so an admission webhook that
// rewrites a pod's images (a digest, a mirror) changes nothing.
func (d *DeploymentState) OldHash(hash string) bool {
	if d.Rewrites == 0 {
		return hash != d.Hash
	}
	if !d.New[hash] {
		return true
	}
	t, ok := d.templates[hash]
	return ok && !sameImages(t, d.Containers)
}

// sameImages reports whether a names, in every container of b (by name),
// the image b names.
func sameImages(a, b []Container) bool {
	for _, c := range b {
		if img, ok := imageIn(a, c.Name); !ok || img != c.Image {
			return false
		}
	}
	return true
}

// Final is the State after every event (Replay's last); its Deployments
// tell which hashes ended up old (OldHash).
func Final(events []Event) *State {
	var last *State
	Replay(events, func(s *State) { last = s })
	if last == nil {
		return newState()
	}
	return last
}

// OldPods returns the Keys of deployment's live old pods (namespace/name), sorted.
func (s *State) OldPods(namespace, deployment string) []string {
	return s.OldWorkloadPods("", namespace, deployment)
}

// OldWorkloadPods returns the Keys of the live old pods (namespace/name)
// of the workload of kind ("" or "Deployment", "StatefulSet",
// "DaemonSet") named name, sorted.
func (s *State) OldWorkloadPods(kind, namespace, name string) []string {
	if kind == "Deployment" {
		kind = ""
	}
	var out []string
	for k, p := range s.Pods {
		if p.Namespace == namespace && p.Deployment == name && p.Kind == kind && s.Old(p) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Replay applies events in Ordered order to an empty State and calls fn
// after each.
func Replay(events []Event, fn func(*State)) {
	s := newState()
	for _, e := range Ordered(events) {
		s.apply(e)
		fn(s)
	}
}

func newState() *State {
	return &State{Deployments: map[string]*DeploymentState{}, Pods: map[string]*PodState{},
		ReplicaSets: map[string]int{}, Upgrades: map[string]*UpgradeState{}}
}

func (s *State) apply(e Event) {
	s.Event, s.Gone, s.Rewrite = e, nil, nil
	k := Key(e.Namespace, e.Name)
	switch e.Event {
	case DeploymentWrite:
		s.deploymentWrite(e.WorkloadKey(), e)
	case Revision:
		if d := s.Deployments[e.WorkloadKey()]; d != nil && e.HashAfter != "" {
			d.Hash = e.HashAfter
			d.templates[e.HashAfter] = d.Containers
			if d.Rewrites > 0 {
				d.New[e.HashAfter] = true
			}
		}
	case DeploymentStatus:
		if d := s.Deployments[k]; d != nil && e.Status != nil {
			c := *e.Status
			d.Counters = &c
		}
	case PodCreated:
		p := &PodState{Namespace: e.Namespace, Name: e.Name, Deployment: e.Deployment, ReplicaSet: e.ReplicaSet, Kind: e.Kind,
			Hash: e.Hash, Containers: e.Containers, CreatedAt: e.T, DeletingSince: -1}
		s.Pods[k] = p
		if p.ReplicaSet != "" {
			s.ReplicaSets[Key(e.Namespace, p.ReplicaSet)]++
		}
	case PodReady:
		if p := s.Pods[k]; p != nil {
			p.Ready = true
		}
	case PodDeleting:
		if p := s.Pods[k]; p != nil && !p.Deleting {
			p.Deleting, p.DeletingSince = true, e.T
		}
	case PodDeleted:
		if p := s.Pods[k]; p != nil {
			s.Gone = p
			delete(s.Pods, k)
			if rs := Key(e.Namespace, p.ReplicaSet); p.ReplicaSet != "" {
				if s.ReplicaSets[rs]--; s.ReplicaSets[rs] <= 0 {
					delete(s.ReplicaSets, rs)
				}
			}
		}
	case Phase:
		s.upgrade(k).Phase = e.Phase
	case ComponentPhase:
		c, phase := ComponentOf(e)
		s.upgrade(k).Components[c] = phase
	}
}

func (s *State) deploymentWrite(k string, e Event) {
	d := s.Deployments[k]
	if d == nil {
		d = &DeploymentState{Namespace: e.Namespace, Name: e.Name, Kind: e.Kind, New: map[string]bool{}, templates: map[string][]Container{}}
		s.Deployments[k] = d
		d.Containers, d.Hash, d.lastRV = e.Containers, e.HashAfter, e.RV
		if e.HashAfter != "" {
			d.templates[e.HashAfter] = e.Containers
		}
		return
	}
	if e.RV == "" || e.RV != d.lastRV {
		d.Rewrites++
		s.Rewrite = d
	}
	d.Containers, d.Hash, d.lastRV = e.Containers, e.HashAfter, e.RV
	if e.HashAfter != "" {
		// a StatefulSet's or DaemonSet's write may precede its revision
		// (HashAfter ""): the Revision event adds the hash
		d.New[e.HashAfter] = true
		d.templates[e.HashAfter] = e.Containers
	}
}

func (s *State) upgrade(k string) *UpgradeState {
	u := s.Upgrades[k]
	if u == nil {
		u = &UpgradeState{Components: map[string]string{}}
		s.Upgrades[k] = u
	}
	return u
}

// PodImages returns, for a pod event of events, the image to show for the
// pod: the image of the container its Deployment's rewrites changed (the
// one an upgrade writes, e.g. "worker" behind a sidecar "proxy"), else its
// first container's (Event.Image). For display only; which pods are old
// is State.Old's to say.
func PodImages(events []Event) func(Event) string {
	written := map[string]string{} // Deployment Key → container its rewrites changed
	seen := map[string]bool{}
	for _, e := range events {
		if e.Event != DeploymentWrite {
			continue
		}
		k := e.WorkloadKey()
		if seen[k] && e.Container != "" {
			written[k] = e.Container
		}
		seen[k] = true
	}
	return func(e Event) string {
		if name, ok := written[e.WorkloadKey()]; ok {
			if img, ok := imageIn(e.Containers, name); ok {
				return img
			}
		}
		return e.Image
	}
}
