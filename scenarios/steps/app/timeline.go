package app

import (
	"slices"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// livePod is a pod between its creation and its deletion.
type livePod struct {
	deployment string
	images     []string
	ready      bool
	deleting   bool
}

// moment is the cluster as the facts describe it right after one of them.
type moment struct {
	// Event is the fact just applied.
	Event eventlog.Event
	// Counters are each Deployment's latest counters.
	Counters map[string]eventlog.Counters
	// Images are each Deployment's pod-template images.
	Images map[string][]string
	// Pods are the live pods.
	Pods map[string]livePod
	// Phases are each upgrade's phase.
	Phases map[string]string
	// Writes counts each Deployment's template changes; the first is its creation.
	Writes map[string]int
}

// rewrite reports whether the fact just applied changed deployment's
// template after its creation (an upgrade's write).
func (m *moment) rewrite(deployment string) bool {
	return m.Event.Event == eventlog.DeploymentWrite && m.Event.Name == deployment && m.Writes[deployment] > 1
}

// oldPods counts deployment's live pods whose images differ from its template.
func (m *moment) oldPods(deployment string) int {
	n := 0
	for _, p := range m.Pods {
		if p.deployment == deployment && !slices.Equal(p.images, m.Images[deployment]) {
			n++
		}
	}
	return n
}

// replay walks the facts in commit (resourceVersion) order and calls fn
// after each with the cluster as it stood then.
func replay(facts []judge.Fact, fn func(m *moment)) {
	events := make([]eventlog.Event, len(facts))
	for i, f := range facts {
		events[i] = f.Event
	}
	m := &moment{Counters: map[string]eventlog.Counters{}, Images: map[string][]string{}, Pods: map[string]livePod{},
		Phases: map[string]string{}, Writes: map[string]int{}}
	for _, e := range judge.Ordered(events) {
		m.Event = e
		switch e.Event {
		case eventlog.DeploymentWrite:
			m.Images[e.Name] = e.Images
			m.Writes[e.Name]++
		case eventlog.DeploymentStatus:
			m.Images[e.Name] = e.Images
			m.Counters[e.Name] = *e.Status
		case eventlog.PodCreated:
			m.Pods[e.Name] = livePod{deployment: e.Deployment, images: e.Images}
		case eventlog.PodReady:
			p := m.Pods[e.Name]
			p.ready = true
			m.Pods[e.Name] = p
		case eventlog.PodDeleting:
			p := m.Pods[e.Name]
			p.deleting = true
			m.Pods[e.Name] = p
		case eventlog.PodDeleted:
			delete(m.Pods, e.Name)
		case eventlog.Phase:
			m.Phases[e.Name] = e.Phase
		}
		fn(m)
	}
}

// firstRewriteAt is the time the deployment's template was first changed
// after its creation, or -1.
func firstRewriteAt(facts []judge.Fact, deployment string) float64 {
	at := -1.0
	replay(facts, func(m *moment) {
		if at < 0 && m.rewrite(deployment) {
			at = m.Event.T
		}
	})
	return at
}
