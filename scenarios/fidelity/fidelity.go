// Package fidelity compares what the simulator and a real cluster did in
// the same scenario: the sequences of ordering-relevant states, ignoring
// timing — per Deployment its status (generation observed; replicas,
// updated, available, terminating) and its pods' lifecycle (created,
// ready, deleting, deleted, by template), per upgrade its phases — and the
// ratio of the phases' durations.
package fidelity

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// Sequence is one entity's states in commit order, consecutive duplicates
// collapsed.
type Sequence struct {
	// Entity is "<workload> status", "<deployment> pods", "<statefulset>
	// pods" (or "pod <name>" for a StatefulSet in Options.PerPod), "<daemonset>
	// pods on <node>" or "<upgrade> phases".
	Entity string
	// Kind is the entity's kind: KindDeployment, eventlog.KindStatefulSet,
	// eventlog.KindDaemonSet or KindUpgrade.
	Kind   string
	States []string
}

// Entity kinds besides eventlog's StatefulSet and DaemonSet.
const (
	KindDeployment = "Deployment"
	KindUpgrade    = "ApplicationUpgrade"
)

// Options change how Sequences groups states.
type Options struct {
	// PerPod names StatefulSets whose pods are one sequence each ("pod
	// db-0") instead of one sequence of the set: those with Parallel pod
	// management, which acts on several pods at once, so the order across
	// pods is the controllers' timing, not their decision.
	PerPod map[string]bool
}

// Sequences extracts the ordering-relevant state sequences of a detailed
// event log, sorted by entity: per Deployment its status and its pods'
// lifecycle by template; per StatefulSet its status (WorkloadStatus) and
// its pods by name and revision; per DaemonSet its status and its pods by
// revision on each node; per upgrade its phases.
func Sequences(events []eventlog.Event) []Sequence { return SequencesWith(events, Options{}) }

// SequencesWith is Sequences with options.
func SequencesWith(events []eventlog.Event, o Options) []Sequence {
	by := map[string][]string{}
	kinds := map[string]string{}
	add := func(entity, kind, state string) {
		kinds[entity] = kind
		s := by[entity]
		if len(s) == 0 || s[len(s)-1] != state {
			by[entity] = append(s, state)
		}
	}
	revs := revisions{}
	for _, e := range judge.Ordered(events) {
		switch e.Event {
		case eventlog.DeploymentStatus:
			add(e.Name+" status", KindDeployment, statusState(e.Status))
		case eventlog.WorkloadStatus:
			if e.Workload != nil && e.Workload.ObservedGeneration > 0 { // 0: not yet seen by its controller
				add(e.Name+" status", e.Kind, revs.workloadState(e))
			}
		case eventlog.PodCreated, eventlog.PodReady, eventlog.PodDeleting, eventlog.PodDeleted:
			switch e.Kind {
			case eventlog.KindStatefulSet:
				entity, state := e.Deployment+" pods", e.Name+" "+revs.podState(e)
				if o.PerPod[e.Deployment] {
					entity, state = "pod "+e.Name, revs.podState(e)
				}
				add(entity, e.Kind, state)
			case eventlog.KindDaemonSet:
				node := e.Node
				if node == "" {
					node = "?"
				}
				add(e.Deployment+" pods on "+node, e.Kind, revs.podState(e))
			default:
				add(e.Deployment+" pods", KindDeployment, podState(e))
			}
		case eventlog.Phase:
			add(e.Name+" phases", KindUpgrade, e.Phase)
		}
	}
	out := make([]Sequence, 0, len(by))
	for k, v := range by {
		out = append(out, Sequence{Entity: k, Kind: kinds[k], States: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Entity < out[j].Entity })
	return out
}

// revisions names a StatefulSet's or DaemonSet's revisions r1, r2, ... in
// the order they first appear in its status or on its pods: the
// ControllerRevision names and hashes differ by backend where the
// templates do (the simulator's defaulting is not the API server's).
type revisions map[string]map[string]string

func (r revisions) name(e eventlog.Event, rev string) string {
	if rev == "" {
		return "r?"
	}
	k := e.WorkloadKey()
	m := r[k]
	if m == nil {
		m = map[string]string{}
		r[k] = m
	}
	if _, ok := m[rev]; !ok {
		m[rev] = fmt.Sprintf("r%d", len(m)+1)
	}
	return m[rev]
}

// workloadState is a StatefulSet's status (observed; replicas, ready,
// available, current, updated; current/update revision) or a DaemonSet's
// (observed; desired, current, updated, ready, available, unavailable
// scheduled), as kubernetes pkg/controller/statefulset
// (computeReplicaStatus) and pkg/controller/daemon (updateDaemonSetStatus)
// write them.
func (r revisions) workloadState(e eventlog.Event) string {
	c := e.Workload
	observed := "observed"
	if c.ObservedGeneration < c.Generation {
		observed = "NOT observed"
	}
	if e.Kind == eventlog.KindDaemonSet {
		return fmt.Sprintf("%s desired %d current %d upd %d ready %d avail %d unavail %d", observed,
			c.Spec, c.Current, c.Updated, c.Ready, c.Available, c.Unavailable)
	}
	cur := r.name(e, c.CurrentRevision)
	return fmt.Sprintf("%s rep %d ready %d avail %d cur %d upd %d rev %s/%s", observed,
		c.Replicas, c.Ready, c.Available, c.Current, c.Updated, cur, r.name(e, c.UpdateRevision))
}

// podState of a StatefulSet's or DaemonSet's pod: its images, its
// revision (controller-revision-hash, named r1, r2, ...) and the event
// ("db:v2 r2 deleting").
func (r revisions) podState(e eventlog.Event) string {
	p := podState(e)
	i := strings.LastIndex(p, " ")
	return p[:i] + " " + r.name(e, e.Hash) + p[i:]
}

func statusState(c *eventlog.Counters) string {
	observed := "observed"
	if c.ObservedGeneration < c.Generation {
		observed = "NOT observed"
	}
	term := "-"
	if c.Terminating != nil {
		term = fmt.Sprint(*c.Terminating)
	}
	return fmt.Sprintf("%s spec %d rep %d upd %d avail %d term %s", observed, c.Spec, c.Replicas, c.Updated, c.Available, term)
}

// podState names a pod event by its template (the pod's images without
// registry), since pod names and pod-template hashes differ by backend.
func podState(e eventlog.Event) string {
	images := e.Images
	if len(images) == 0 {
		images = []string{e.Image}
	}
	short := make([]string, len(images))
	for i, img := range images {
		short[i] = img[strings.LastIndex(img, "/")+1:]
	}
	kind := strings.ToLower(strings.TrimPrefix(e.Event, "Pod"))
	return strings.Join(short, ",") + " " + kind
}

// Difference is where two sequences of one entity part.
type Difference struct {
	Entity    string
	Kind      string // as Sequence.Kind
	Sim, Real int    // number of states
	// Index is the first differing state (0-based); -1 when they agree.
	Index            int
	SimState, RealAt string
	// RealRefines: every state of the simulator's sequence appears, in
	// order, in the real one, which only adds intermediate states (a finer
	// grain: events the simulator runs at one instant, the real cluster
	// spreads over milliseconds). SimRefines is the converse.
	RealRefines, SimRefines bool
	// BothRefine: neither sequence is a subsequence of the other, but every
	// state the two share comes in the same order in both — each backend
	// only adds intermediate states of its own (the simulator a status it
	// writes before the ReplicaSet controller reported its pods, the real
	// cluster an "available 1" between pods that the simulator readies at
	// one instant). Still a difference in grain, not in order.
	BothRefine bool
	// Unmatched is, when neither refines the other, the first state of the
	// simulator's sequence that the real one lacks in that order (1-based
	// index and state): where the orders really part, past any grain.
	Unmatched      int
	UnmatchedState string
}

// Agree reports whether the sequences were equal.
func (d Difference) Agree() bool { return d.Index < 0 }

// Grain reports whether the sequences differ only in grain: not equal, but
// one refines the other or each adds its own states, the shared ones in
// one order.
func (d Difference) Grain() bool {
	return !d.Agree() && (d.RealRefines || d.SimRefines || d.BothRefine)
}

// Verdict is "yes", "real refines sim", "sim refines real", "each refines
// the other" or "no, from state N".
func (d Difference) Verdict() string {
	switch {
	case d.Agree():
		return "yes"
	case d.RealRefines:
		return "real refines sim"
	case d.SimRefines:
		return "sim refines real"
	case d.BothRefine:
		return "each refines the other"
	}
	return fmt.Sprintf("no, from state %d", d.Index+1)
}

// sameSharedOrder reports whether the states a and b have in common come
// in the same order in both: restricted to the states they share, and with
// the later repeats of a state dropped from the side that shows it more
// often (each keeps its first occurrences, as many as the other side
// has), the two are equal. A transient status that one backend passes
// through again in a second rollout and the other does not is grain; a
// state shown before another on one side and after it on the other (also
// a final state shown early, then left, then reached again) is not.
// Sequences with no state in common share no order: they disagree.
func sameSharedOrder(a, b []string) bool {
	ra, rb := restrict(a, b), restrict(b, a)
	if len(ra) == 0 {
		return false
	}
	ca, cb := counts(ra), counts(rb)
	return slices.Equal(firstOccurrences(ra, cb), firstOccurrences(rb, ca))
}

// counts is how often each state occurs in a.
func counts(a []string) map[string]int {
	n := map[string]int{}
	for _, x := range a {
		n[x]++
	}
	return n
}

// firstOccurrences is a keeping, of each state, only its first limit[x]
// occurrences.
func firstOccurrences(a []string, limit map[string]int) []string {
	seen := map[string]int{}
	var out []string
	for _, x := range a {
		if seen[x] < limit[x] {
			out = append(out, x)
		}
		seen[x]++
	}
	return out
}

// restrict is a without the states that do not occur in b.
func restrict(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

// subsequence reports whether a appears in b in order.
func subsequence(a, b []string) bool { return matched(a, b) == len(a) }

// matched is how many leading states of a appear in b in order.
func matched(a, b []string) int {
	i := 0
	for _, x := range b {
		if i < len(a) && a[i] == x {
			i++
		}
	}
	return i
}

// Compare lines up the sequences of sim and real, entity by entity.
func Compare(sim, real []eventlog.Event) []Difference {
	return CompareSequences(Sequences(sim), Sequences(real))
}

// CompareSequences lines up two backends' sequences, entity by entity
// (sorted by entity); an entity only one backend has is compared with an
// empty sequence.
func CompareSequences(sim, real []Sequence) []Difference {
	s, r := index(sim), index(real)
	kinds := map[string]string{}
	for _, q := range append(append([]Sequence(nil), sim...), real...) {
		kinds[q.Entity] = q.Kind
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]Difference, 0, len(names))
	for _, n := range names {
		a, b := s[n], r[n]
		d := Difference{Entity: n, Kind: kinds[n], Sim: len(a), Real: len(b), Index: -1, RealRefines: subsequence(a, b), SimRefines: subsequence(b, a)}
		if !d.RealRefines && !d.SimRefines {
			d.BothRefine = sameSharedOrder(a, b)
		}
		if !d.RealRefines && !d.SimRefines && !d.BothRefine {
			d.Unmatched = matched(a, b) + 1
			d.UnmatchedState = a[d.Unmatched-1]
		}
		for i := 0; i < len(a) || i < len(b); i++ {
			sa, sb := at(a, i), at(b, i)
			if sa != sb {
				d.Index, d.SimState, d.RealAt = i, sa, sb
				break
			}
		}
		out = append(out, d)
	}
	return out
}

func index(seqs []Sequence) map[string][]string {
	m := map[string][]string{}
	for _, s := range seqs {
		m[s.Entity] = s.States
	}
	return m
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(ended)"
}

// PhaseSpan is how long an upgrade stayed in a phase.
type PhaseSpan struct {
	Upgrade, Phase string
	Seconds        float64
}

// PhaseDurations are the durations of every phase but the last of each
// upgrade, in order.
func PhaseDurations(events []eventlog.Event) []PhaseSpan {
	var out []PhaseSpan
	last := map[string]eventlog.Event{}
	for _, e := range judge.Ordered(events) {
		if e.Event != eventlog.Phase {
			continue
		}
		if p, ok := last[e.Name]; ok {
			out = append(out, PhaseSpan{Upgrade: p.Name, Phase: p.Phase, Seconds: e.T - p.T})
		}
		last[e.Name] = e
	}
	return out
}
