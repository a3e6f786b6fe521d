package appupgrade

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// Reasons of the graph decision, recorded in conditions and events.
const (
	ReasonPlanned            = "ReferencesValid"
	ReasonInvalidGraph       = "InvalidGraph"
	ReasonWaitingForDeps     = "WaitingForDependencies"
	ReasonDependenciesRolled = "DependenciesRolledOut"
	ReasonDependencyNotDone  = "DependencyNoLongerRolledOut"
	ReasonDependencyFailed   = "DependencyFailed"
	ReasonImageWritten       = "ImageWritten"
	ReasonAtTarget           = "ImageAlreadyAtTarget"
	ReasonRolling            = "RollingOut"
	ReasonRolledOut          = "RolledOut"
	ReasonImageChanged       = "ImageChanged"
	ReasonRolloutFailed      = "RolloutFailed"
	ReasonProgressing        = "Progressing"
	// ReasonRecovered: a component Failed by its rollout was later observed
	// fully rolled out at its target image; the upgrade resumes.
	ReasonRecovered = "RolloutRecovered"
	// ReasonDeploymentPaused: a component's Deployment is paused
	// (spec.paused); nothing moves until someone resumes it.
	ReasonDeploymentPaused = "DeploymentPaused"
	// ReasonRolloutPartitioned: a component's StatefulSet has a
	// RollingUpdate partition keeping old pods; a person must lower it.
	ReasonRolloutPartitioned = rollout.ReasonPartitioned
	// ReasonOnDeleteStrategy: a component's StatefulSet or DaemonSet uses
	// the OnDelete strategy and old pods remain; the operator never
	// deletes pods, so a person must.
	ReasonOnDeleteStrategy = rollout.ReasonOnDelete
)

// ClaimedByOtherNamespace is Graph.ClaimedBy for a holder in another
// namespace than the upgrade.
const ClaimedByOtherNamespace = "an ApplicationUpgrade of another namespace"

// Component is one component of a graph upgrade as the reconciler found it.
type Component struct {
	// Spec is the component from spec.components.
	Spec v1beta1.Component
	// Key is the workload's namespace/name.
	Key types.NamespacedName
	// Kind is the workload's kind; "" means Deployment.
	Kind v1beta1.WorkloadKind
	// Deployment is the observed Deployment of a Deployment component; nil
	// for the other kinds, and when ConfigError is set by a failed lookup.
	Deployment *appsv1.Deployment
	// Workload is the observed workload of any kind (the Deployment too);
	// nil when not observed. Decide reads its generation and managed fields.
	Workload metav1.Object
	// Container is the resolved container name (Spec.ContainerName or the only container).
	Container string
	// Image is the image of Container in the workload's pod template.
	Image string
	// ConfigError is a terminal configuration problem (missing Deployment,
	// ambiguous or unknown container, unwatched namespace).
	ConfigError error
	// Rollout is the assessment of the Deployment (rollout.Assess).
	Rollout rollout.Verdict
}

// object is the observed workload (Workload, else Deployment), or nil.
func (c Component) object() metav1.Object {
	if c.Workload != nil && !reflect.ValueOf(c.Workload).IsNil() {
		return c.Workload
	}
	if c.Deployment != nil {
		return c.Deployment
	}
	return nil
}

// WorkloadKey is the kind, namespace and name of c's workload.
func (c Component) WorkloadKey() v1beta1.WorkloadKey {
	kind := c.Kind
	if kind == "" {
		kind = v1beta1.KindDeployment
	}
	return v1beta1.WorkloadKey{Kind: kind, Namespace: c.Key.Namespace, Name: c.Key.Name}
}

// label names c's workload in messages: namespace/name for a Deployment
// (as before workloadRef), "statefulset namespace/name" for other kinds.
func (c Component) label() string {
	if k := c.WorkloadKey(); k.Kind != v1beta1.KindDeployment {
		return k.String()
	}
	return c.Key.String()
}

// AtTarget reports whether the Deployment's template already carries the desired image.
func (c Component) AtTarget() bool { return c.ConfigError == nil && c.Image == c.Spec.Image }

// rolledNow reports whether c is at its target image and fully rolled out
// in this very observation.
func (c Component) rolledNow() bool { return c.AtTarget() && c.Rollout.State == rollout.Rolled }

// Graph is the input of Decide: the upgrade and every component, in spec order.
type Graph struct {
	Upgrade    *v1beta1.ApplicationUpgrade
	Components []Component
	// ClaimedBy names (namespace/name) an older, unfinished ApplicationUpgrade
	// that references one of the same Deployments, or is
	// ClaimedByOtherNamespace when that upgrade is in another namespace
	// (not named, so status discloses nothing of it); while set, this one
	// holds without writing.
	ClaimedBy string
	// ClaimedDeployment is the workload ClaimedBy holds, as
	// v1beta1.WorkloadKey.IndexKey ("namespace/name" for a Deployment).
	ClaimedDeployment string
}

// ComponentStep is the decided phase of one component.
type ComponentStep struct {
	Name    string
	Wave    int32
	Phase   v1beta1.ComponentPhase
	Reason  string
	Message string
}

// Plan is the decision of one reconcile pass: the phase of the upgrade and
// of each component (spec order), and the image writes to perform first —
// at most one per component, each only for a component whose dependencies
// were all observed fully rolled out in this pass.
type Plan struct {
	Phase      v1beta1.Phase
	Reason     string
	Message    string
	Components []ComponentStep
	Writes     []ImageWrite
}

// Decide returns the next step of a graph upgrade. Every component follows
//
//	Pending -> Upgrading -> RollingOut -> Rolled
//	                                   \-> Failed   (dependents: Blocked)
//
// and the upgrade Pending -> Progressing -> Completed | Failed. Components
// are visited in wave order, so a component whose last dependency rolls out
// in this pass becomes Upgrading in the same pass; its image is written in a
// later pass, and only if every dependency is again observed fully rolled
// out then (else it returns to Pending and the dependency to RollingOut).
// A failed component blocks what depends on it, directly or not, and
// nothing else; the upgrade is Failed once nothing can move. A spec change
// (generation ahead of status.observedGeneration) starts over at Pending.
func Decide(g Graph) Plan {
	u := g.Upgrade
	st := u.Status
	if u.Generation != st.ObservedGeneration && st.Phase != "" {
		return restart(g, ReasonSpecChanged, fmt.Sprintf("Spec changed (generation %d): starting over", u.Generation))
	}
	recovered := recoveries(g)
	if st.Phase.Terminal() && len(recovered) == 0 && !(st.Phase == v1beta1.PhaseCompleted && anyReverted(g)) {
		return keep(g, terminalReasonOf(u), st.Message)
	}
	if errs := Validate(u); len(errs) > 0 {
		return failAll(g, nil, joinErrs(errs))
	}
	waves, _ := Waves(u.Spec.Components)
	if st.Phase == "" {
		return restart(g, ReasonSpecChanged, "Validating references")
	}
	if g.ClaimedBy != "" {
		what := "a referenced Deployment"
		if w, ok := v1beta1.ParseIndexKey(g.ClaimedDeployment); ok {
			what = w.String()
		} else if g.ClaimedDeployment != "" {
			what = "deployment " + g.ClaimedDeployment
		}
		by := "ApplicationUpgrade " + g.ClaimedBy
		if g.ClaimedBy == ClaimedByOtherNamespace {
			by = ClaimedByOtherNamespace
		}
		return keep(g, ReasonDeploymentClaimed, "Held: "+what+" is being upgraded by "+
			by+"; this one starts when that one is Completed or Failed, or is deleted")
	}
	if st.Phase == v1beta1.PhasePending {
		if p, failed := failConfig(g, waves); failed {
			return p
		}
	}
	p := Plan{Components: make([]ComponentStep, len(g.Components))}
	index := map[string]int{}
	for i, c := range g.Components {
		index[c.Spec.Name] = i
		p.Components[i] = ComponentStep{Name: c.Spec.Name, Wave: waves[c.Spec.Name], Phase: phaseOf(st, c.Spec.Name)}
		if len(recovered) > 0 && p.Components[i].Phase == v1beta1.ComponentBlocked {
			p.Components[i].Phase = v1beta1.ComponentPending // re-judged against its dependencies below
		}
	}
	changed := ""
	for _, i := range waveOrder(p.Components) {
		before := p.Components[i].Phase
		if recovered[p.Components[i].Name] {
			cs := &p.Components[i]
			cs.Phase, cs.Reason = v1beta1.ComponentRolled, ReasonRecovered
			cs.Message = "Rolled out after its rollout had failed, every old pod gone: " + g.Components[i].label() + " runs " + g.Components[i].Spec.Image
			changed = ReasonRecovered
			continue
		}
		step(g, &p, i, index)
		if p.Components[i].Phase != before && changed == "" {
			changed = p.Components[i].Reason
		}
	}
	summarize(&p, changed)
	return p
}

// recoveries names the components to take out of Failed: the upgrade is
// Failed by a rollout failure (not a configuration error, which stays
// terminal until the spec changes), for the generation it recorded, no
// older upgrade holds its Deployments, and the component, recorded
// Failed, is now observed at its target image and fully rolled out (the
// image was pushed afterwards, the quota raised, or the failure was judged
// on a condition that was not about the current template). Its dependents
// then proceed.
func recoveries(g Graph) map[string]bool {
	u := g.Upgrade
	if !MayRecover(u) || g.ClaimedBy != "" || len(g.Components) == 0 || len(Validate(u)) > 0 {
		return nil
	}
	var out map[string]bool
	for _, c := range g.Components {
		if c.ConfigError == nil && u.Status.Component(c.Spec.Name).Phase == v1beta1.ComponentFailed && c.rolledNow() {
			if out == nil {
				out = map[string]bool{}
			}
			out[c.Spec.Name] = true
		}
	}
	return out
}

// MayRecover reports whether u is Failed by a rollout failure for its
// current generation, so the reconciler keeps observing its Deployments
// for a recovery (configuration errors and Completed are not observed).
func MayRecover(u *v1beta1.ApplicationUpgrade) bool {
	return u.Status.Phase == v1beta1.PhaseFailed && u.Generation == u.Status.ObservedGeneration &&
		terminalReasonOf(u) != ReasonConfigError
}

// step decides component i, reading the already decided phases of its
// dependencies (earlier waves) from p.
func step(g Graph, p *Plan, i int, index map[string]int) {
	c, cs := g.Components[i], &p.Components[i]
	set := func(ph v1beta1.ComponentPhase, reason, msg string) { cs.Phase, cs.Reason, cs.Message = ph, reason, msg }
	if (cs.Phase == v1beta1.ComponentRolled || cs.Phase == v1beta1.ComponentReverted) && reverted(c) {
		set(v1beta1.ComponentReverted, ReasonImageReverted, revertedMessage(g, c))
		return
	}
	if cs.Phase == v1beta1.ComponentReverted {
		waitForRollout(g, c, set) // back at the target image
		return
	}
	if cs.Phase.Terminal() {
		cs.Reason, cs.Message = string(cs.Phase), g.Upgrade.Status.Component(c.Spec.Name).Message
		return
	}
	if c.ConfigError != nil {
		set(v1beta1.ComponentFailed, ReasonConfigError, c.ConfigError.Error())
		return
	}
	var waiting, failed []string
	for _, d := range c.Spec.DependsOn {
		switch p.Components[index[d]].Phase {
		case v1beta1.ComponentRolled:
		case v1beta1.ComponentFailed, v1beta1.ComponentBlocked:
			failed = append(failed, d)
		default:
			waiting = append(waiting, d)
		}
	}
	switch {
	case len(failed) > 0:
		set(v1beta1.ComponentBlocked, ReasonDependencyFailed, "Not upgraded: dependency "+strings.Join(failed, ", ")+" failed")
	case cs.Phase == v1beta1.ComponentPending || cs.Phase == "":
		if len(waiting) > 0 {
			set(v1beta1.ComponentPending, ReasonWaitingForDeps, "Waiting for "+strings.Join(waiting, ", ")+" to roll out")
		} else {
			set(v1beta1.ComponentUpgrading, ReasonDependenciesRolled, dependenciesRolledMessage(c))
		}
	case cs.Phase == v1beta1.ComponentUpgrading:
		upgrade(g, p, i, index, set)
	case cs.Phase == v1beta1.ComponentRollingOut:
		waitForRollout(g, c, set)
	}
}

func dependenciesRolledMessage(c Component) string {
	if len(c.Spec.DependsOn) == 0 {
		return "Upgrading " + c.label()
	}
	noun := "Dependency "
	if len(c.Spec.DependsOn) > 1 {
		noun = "Dependencies "
	}
	return noun + strings.Join(c.Spec.DependsOn, ", ") + " rolled out, every old pod gone: upgrading " + c.label()
}

// upgrade writes component i's image only when every dependency is at its
// target and fully rolled out in this very observation.
func upgrade(g Graph, p *Plan, i int, index map[string]int, set func(v1beta1.ComponentPhase, string, string)) {
	c := g.Components[i]
	for _, d := range c.Spec.DependsOn {
		dep := g.Components[index[d]]
		if !dep.rolledNow() {
			ds := &p.Components[index[d]]
			if ds.Phase == v1beta1.ComponentRolled {
				ds.Phase, ds.Reason, ds.Message = v1beta1.ComponentRollingOut, ReasonDependencyNotDone, "No longer rolled out: "+describeComponent(dep)
			}
			set(v1beta1.ComponentPending, ReasonDependencyNotDone, "Dependency "+d+" no longer rolled out: "+describeComponent(dep))
			return
		}
	}
	if c.AtTarget() {
		set(v1beta1.ComponentRollingOut, ReasonAtTarget, "Already at "+c.Spec.Image+": waiting for the rollout to complete")
		return
	}
	p.Writes = append(p.Writes, ImageWrite{Component: c.Spec.Name, Workload: c.WorkloadKey(), Container: c.Container, Image: c.Spec.Image})
	set(v1beta1.ComponentRollingOut, ReasonImageWritten, "Waiting for the rollout to complete")
}

func waitForRollout(g Graph, c Component, set func(v1beta1.ComponentPhase, string, string)) {
	written := g.Upgrade.Status.Component(c.Spec.Name).WrittenGeneration
	switch {
	case !c.AtTarget() && c.object() != nil && written > 0 && c.object().GetGeneration() < written:
		set(v1beta1.ComponentRollingOut, ReasonWriteNotObserved, fmt.Sprintf("Waiting to observe the image write (%s generation %d)", strings.ToLower(string(c.WorkloadKey().Kind)), written))
	case !c.AtTarget():
		set(v1beta1.ComponentReverted, ReasonImageReverted, revertedMessage(g, c))
	case c.Rollout.State == rollout.Failed:
		set(v1beta1.ComponentFailed, ReasonRolloutFailed, fmt.Sprintf("Rollout of %s failed: %s", c.label(), c.Rollout.Message))
	case c.Rollout.State == rollout.Rolled:
		set(v1beta1.ComponentRolled, ReasonRolledOut, "Rolled out, every old pod gone")
	case c.Rollout.Reason == rollout.ReasonDeploymentPaused:
		set(v1beta1.ComponentRollingOut, ReasonDeploymentPaused, "Waiting for a person: "+c.Rollout.Message)
	case c.Rollout.Reason == rollout.ReasonPartitioned, c.Rollout.Reason == rollout.ReasonOnDelete:
		set(v1beta1.ComponentRollingOut, c.Rollout.Reason, "Waiting for a person: "+c.Rollout.Message)
	default:
		set(v1beta1.ComponentRollingOut, ReasonRolling, "Waiting for the rollout to complete: "+c.Rollout.Message)
	}
}

// reverted reports whether c's Deployment was observed with another image
// than its target, set by someone else than the operator: a configuration
// error is not a revert, and neither is an image the operator's field
// manager alone owns — another upgrade's target (one created after this
// upgrade completed, then perhaps deleted: an attacker trial saw a
// Completed upgrade report that as "reverted by upgrade-operator" and
// block every later upgrade of the Deployment).
func reverted(c Component) bool {
	return c.ConfigError == nil && c.object() != nil && c.Image != c.Spec.Image &&
		ImageOwner(c.object(), c.Container) != FieldManager
}

// anyReverted reports whether any observed component is reverted: a
// Completed upgrade is then decided again instead of kept.
func anyReverted(g Graph) bool {
	for _, c := range g.Components {
		if reverted(c) {
			return true
		}
	}
	return false
}

// revertedMessage says who took c's workload off its target image and to
// what: "after the operator wrote" the target only when the recorded
// status has a write of it (status.components[].writtenGeneration),
// else "after it reached" the target (found there, never written).
func revertedMessage(g Graph, c Component) string {
	by := ""
	if owner := ImageOwner(c.object(), c.Container); owner != "" {
		by = " by " + owner
	}
	after := "after it reached the target " + c.Spec.Image
	if g.Upgrade.Status.Component(c.Spec.Name).WrittenGeneration > 0 {
		after = "after the operator wrote " + c.Spec.Image
	}
	return fmt.Sprintf("Image of %s reverted%s to %s %s: not written again; "+
		"stop the manifest's owner from setting this image, or make it the upgrade's target if it is a newer release (docs/gitops.md)",
		c.label(), by, c.Image, after)
}

func describeComponent(c Component) string {
	if !c.AtTarget() {
		return fmt.Sprintf("image is %s, want %s", c.Image, c.Spec.Image)
	}
	return c.Rollout.Message
}

// summarize derives the upgrade's phase and message from the components.
func summarize(p *Plan, changedReason string) {
	var rolled, active, failed []string
	terminal := true
	for _, c := range p.Components {
		switch c.Phase {
		case v1beta1.ComponentRolled:
			rolled = append(rolled, c.Name)
		case v1beta1.ComponentFailed:
			failed = append(failed, c.Name+": "+c.Message)
		case v1beta1.ComponentUpgrading, v1beta1.ComponentRollingOut:
			active = append(active, c.Name)
		case v1beta1.ComponentReverted:
			active = append(active, c.Name)
			changedReason = ReasonImageReverted // stays the reason while any component is reverted
		}
		terminal = terminal && c.Phase.Terminal()
	}
	switch {
	case len(rolled) == len(p.Components):
		p.Phase, p.Reason = v1beta1.PhaseCompleted, ReasonCompleted
		p.Message = fmt.Sprintf("Upgrade completed: %d %s rolled out", len(rolled), plural(len(rolled), "component", "components"))
	case terminal:
		p.Phase, p.Reason = v1beta1.PhaseFailed, ReasonRolloutFailed
		p.Message = strings.Join(failed, "; ")
		if c := firstFailed(p.Components); c.Reason == ReasonConfigError {
			p.Reason = ReasonConfigError
		}
	default:
		p.Phase, p.Reason = v1beta1.PhaseProgressing, cmp.Or(waitingReason(p.Components), changedReason, ReasonProgressing)
		p.Message = progressMessage(p.Components, active, failed)
	}
}

// WaitingReasons are the reasons of states that wait on a person, not on
// the cluster: the upgrade's Ready and Progressing conditions carry them
// (so kubectl wait, kstatus and Flux show why) and the reconciler emits a
// Warning event when one starts.
var WaitingReasons = map[string]bool{ReasonDeploymentPaused: true, ReasonDeploymentClaimed: true,
	ReasonRolloutPartitioned: true, ReasonOnDeleteStrategy: true}

// waitingReason is the first component's waiting reason, or "".
func waitingReason(cs []ComponentStep) string {
	for _, c := range cs {
		if WaitingReasons[c.Reason] {
			return c.Reason
		}
	}
	return ""
}

func progressMessage(cs []ComponentStep, active, failed []string) string {
	var parts []string
	for _, c := range cs {
		if slices.Contains(active, c.Name) {
			parts = append(parts, fmt.Sprintf("%s (wave %d): %s", c.Name, c.Wave, c.Message))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "Waiting for dependencies")
	}
	if len(failed) > 0 {
		parts = append(parts, "failed: "+strings.Join(failed, "; "))
	}
	return strings.Join(parts, "; ")
}

func firstFailed(cs []ComponentStep) ComponentStep {
	for _, c := range cs {
		if c.Phase == v1beta1.ComponentFailed {
			return c
		}
	}
	return ComponentStep{}
}

// waveOrder returns component indexes by wave, then spec order.
func waveOrder(cs []ComponentStep) []int {
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(cs[a].Wave - cs[b].Wave) })
	return order
}

// restart puts the upgrade and every component at Pending.
func restart(g Graph, reason, msg string) Plan {
	waves, _ := Waves(g.Upgrade.Spec.Components)
	p := Plan{Phase: v1beta1.PhasePending, Reason: reason, Message: msg}
	for _, c := range g.Upgrade.Spec.Components {
		p.Components = append(p.Components, ComponentStep{Name: c.Name, Wave: waves[c.Name], Phase: v1beta1.ComponentPending, Reason: reason})
	}
	return p
}

// keep leaves every phase as recorded, with reason and message for the upgrade.
func keep(g Graph, reason, msg string) Plan {
	st := g.Upgrade.Status
	p := Plan{Phase: st.Phase, Reason: reason, Message: msg}
	for _, c := range st.Components {
		p.Components = append(p.Components, ComponentStep{Name: c.Name, Wave: c.Wave, Phase: c.Phase, Reason: reason, Message: c.Message})
	}
	return p
}

// failAll fails the upgrade before anything is written: its graph or its
// references are unusable.
func failAll(g Graph, waves map[string]int32, msg string) Plan {
	p := Plan{Phase: v1beta1.PhaseFailed, Reason: ReasonConfigError, Message: msg}
	for _, c := range g.Upgrade.Spec.Components {
		p.Components = append(p.Components, ComponentStep{Name: c.Name, Wave: waves[c.Name], Phase: v1beta1.ComponentBlocked, Reason: ReasonConfigError, Message: msg})
	}
	return p
}

// failConfig fails the upgrade before anything is written when a
// component's reference is unusable (Component.ConfigError: a
// missing container, a workload its ServiceAccount may not read, another
// namespace): each such component Failed with its error, every other one
// Blocked, not upgraded because the upgrade failed. false when no
// component has a configuration error.
func failConfig(g Graph, waves map[string]int32) (Plan, bool) {
	var msgs, names []string
	for _, c := range g.Components {
		if c.ConfigError != nil {
			msgs = append(msgs, fmt.Sprintf("%s: %v", c.Spec.Name, c.ConfigError))
			names = append(names, c.Spec.Name)
		}
	}
	if len(msgs) == 0 {
		return Plan{}, false
	}
	p := Plan{Phase: v1beta1.PhaseFailed, Reason: ReasonConfigError, Message: strings.Join(msgs, "; ")}
	for _, c := range g.Components {
		step := ComponentStep{Name: c.Spec.Name, Wave: waves[c.Spec.Name], Phase: v1beta1.ComponentFailed, Reason: ReasonConfigError}
		if c.ConfigError != nil {
			step.Message = c.ConfigError.Error()
		} else {
			step.Phase = v1beta1.ComponentBlocked
			step.Message = "Not upgraded: nothing is written while " + strings.Join(names, ", ") + " cannot be upgraded"
		}
		p.Components = append(p.Components, step)
	}
	return p, true
}

func joinErrs(errs []error) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	return strings.Join(msgs, "; ")
}

// phaseOf is component name's recorded phase, Pending when none is recorded.
func phaseOf(st v1beta1.ApplicationUpgradeStatus, name string) v1beta1.ComponentPhase {
	if p := st.Component(name).Phase; p != "" {
		return p
	}
	return v1beta1.ComponentPending
}

func terminalReasonOf(u *v1beta1.ApplicationUpgrade) string {
	for _, c := range u.Status.Conditions {
		if c.Type == v1beta1.ConditionReady {
			return c.Reason
		}
	}
	return string(u.Status.Phase)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// FailComponent marks component name Failed with reason and msg — an image
// write the API server refused for good, found after Decide — and derives
// the upgrade's phase and message again. Its dependents become Blocked on
// the next pass.
func (p *Plan) FailComponent(name, reason, msg string) {
	for i := range p.Components {
		if c := &p.Components[i]; c.Name == name {
			c.Phase, c.Reason, c.Message = v1beta1.ComponentFailed, reason, msg
		}
	}
	summarize(p, reason)
}

// Has reports whether any component of p is in phase ph.
func (p *Plan) Has(ph v1beta1.ComponentPhase) bool {
	for _, c := range p.Components {
		if c.Phase == ph {
			return true
		}
	}
	return false
}
