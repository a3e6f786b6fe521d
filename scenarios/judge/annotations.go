package judge

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Annotations are the pod lifecycles and the Deployment template writes of
// h as porcupine annotations on the timeline Operations lays out (one
// unit of resourceVersion = 4·slotWidth): one bar per pod, from its
// creation to its deletion (or the end of the history), on a row per
// Deployment ("pods of <deployment>"), red for an old pod (its
// pod-template-hash is not one its Deployment's template took from its
// rewrite on, eventlog.DeploymentState.OldHash), green for a new one; one
// mark per template write on the row "template writes".
func Annotations(h History) []porcupine.Annotation {
	events := h.Events()
	final := eventlog.Final(events)
	slot := func(rv string) int64 {
		n, _ := strconv.ParseUint(rv, 10, 64)
		return 4 * int64(n) * slotWidth
	}
	type life struct {
		e                       eventlog.Event
		start, ready, deleting  string
		readyT, deletingT, endT float64
	}
	var out []porcupine.Annotation
	lives := map[string]*life{}
	var order []string
	var last string
	for _, e := range eventlog.Ordered(events) {
		last = e.RV
		k := eventlog.Key(e.Namespace, e.Name)
		switch e.Event {
		case eventlog.DeploymentWrite:
			out = append(out, porcupine.Annotation{Tag: "template writes", Start: slot(e.RV),
				Description: fmt.Sprintf("%s %s", e.Name, writeSummary(e)),
				Details:     fmt.Sprintf("t=%.3fs rv %s, template hash %s → %s", e.T, e.RV, e.HashBefore, e.HashAfter)})
		case eventlog.PodCreated:
			lives[k] = &life{e: e, start: e.RV, readyT: -1, deletingT: -1, endT: -1}
			order = append(order, k)
		case eventlog.PodReady:
			if l := lives[k]; l != nil {
				l.readyT = e.T
			}
		case eventlog.PodDeleting:
			if l := lives[k]; l != nil {
				l.deletingT = e.T
			}
		case eventlog.PodDeleted:
			if l := lives[k]; l != nil {
				l.endT, l.deleting = e.T, e.RV
			}
		}
	}
	for _, k := range order {
		l := lives[k]
		end := l.deleting
		if end == "" {
			end = last
		}
		old, color := "new", "#c8e6c9"
		if d := final.Deployments[l.e.WorkloadKey()]; d != nil && d.OldHash(l.e.Hash) {
			old, color = "OLD", "#ffcdd2"
		}
		out = append(out, porcupine.Annotation{Tag: "pods of " + l.e.Deployment, Start: slot(l.start), End: slot(end),
			Description: fmt.Sprintf("%s (%s, hash %s)", l.e.Name, old, l.e.Hash), BackgroundColor: color,
			Details: fmt.Sprintf("created t=%.3fs, ready %s, terminating %s, deleted %s", l.e.T, at(l.readyT), at(l.deletingT), at(l.endT))})
	}
	return out
}

// writeSummary is "worker=img:v2" for a write of one container, else the
// template's containers (its images where the names are not recorded).
func writeSummary(e eventlog.Event) string {
	switch {
	case e.Container != "":
		return e.Container + "=" + e.Image
	case len(e.Containers) == 0:
		return strings.Join(e.Images, ",")
	}
	parts := make([]string, len(e.Containers))
	for i, c := range e.Containers {
		parts[i] = c.Name + "=" + c.Image
	}
	return strings.Join(parts, ", ")
}

func at(t float64) string {
	if t < 0 {
		return "-"
	}
	return fmt.Sprintf("t=%.3fs", t)
}
