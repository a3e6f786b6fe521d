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
	// items are the states before consecutive duplicates are collapsed,
	// with the object each is of and when (for CommuteWindow).
	items []item
}

// item is one state of a sequence as recorded: the state, the object it
// is of (a pod's name; "" for a status or a phase) and its time in
// seconds; for a Deployment's pod, its ReplicaSet and its sync epoch:
// how many writes of the Deployment (its template or its status) the log
// holds before it.
type item struct {
	state, key string
	t          float64
	deleted    bool
	rs         string
	epoch      int
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
	raw := map[string][]item{}
	kinds := map[string]string{}
	epochs := map[string]int{} // Deployment key → its writes so far
	var cur eventlog.Event
	add := func(entity, kind, state string) {
		kinds[entity] = kind
		it := item{state: state, t: cur.T}
		if strings.HasPrefix(cur.Event, "Pod") {
			it.key, it.deleted = cur.Name, cur.Event == eventlog.PodDeleted
			if cur.Kind == "" && cur.ReplicaSet != "" {
				it.rs, it.epoch = cur.ReplicaSet, epochs[eventlog.Key(cur.Namespace, cur.Deployment)]
			}
		}
		raw[entity] = append(raw[entity], it)
	}
	revs := revisions{}
	for _, e := range judge.Ordered(events) {
		cur = e
		if (e.Event == eventlog.DeploymentStatus || e.Event == eventlog.DeploymentWrite) && e.Kind == "" {
			epochs[eventlog.Key(e.Namespace, e.Name)]++
		}
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
	out := make([]Sequence, 0, len(raw))
	for k, items := range raw {
		states := make([]string, len(items))
		for i, it := range items {
			states[i] = it.state
		}
		out = append(out, Sequence{Entity: k, Kind: kinds[k], States: collapse(states), items: items})
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
	// Commuted is how many of the real sequence's states were moved past
	// another pod's state they race with (commute) before the sequences
	// were compared (0: compared as recorded).
	Commuted int
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
// the other" or "no, from state N", followed by "(N races commuted)"
// when the real sequence was compared with racing states commuted.
func (d Difference) Verdict() string {
	v := d.verdict()
	if d.Commuted > 0 {
		v += fmt.Sprintf(" (%d races commuted)", d.Commuted)
	}
	return v
}

func (d Difference) verdict() string {
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
// in one order in both: restricted to the states they share, either
//
//   - with the later repeats of a state dropped from the side that shows
//     it more often (each keeps its first occurrences, as many as the
//     other side has), the two are equal: a transient status that one
//     backend passes through again in a second rollout and the other does
//     not; or
//   - one skips only transient occurrences of the other (skipsTransients):
//     the real Deployment controller publishing one status for two pod
//     deletions 100 ms apart, "avail 2" then "avail 0", where the
//     simulator shows "avail 1" on the way down and again on the way up.
//
// A state shown before another on one side and after it on the other (also
// a final state shown early, then left, then reached again) is not.
// Sequences with no state in common share no order: they disagree.
func sameSharedOrder(a, b []string) bool {
	ra, rb := restrict(a, b), restrict(b, a)
	if len(ra) == 0 {
		return false
	}
	ca, cb := counts(ra), counts(rb)
	return slices.Equal(firstOccurrences(ra, cb), firstOccurrences(rb, ca)) || skipsTransients(ra, rb) || skipsTransients(rb, ra)
}

// skipsTransients reports whether short is long with some occurrences
// left out, none of them of the final state: short is a subsequence of
// long, both end in the same state, and it occurs as often in both — a
// final state shown early (a rollout claimed complete, then left) is an
// order, not a skipped transient.
func skipsTransients(short, long []string) bool {
	if len(short) == 0 || !subsequence(short, long) {
		return false
	}
	last := short[len(short)-1]
	return long[len(long)-1] == last && counts(short)[last] == counts(long)[last]
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
// empty sequence. Where the sequences do not agree as recorded, they are
// compared again with the real sequence's pod deletions commuted
// (commute), and the better verdict is kept (Difference.Commuted).
func CompareSequences(sim, real []Sequence) []Difference {
	s, r := bySequence(sim), bySequence(real)
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
		d := compareStates(n, kinds[n], s[n].States, r[n].States)
		if !d.Agree() && len(r[n].items) > 0 {
			if moved, n2 := commute(s[n].items, r[n].items); n2 > 0 {
				if d2 := compareStates(n, kinds[n], s[n].States, collapse(moved)); rank(d2) < rank(d) {
					d2.Commuted = n2
					d = d2
				}
			}
		}
		out = append(out, d)
	}
	return out
}

// compareStates is the Difference between two sequences of states.
func compareStates(entity, kind string, a, b []string) Difference {
	d := Difference{Entity: entity, Kind: kind, Sim: len(a), Real: len(b), Index: -1, RealRefines: subsequence(a, b), SimRefines: subsequence(b, a)}
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
	return d
}

// rank orders verdicts: 0 agree, 1 differ in grain, 2 disagree in order.
func rank(d Difference) int {
	switch {
	case d.Agree():
		return 0
	case d.Grain():
		return 1
	}
	return 2
}

// CommuteWindow is how close (in seconds) two states of different pods
// recorded on the real cluster must be for them to race (races): then
// either may be compared on the other's side.
//
// Two races are known, neither a decision of a controller:
//
//   - a deletion and a replacement: kube-apiserver deletes a pod in two
//     writes (registry.Store.Delete: updateForGracefulDeletionAndFinalizers
//     sets deletionTimestamp, then the object is removed), and the
//     ReplicaSet controller replaces the pod as soon as it sees the first:
//     on the local control plane the replacement's creation landed between
//     the two writes for about one deletion in four of the node-lost
//     scenario, 0.7–10.7 ms apart (2026-12-03), and after them otherwise;
//     the simulator commits both writes at one instant;
//   - two ReplicaSets' pods in one Deployment sync epoch: the Deployment
//     controller scales an old ReplicaSet down and a new one up, and the
//     two ReplicaSets are synced by concurrent workers
//     (ReplicaSetController.Run starts ConcurrentRSSyncs of them on one
//     queue, 5 by default: k8s.io/kubernetes v1.37.2
//     pkg/controller/replicaset/config/v1alpha1/defaults.go), so
//     the new pod's creation and the old pod's deletion come in either
//     order: 0.02 ms and 2.1 ms apart on the local control plane with the
//     creation first, where other rollouts showed the deletion first.
const CommuteWindow = 0.020

// races reports whether real states x and y (x recorded before y) may be
// compared in either order: states of two different pods, recorded within
// CommuteWindow of each other, where one is a pod's deletion, or both are
// pods of different ReplicaSets of a Deployment with no write of the
// Deployment (its template or status) between them — decided by one sync
// of its controller and carried out by two ReplicaSet workers.
func races(x, y item) bool {
	if x.key == "" || y.key == "" || x.key == y.key || y.t-x.t >= CommuteWindow {
		return false
	}
	return x.deleted || y.deleted || (x.rs != "" && y.rs != "" && x.rs != y.rs && x.epoch == y.epoch)
}

// commute reorders real (a sequence's recorded states) toward sim: walking
// both, a sim state that real has a little later is taken early if it
// races (races) with every real state it passes. Every other state keeps
// its place. It returns the reordered states and how many were moved.
func commute(sim, real []item) ([]string, int) {
	used := make([]bool, len(real))
	out := make([]string, 0, len(real))
	moved, next := 0, 0
	emit := func(j int) {
		used[j] = true
		out = append(out, real[j].state)
	}
	for i := 0; i < len(sim); {
		for next < len(real) && used[next] {
			next++
		}
		if next == len(real) {
			break
		}
		if real[next].state == sim[i].state {
			emit(next)
			i++
			continue
		}
		if j := movable(real, used, next, sim[i].state); j >= 0 {
			emit(j)
			moved++
			i++
			continue
		}
		if later(real, used, next, sim[i].state) {
			emit(next) // a state only real has here
		} else {
			i++ // a state only sim has
		}
	}
	for j := range real {
		if !used[j] {
			out = append(out, real[j].state)
		}
	}
	return out, moved
}

// movable is the first unused j > next with real[j].state == state that
// may pass every unused state before it (see commute), or -1.
func movable(real []item, used []bool, next int, state string) int {
	for j := next + 1; j < len(real) && real[j].t-real[next].t < CommuteWindow; j++ {
		if used[j] || real[j].state != state || real[j].key == "" {
			continue
		}
		ok := true
		for k := next; k < j && ok; k++ {
			ok = used[k] || races(real[k], real[j])
		}
		if ok {
			return j
		}
	}
	return -1
}

// later reports whether an unused state from next on is state.
func later(real []item, used []bool, next int, state string) bool {
	for j := next; j < len(real); j++ {
		if !used[j] && real[j].state == state {
			return true
		}
	}
	return false
}

// collapse drops consecutive duplicates, as Sequences does.
func collapse(states []string) []string {
	out := make([]string, 0, len(states))
	for _, x := range states {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// bySequence indexes sequences by entity.
func bySequence(seqs []Sequence) map[string]Sequence {
	m := make(map[string]Sequence, len(seqs))
	for _, q := range seqs {
		m[q.Entity] = q
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
