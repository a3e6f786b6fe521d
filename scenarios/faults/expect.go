package faults

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/simulator"
)

// Terminal states a schedule can demand.
const (
	ExpectCompleted = "Completed"
	ExpectFailed    = "Failed"
	ExpectDeleted   = "Deleted"
)

// targetSpec is what an upgrade asks for at the moment: it decides the
// terminal state the run must end in.
type targetSpec struct {
	// comps are the upgrade's components with their current target images.
	comps   []component
	deleted bool
}

func newTargetSpec(u client.Object) *targetSpec { return &targetSpec{comps: componentsOf(u)} }

// graph reports whether the upgrade was given as v1beta1.
func (s *targetSpec) graph() bool { return len(s.comps) > 0 && s.comps[0].Graph }

// component returns the component called name (ok false: none).
func (s *targetSpec) component(name string) (*component, bool) {
	for i := range s.comps {
		if s.comps[i].Name == name {
			return &s.comps[i], true
		}
	}
	return nil, false
}

// Expectation is the terminal state an upgrade must reach.
type Expectation struct {
	State string
	// Reason is the Ready condition's reason a Failed upgrade must carry.
	Reason string
	Why    string
	// Failed are the components whose rollout must fail (their target
	// image can never be Ready), Blocked those that depend on one of them,
	// directly or not: never written. Every other component is rolled out.
	Failed, Blocked []string
}

// rolled reports whether the expectation has component name rolled out.
func (e Expectation) rolled(name string) bool {
	return !slices.Contains(e.Failed, name) && !slices.Contains(e.Blocked, name)
}

// expect computes the expectation per graph: a component whose target
// image can never be Ready fails, unless a component it depends on
// (directly or not) fails first: then it is blocked, as is everything
// that depends on a failed component (operator/appupgrade.Decide: "a
// failed component blocks what depends on it, directly or not, and
// nothing else"). The upgrade is Failed when any component fails, and
// names the failed ones; else Completed.
func (s *targetSpec) expect() Expectation {
	if s.deleted {
		return Expectation{State: ExpectDeleted, Why: "the upgrade was deleted"}
	}
	failed, blocked := s.failedAndBlocked()
	if len(failed) == 0 {
		return Expectation{State: ExpectCompleted}
	}
	e := Expectation{State: ExpectFailed, Failed: failed, Blocked: blocked}
	if !s.graph() {
		c, _ := s.component(failed[0])
		e.Reason, e.Why = controller.ReasonWorkerRolloutFailed, "worker image "+c.Image+" cannot roll out"
		if c.Name == "api" {
			e.Reason, e.Why = controller.ReasonAPIRolloutFailed, "API image "+c.Image+" cannot roll out"
		}
		return e
	}
	var why []string
	for _, name := range failed {
		c, _ := s.component(name)
		why = append(why, "component "+name+" image "+c.Image+" cannot roll out")
	}
	if len(blocked) > 0 {
		why = append(why, "blocked: "+strings.Join(blocked, ", "))
	}
	e.Reason, e.Why = appupgrade.ReasonRolloutFailed, strings.Join(why, "; ")
	return e
}

// failedAndBlocked splits the components whose target can never be Ready
// (badImage) and their transitive dependents into those that fail and
// those that are blocked, in spec order.
func (s *targetSpec) failedAndBlocked() (failed, blocked []string) {
	isBlocked := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, c := range s.comps {
			if isBlocked[c.Name] {
				continue
			}
			for _, d := range c.DependsOn {
				if dc, ok := s.component(d); ok && (isBlocked[d] || badImage(dc.Image)) {
					isBlocked[c.Name], changed = true, true
					break
				}
			}
		}
	}
	for _, c := range s.comps {
		switch {
		case isBlocked[c.Name]:
			blocked = append(blocked, c.Name)
		case badImage(c.Image):
			failed = append(failed, c.Name)
		}
	}
	return failed, blocked
}

// badImage reports whether the kubelet model can never make image Ready.
func badImage(image string) bool {
	switch imageTag(image) {
	case simulator.ImageTagNotFound, simulator.ImageTagCrashLoop, simulator.ImageTagNeverReady:
		return true
	}
	return false
}

func imageTag(image string) string {
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[colon+1:]
	}
	return ""
}

// retag replaces image's tag.
func retag(image, tag string) string {
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		image = image[:colon]
	}
	return image + ":" + tag
}

// check judges a v1alpha1 upgrade's terminal state.
func check(key string, want Expectation, u *upgradesv1alpha1.ApplicationUpgrade) string {
	if want.State == ExpectDeleted {
		if u != nil {
			return fmt.Sprintf("upgrade %s: expected deleted, found in phase %s", key, u.Status.Phase)
		}
		return ""
	}
	if u == nil {
		return fmt.Sprintf("upgrade %s: expected %s, but it does not exist", key, want.State)
	}
	why := ""
	if want.Why != "" {
		why = " (" + want.Why + ")"
	}
	if string(u.Status.Phase) != want.State {
		return fmt.Sprintf("upgrade %s: expected %s%s, ended %s: %s", key, want.State, why, u.Status.Phase, u.Status.Message)
	}
	if want.Reason != "" {
		if c := meta.FindStatusCondition(u.Status.Conditions, upgradesv1alpha1.ConditionReady); c == nil || c.Reason != want.Reason {
			return fmt.Sprintf("upgrade %s: Failed%s, but not with reason %s: %s", key, why, want.Reason, u.Status.Message)
		}
	}
	return ""
}

// checkGraph judges a v1beta1 upgrade's terminal state, component by
// component: Failed ones Failed and named in the upgrade's message,
// Blocked ones Blocked, every other one Rolled.
func checkGraph(key string, want Expectation, g *upgradesv1beta1.ApplicationUpgrade) []string {
	if want.State == ExpectDeleted {
		if g != nil {
			return []string{fmt.Sprintf("upgrade %s: expected deleted, found in phase %s", key, g.Status.Phase)}
		}
		return nil
	}
	if g == nil {
		return []string{fmt.Sprintf("upgrade %s: expected %s, but it does not exist", key, want.State)}
	}
	why := ""
	if want.Why != "" {
		why = " (" + want.Why + ")"
	}
	if string(g.Status.Phase) != want.State {
		return []string{fmt.Sprintf("upgrade %s: expected %s%s, ended %s: %s", key, want.State, why, g.Status.Phase, g.Status.Message)}
	}
	var out []string
	if want.Reason != "" {
		if c := meta.FindStatusCondition(g.Status.Conditions, upgradesv1beta1.ConditionReady); c == nil || c.Reason != want.Reason {
			out = append(out, fmt.Sprintf("upgrade %s: Failed%s, but not with reason %s: %s", key, why, want.Reason, g.Status.Message))
		}
	}
	phases := map[string]upgradesv1beta1.ComponentPhase{}
	for _, c := range g.Status.Components {
		phases[c.Name] = c.Phase
	}
	for _, c := range g.Spec.Components {
		wantPhase := upgradesv1beta1.ComponentRolled
		switch {
		case slices.Contains(want.Failed, c.Name):
			wantPhase = upgradesv1beta1.ComponentFailed
			if !strings.Contains(g.Status.Message, c.Name+": ") {
				out = append(out, fmt.Sprintf("upgrade %s: Failed, but its message does not name the failed component %s: %s", key, c.Name, g.Status.Message))
			}
		case slices.Contains(want.Blocked, c.Name):
			wantPhase = upgradesv1beta1.ComponentBlocked
		}
		if phases[c.Name] != wantPhase {
			out = append(out, fmt.Sprintf("upgrade %s: %s, but component %s is %s, want %s%s", key, g.Status.Phase, c.Name, orNone(phases[c.Name]), wantPhase, why))
		}
	}
	return out
}

func orNone(p upgradesv1beta1.ComponentPhase) string {
	if p == "" {
		return "without a phase"
	}
	return string(p)
}

// checkWrites judges the writes of every component of an upgrade that
// was not deleted: a blocked component is never written — no workload
// write in the event log changes its container's image away from the
// one it was created with — and a component that rolls out or fails was
// written by the operator with its final target image (at least once;
// more than once since the targets last changed is the injector's
// duplicate-write violation).
func (in *Injector) checkWrites(key string, s *targetSpec, want Expectation, events []eventlog.Event) []string {
	if want.State == ExpectDeleted {
		return nil
	}
	var out []string
	for _, c := range s.comps {
		orig := originalImage(in.objs, c)
		if slices.Contains(want.Blocked, c.Name) {
			if e, img, ok := imageChanged(events, c, containerName(in.objs, c), orig); ok {
				out = append(out, fmt.Sprintf("upgrade %s: %s was written at %.1fs (image %s) although it depends on a failed component (%s): a blocked component is never written",
					key, c.label(), e.T, img, strings.Join(want.Failed, ", ")))
			}
			continue
		}
		if orig == c.Image || in.wrote(c) {
			continue
		}
		out = append(out, fmt.Sprintf("upgrade %s: %s ended %s but the operator never wrote its image %s", key, c.label(), map[bool]string{true: "rolled out", false: "failed"}[want.rolled(c.Name)], c.Image))
	}
	return out
}

// imageChanged returns the first workload write of c's workload in events
// whose container image is neither "" nor orig.
func imageChanged(events []eventlog.Event, c component, container, orig string) (eventlog.Event, string, bool) {
	kind := string(c.Kind)
	if c.Kind == upgradesv1beta1.KindDeployment {
		kind = ""
	}
	for _, e := range events {
		if e.Event != eventlog.DeploymentWrite || e.Namespace != c.Workload.Namespace || e.Deployment != c.Workload.Name || e.Kind != kind {
			continue
		}
		for _, ct := range e.Containers {
			if ct.Name == container && ct.Image != "" && ct.Image != orig {
				return e, ct.Image, true
			}
		}
	}
	return eventlog.Event{}, "", false
}

// wrote reports whether the operator committed c's target image to c's
// workload during the run.
func (in *Injector) wrote(c component) bool {
	for _, w := range in.writeLog {
		if w.Deployment == c.writeName() && slices.Contains(strings.Split(w.Image, ","), c.Image) {
			return true
		}
	}
	return false
}
