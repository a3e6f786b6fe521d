package console

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// graph prints u's v1beta1 row — what `kubectl get applicationupgrade`
// shows with the v1beta1 printer columns — and its components (from
// status.components) when the upgrade's phase or a component's phase
// changed since the last time it was shown:
//
//	[t=   12.3s] $ kubectl -n shop get applicationupgrade
//	NAME      PHASE         ROLLED   MESSAGE   AGE
//	shop-v3   Progressing   1/4      ...       6s
//	  COMPONENT   WAVE   PHASE        IMAGE                MESSAGE
//	  db          0      Rolled       shop-db:v3.0.0       ...
func (t *Console) graph(u *upgradesv1beta1.ApplicationUpgrade, at time.Time) {
	if u.Status.Phase == "" {
		return
	}
	k := key(u)
	sig := phases(u)
	if sig == t.shown[k] {
		return
	}
	t.shown[k] = sig
	fmt.Fprintf(t.out, "[t=%7.1fs] $ kubectl -n %s get applicationupgrade\n", at.Sub(t.start).Seconds(), u.Namespace)
	w := tabwriter.NewWriter(t.out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "NAME\tPHASE\tROLLED\tMESSAGE\tAGE")
	age := duration.HumanDuration(at.Sub(u.CreationTimestamp.Time))
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", u.Name, u.Status.Phase, u.Status.RolledOut, u.Status.Message, age)
	_ = w.Flush()
	w = tabwriter.NewWriter(t.out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "  COMPONENT\tWAVE\tPHASE\tIMAGE\tMESSAGE")
	for _, c := range u.Status.Components {
		fmt.Fprintf(w, "  %s\t%d\t%s\t%s\t%s\n", c.Name, c.Wave, none(string(c.Phase)), none(c.ShortImage), none(c.Message))
	}
	_ = w.Flush()
	fmt.Fprintln(t.out)
}

// none is s, or "<none>" (as kubectl's custom columns print a missing
// field) when s is empty.
func none(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// phases is u's phase and its components' phases in one string, e.g.
// "Progressing db=Rolled worker=RollingOut".
func phases(u *upgradesv1beta1.ApplicationUpgrade) string {
	var b strings.Builder
	b.WriteString(string(u.Status.Phase))
	for _, c := range u.Status.Components {
		b.WriteString(" " + c.Name + "=" + string(c.Phase))
	}
	return b.String()
}

// graphVerdict prints a graph upgrade's outcome: its v1beta1 phase, then
// per dependency edge the handoff (the dependency's last old pod deleted →
// the dependent's first write of its new image), then the violations.
func (t *Console) graphVerdict(u *upgradesv1beta1.ApplicationUpgrade, res Summary) {
	k := key(u)
	fmt.Fprintln(t.out, res.upgradeLine(k, string(u.Status.Phase)))
	for _, e := range res.Edges[k] {
		edge := e.Dependency + " → " + e.Dependent
		switch {
		case e.FirstAPIWrite < 0:
			fmt.Fprintf(t.out, "  %s: %s image never written\n", edge, e.API)
		case e.LastOldWorkerDeleted < 0:
			fmt.Fprintf(t.out, "  %s: %s image written at %.1fs, no old %s pod deleted before it\n", edge, e.API, e.FirstAPIWrite, e.Worker)
		default:
			fmt.Fprintf(t.out, "  %s: last old %s pod deleted at %.1fs, %s image written at %.1fs: handoff %.3fs\n",
				edge, e.Worker, e.LastOldWorkerDeleted, e.API, e.FirstAPIWrite, e.Handoff)
		}
	}
	rep := res.Reports[k]
	fmt.Fprintf(t.out, "  ordering violations: %d\n", len(rep.Violations))
	for _, v := range rep.Violations {
		fmt.Fprintf(t.out, "    %s\n", v)
	}
}

// deploymentRanks orders the Deployments of the graph upgrades for the pod
// timeline: upgrades by namespace/name, then components by wave (spec order
// within a wave). A Deployment of two upgrades keeps its first rank.
func deploymentRanks(graphs map[string]upgradesv1beta1.ApplicationUpgrade) map[string]int {
	keys := make([]string, 0, len(graphs))
	for k := range graphs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ranks := map[string]int{}
	for _, k := range keys {
		u := graphs[k]
		wave := map[string]int32{}
		for _, c := range u.Status.Components {
			wave[c.Name] = c.Wave
		}
		cs := append([]upgradesv1beta1.Component(nil), u.Spec.Components...)
		sort.SliceStable(cs, func(i, j int) bool { return wave[cs[i].Name] < wave[cs[j].Name] })
		for _, c := range cs {
			if _, ok := ranks[c.WorkloadName()]; !ok {
				ranks[c.WorkloadName()] = len(ranks)
			}
		}
	}
	return ranks
}
