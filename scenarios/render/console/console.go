// Package console writes what a user watching the cluster would see
// during an upgrade — the same on the simulator and on a real cluster. It
// is the text `make simulate` and `make demo` print; the golden
// *.transcript files of scenarios/sim/simrun hold it. (Formerly package
// transcript: "transcript" now names only those golden files and the
// simulator's script/expected-output tests.)
package console

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// Console writes the `kubectl get applicationupgrade` table at each
// phase change (timestamps in seconds since start; virtual in the
// simulator), then a per-pod timeline, the operator's events and the
// ordering verdict. Its output depends only on what it observes, so a
// simulated run's transcript is deterministic for a seed.
//
// An upgrade is shown at v1alpha1 (columns WORKER and API) when v1alpha1
// can say its graph (eventlog.AlphaShaped) and it was not marked with
// Graph; otherwise as a graph at v1beta1 (columns ROLLED, and a table of
// the components) whenever the upgrade's or a component's phase changes.
type Console struct {
	out    io.Writer
	start  time.Time
	phases map[string]upgradesv1alpha1.Phase
	graphs map[string]bool   // namespace/name shown as a graph whatever its shape
	shown  map[string]string // namespace/name → the phases last shown as a graph
}

// New returns a Console writing to out (nil writes nothing), with times
// relative to start.
func New(out io.Writer, start time.Time) *Console {
	return &Console{out: out, start: start, phases: map[string]upgradesv1alpha1.Phase{},
		graphs: map[string]bool{}, shown: map[string]string{}}
}

// Graph marks the upgrade namespace/name (one applied at v1beta1) to be
// shown as a graph even when v1alpha1 could say it. Call it before the
// upgrade is created.
func (t *Console) Graph(namespace, name string) { t.graphs[namespace+"/"+name] = true }

// KubeEvent is a Kubernetes event the operator emitted.
type KubeEvent struct {
	At     time.Duration // since the start
	Object string        // namespace/name of the regarding object
	Type   string        // Normal or Warning
	Reason string
	Note   string
}

// Summary is the end state of a run, printed by Finish.
type Summary struct {
	// Upgrades are the ApplicationUpgrades at the end, sorted by namespace/name.
	Upgrades []upgradesv1alpha1.ApplicationUpgrade
	// Elapsed is the run's duration (virtual in the simulator).
	Elapsed time.Duration
	// Events is the event log.
	Events []eventlog.Event
	// KubeEvents are the Kubernetes events the operator emitted.
	KubeEvents []KubeEvent
	// Reports holds the ordering check of each upgrade, by namespace/name;
	// for a graph upgrade, judge.Combine of its Edges.
	Reports map[string]judge.Report
	// Graphs are the upgrades shown as graphs (see Console), at
	// v1beta1, by namespace/name; nil or without the key for the others.
	Graphs map[string]upgradesv1beta1.ApplicationUpgrade
	// Edges holds judge.GraphOrdering of each graph upgrade, by namespace/name.
	Edges map[string][]judge.EdgeReport
	// Reconciles counts the operator's reconcile calls; -1 when unknown.
	Reconciles int
	// ReconcilesBy counts them per upgrade (namespace/name); nil when
	// unknown (Reconciles is printed then).
	ReconcilesBy map[string]int
	// Judged is the one judge's verdict on the run (judge.Judge: the
	// porcupine model, the invariants and every edge's ordering); nil
	// when the run was not judged.
	Judged *judge.Result
}

// upgradeLine is an upgrade's verdict line: its phase, its own duration
// (from its first recorded phase to its first Completed or Failed, else to
// the end of the run) and its own reconcile count where known.
func (res Summary) upgradeLine(k, phase string) string {
	n := res.Reconciles
	if res.ReconcilesBy != nil {
		n = res.ReconcilesBy[k]
	}
	return fmt.Sprintf("%s: %s after %s%s", k, phase, res.duration(k), reconciles(n))
}

// duration is upgrade k's span in the event log (see upgradeLine); the
// run's Elapsed when the log has no phase of it.
func (res Summary) duration(k string) time.Duration {
	first, end := -1.0, -1.0
	for _, e := range res.Events {
		if e.Event != eventlog.Phase || e.Namespace+"/"+e.Name != k {
			continue
		}
		if first < 0 {
			first = e.T
		}
		if end < 0 && (e.Phase == string(upgradesv1alpha1.PhaseCompleted) || e.Phase == string(upgradesv1alpha1.PhaseFailed)) {
			end = e.T
		}
	}
	if first < 0 {
		return res.Elapsed
	}
	if end < 0 {
		end = res.Elapsed.Seconds()
	}
	return time.Duration((end - first) * float64(time.Second)).Round(time.Millisecond)
}

// Observe prints the table when obj is an ApplicationUpgrade (at either
// version) whose phase, or for a graph one of whose components' phases,
// changed.
func (t *Console) Observe(typ watch.EventType, obj client.Object, at time.Time) {
	if t.out == nil || typ == watch.Deleted {
		return
	}
	var u *upgradesv1alpha1.ApplicationUpgrade
	hub := &upgradesv1beta1.ApplicationUpgrade{}
	switch o := obj.(type) {
	case *upgradesv1alpha1.ApplicationUpgrade:
		if o.ConvertTo(hub) != nil {
			return
		}
		u = o
	case *upgradesv1beta1.ApplicationUpgrade:
		hub, u = o, &upgradesv1alpha1.ApplicationUpgrade{}
		if u.ConvertFrom(o.DeepCopy()) != nil {
			return
		}
	default:
		return
	}
	if t.graphs[key(u)] || !eventlog.AlphaShaped(hub.Spec) {
		t.graph(hub, at)
		return
	}
	t.alpha(u, at)
}

// alpha prints u's v1alpha1 row when its phase changed.
func (t *Console) alpha(u *upgradesv1alpha1.ApplicationUpgrade, at time.Time) {
	k := key(u)
	if u.Status.Phase == "" || u.Status.Phase == t.phases[k] {
		return
	}
	t.phases[k] = u.Status.Phase
	fmt.Fprintf(t.out, "[t=%7.1fs] $ kubectl -n %s get applicationupgrade\n", at.Sub(t.start).Seconds(), u.Namespace)
	w := tabwriter.NewWriter(t.out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "NAME\tPHASE\tWORKER\tAPI\tMESSAGE\tAGE")
	age := duration.HumanDuration(at.Sub(u.CreationTimestamp.Time))
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", u.Name, u.Status.Phase, u.Status.Worker.ShortImage, u.Status.API.ShortImage, u.Status.Message, age)
	_ = w.Flush()
	fmt.Fprintln(t.out)
}

// podLife is one pod's timeline in virtual seconds; -1 means "did not happen".
type podLife struct {
	name, deployment, image           string
	created, ready, deleting, deleted float64
}

// Finish prints the pod timeline, the events and each upgrade's verdict.
func (t *Console) Finish(res Summary) {
	if t.out == nil {
		return
	}
	t.pods(res.Events, deploymentRanks(res.Graphs))
	fmt.Fprintln(t.out, "Events:")
	w := tabwriter.NewWriter(t.out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "  T\tTYPE\tREASON\tOBJECT\tMESSAGE")
	for _, e := range res.KubeEvents {
		fmt.Fprintf(w, "  %.1fs\t%s\t%s\t%s\t%s\n", e.At.Seconds(), e.Type, e.Reason, e.Object, e.Note)
	}
	_ = w.Flush()
	fmt.Fprintln(t.out)
	for _, u := range res.Upgrades {
		if g, ok := res.Graphs[key(&u)]; ok {
			t.graphVerdict(&g, res)
			continue
		}
		rep := res.Reports[key(&u)]
		fmt.Fprintln(t.out, res.upgradeLine(key(&u), string(u.Status.Phase)))
		switch {
		case rep.FirstAPIWrite < 0:
		case rep.LastOldWorkerDeleted < 0:
			// no old worker pod (none ran, or the worker was not rewritten): no handoff to show
			fmt.Fprintf(t.out, "  API image written at %.1fs, no old worker pod deleted before it\n", rep.FirstAPIWrite)
		default:
			fmt.Fprintf(t.out, "  last old worker pod deleted at %.1fs, API image written at %.1fs: handoff %.3fs\n",
				rep.LastOldWorkerDeleted, rep.FirstAPIWrite, rep.Handoff)
		}
		fmt.Fprintf(t.out, "  ordering violations: %d\n", len(rep.Violations))
		for _, v := range rep.Violations {
			fmt.Fprintf(t.out, "    %s\n", v)
		}
	}
}

// pods prints the per-pod timeline from the event log: pods of the
// Deployments in ranks first, in rank order (a graph's waves), then the
// others, a Deployment's pods in the order they appeared.
func (t *Console) pods(events []eventlog.Event, ranks map[string]int) {
	byName := map[string]*podLife{}
	lives := map[string]string{} // namespace/name → the key of its current life in byName
	var order []string
	podImage := eventlog.PodImages(events)
	for _, e := range events {
		if !strings.HasPrefix(e.Event, "Pod") {
			continue
		}
		// a StatefulSet's new pod-N reuses the old pod-N's name: a
		// creation after a deletion starts another line
		k := e.Namespace + "/" + e.Name
		for n := 2; ; n++ {
			if p := byName[k]; p == nil || p.deleted < 0 || e.Event != eventlog.PodCreated {
				break
			}
			k = fmt.Sprintf("%s/%s#%d", e.Namespace, e.Name, n)
		}
		if e.Event != eventlog.PodCreated {
			k = lives[e.Namespace+"/"+e.Name]
		}
		p, ok := byName[k]
		if !ok {
			p = &podLife{name: e.Name, deployment: e.Deployment, image: podImage(e), created: -1, ready: -1, deleting: -1, deleted: -1}
			byName[k] = p
			order = append(order, k)
		}
		lives[e.Namespace+"/"+e.Name] = k
		switch e.Event {
		case eventlog.PodCreated:
			p.created = e.T
		case eventlog.PodReady:
			p.ready = e.T
		case eventlog.PodDeleting:
			p.deleting = e.T
		case eventlog.PodDeleted:
			p.deleted = e.T
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := byName[order[i]], byName[order[j]]
		ra, oka := ranks[a.deployment]
		rb, okb := ranks[b.deployment]
		if oka || okb {
			switch {
			case oka && okb:
				return ra < rb
			default:
				return oka
			}
		}
		if a.deployment != b.deployment {
			return a.deployment > b.deployment // job-worker before job-api
		}
		return false
	})
	fmt.Fprintln(t.out, "Pod timeline (seconds since start):")
	w := tabwriter.NewWriter(t.out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "  POD\tDEPLOYMENT\tIMAGE\tCREATED\tREADY\tDELETING\tDELETED")
	for _, k := range order {
		p := byName[k]
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.name, p.deployment, controller.ShortImage(p.image),
			secs(p.created), secs(p.ready), secs(p.deleting), secs(p.deleted))
	}
	_ = w.Flush()
	fmt.Fprintln(t.out)
}

func secs(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func reconciles(n int) string {
	if n < 0 {
		return ""
	}
	return fmt.Sprintf(" (%d reconciles)", n)
}

func key(u client.Object) string { return u.GetNamespace() + "/" + u.GetName() }
