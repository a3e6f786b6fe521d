package judge

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// step is one porcupine operation: a group of facts committed at one
// resourceVersion, or one call of the operator.
type step struct {
	facts []Fact
	op    *Op
	// hash is the pod-template-hash a Deployment write of op produced
	// (the HashAfter of the DeploymentWrite fact it committed), "" when
	// its write changed no template.
	hash string
}

// deployment and pod are the model's view of the cluster: a workload
// (Deployment, StatefulSet or DaemonSet) keyed by eventlog.WorkloadKey,
// a pod by namespace/name.
type deployment struct {
	name   string // the workload's name, for verdicts
	images []string
	hash   string // pod-template-hash of the template ("" in a log without one)
	spec   int32
	// wasRolled: the workload has been fully rolled out (rolled) at some
	// fact since its template last took these images. A claim about a
	// later moment (Completed) may rest on it: a person scaling or
	// restarting a component after it rolled out does not unmake the
	// rollout; a template write to other images does.
	wasRolled bool
}

type pod struct {
	name       string
	deployment string // the owner's eventlog.WorkloadKey
	images     []string
	hash       string
	ready      bool
	deleting   bool
}

// old says whether p does not run d's current template: by
// pod-template-hash (event log v2), by the images only where a hash is
// missing (an operator write whose hash was not recorded).
func (p pod) old(d deployment) bool {
	if p.hash != "" && d.hash != "" {
		return p.hash != d.hash
	}
	return !slices.Equal(p.images, d.images)
}

// world is the model's state: every Deployment's template and desired
// replicas, and every live pod (terminating ones included). Values are
// never mutated once built; hash is the sum of a hash of every entry
// (each Deployment with its key, name, images, hash, spec and wasRolled;
// each pod with its key, owner, images, hash, ready and deleting), so it
// depends on the entries and not on the maps' order, and is computed
// without encoding the world: the judge builds one per step it explores.
type world struct {
	deployments map[string]deployment
	pods        map[string]pod
	hash        uint64
}

func newWorld(deps map[string]deployment, pods map[string]pod) *world {
	w := &world{deployments: deps, pods: pods}
	for k, d := range deps {
		h := entryHash('D', k, d.name, d.images, d.hash)
		h = fnvInt(h, int64(d.spec))
		w.hash += fnvBool(h, d.wasRolled)
	}
	for k, p := range pods {
		h := entryHash('P', k, p.deployment, p.images, p.hash)
		h = fnvBool(h, p.ready)
		w.hash += fnvBool(h, p.deleting)
	}
	return w
}

// equal reports whether w and o hold the same entries.
func (w *world) equal(o *world) bool {
	if w.hash != o.hash || len(w.deployments) != len(o.deployments) || len(w.pods) != len(o.pods) {
		return false
	}
	for k, d := range w.deployments {
		e, ok := o.deployments[k]
		if !ok || d.name != e.name || d.hash != e.hash || d.spec != e.spec || d.wasRolled != e.wasRolled || !slices.Equal(d.images, e.images) {
			return false
		}
	}
	for k, p := range w.pods {
		e, ok := o.pods[k]
		if !ok || p.deployment != e.deployment || p.hash != e.hash || p.ready != e.ready || p.deleting != e.deleting || !slices.Equal(p.images, e.images) {
			return false
		}
	}
	return true
}

// FNV-1a, 64-bit (hash/fnv), over the fields of one entry, each string
// followed by a separator byte no image, key or hash contains.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return (h ^ 0) * fnvPrime
}

func fnvInt(h uint64, v int64) uint64 {
	for i := 0; i < 8; i++ {
		h = (h ^ uint64(byte(v>>(8*i)))) * fnvPrime
	}
	return h
}

func fnvBool(h uint64, b bool) uint64 {
	if b {
		return (h ^ 1) * fnvPrime
	}
	return (h ^ 2) * fnvPrime
}

func entryHash(kind byte, key, owner string, images []string, hash string) uint64 {
	h := (uint64(fnvOffset) ^ uint64(kind)) * fnvPrime
	h = fnvString(h, key)
	h = fnvString(h, owner)
	h = fnvInt(h, int64(len(images)))
	for _, img := range images {
		h = fnvString(h, img)
	}
	return fnvString(h, hash)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// apply returns the world after facts (in recorded order); a workload
// they leave fully rolled out is marked wasRolled.
func (w *world) apply(facts []Fact) *world {
	deps, pods := cloneMap(w.deployments), cloneMap(w.pods)
	touched := map[string]bool{}
	for _, f := range facts {
		applyFact(deps, pods, f.Event)
		key := f.WorkloadKey()
		if p, ok := pods[eventlog.Key(f.Namespace, f.Name)]; ok {
			key = p.deployment
		}
		touched[key] = true
	}
	for key := range touched {
		if d, ok := deps[key]; ok && !d.wasRolled {
			if ok, _ := rolledOut(deps, pods, key, ""); ok {
				d.wasRolled = true
				deps[key] = d
			}
		}
	}
	return newWorld(deps, pods)
}

func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func applyFact(deps map[string]deployment, pods map[string]pod, e eventlog.Event) {
	images := e.Images
	if len(images) == 0 && len(e.Containers) > 0 {
		images = make([]string, len(e.Containers))
		for i, c := range e.Containers {
			images[i] = c.Image
		}
	}
	if len(images) == 0 && e.Image != "" {
		images = []string{e.Image}
	}
	key := e.WorkloadKey()
	switch e.Event {
	case eventlog.DeploymentWrite:
		d := deps[key]
		d.name = e.Name
		d.wasRolled = d.wasRolled && slices.Equal(d.images, images)
		d.images = images
		if e.HashAfter != "" || e.Kind != "" {
			// a StatefulSet's or DaemonSet's write may precede its
			// ControllerRevision: no hash (judged by images) until the
			// Revision fact says it
			d.hash = e.HashAfter
		}
		if _, seen := deps[key]; !seen {
			d.spec = 1
		}
		deps[key] = d
	case eventlog.Revision:
		if d, ok := deps[key]; ok {
			d.hash = e.HashAfter
			deps[key] = d
		}
	case eventlog.DeploymentStatus:
		d := deps[key]
		d.name = e.Name
		d.wasRolled = d.wasRolled && slices.Equal(d.images, images)
		d.images = images
		if e.Status != nil {
			d.spec = e.Status.Spec
		}
		deps[key] = d
	case eventlog.WorkloadStatus:
		// a StatefulSet's spec.replicas, a DaemonSet's
		// status.desiredNumberScheduled (detailed logs): the pods that
		// must be Ready for it to be rolled out
		if d, ok := deps[key]; ok && e.Workload != nil && e.Workload.Spec > 0 {
			d.spec = e.Workload.Spec
			deps[key] = d
		}
	case eventlog.PodCreated:
		pods[eventlog.Key(e.Namespace, e.Name)] = pod{name: e.Name, deployment: key, images: images, hash: e.Hash}
	case eventlog.PodReady:
		k := eventlog.Key(e.Namespace, e.Name)
		if p, ok := pods[k]; ok {
			p.ready = true
			pods[k] = p
		}
	case eventlog.PodDeleting:
		k := eventlog.Key(e.Namespace, e.Name)
		if p, ok := pods[k]; ok {
			p.deleting = true
			pods[k] = p
		}
	case eventlog.PodDeleted:
		delete(pods, eventlog.Key(e.Namespace, e.Name))
	}
}

// rolled says whether the workload of key (eventlog.WorkloadKey) is
// fully rolled out to a template holding image (any image when empty), by
// the ground truth: every live pod of it (terminating pods included) runs
// the current template, none is terminating, and at least spec.replicas
// of them are Ready (a Deployment's or StatefulSet's spec.replicas, a
// DaemonSet's desiredNumberScheduled, as DeploymentStatus and
// WorkloadStatus facts of a detailed log say them; else at least one). The string
// says why not.
func (w *world) rolled(key, image string) (bool, string) {
	return rolledOut(w.deployments, w.pods, key, image)
}

// rolledOut is world.rolled over the maps of a world being built.
func rolledOut(deps map[string]deployment, pods map[string]pod, key, image string) (bool, string) {
	d, ok := deps[key]
	if !ok {
		return false, "workload " + nameOfKey(key) + " not seen"
	}
	name := d.name
	if image != "" && !slices.Contains(d.images, image) {
		return false, fmt.Sprintf("deployment %s runs %s, not %s", name, strings.Join(d.images, ","), image)
	}
	ready := int32(0)
	for _, n := range sortedKeys(pods) {
		p := pods[n]
		if p.deployment != key {
			continue
		}
		switch {
		case p.old(d):
			return false, fmt.Sprintf("old pod %s (%s%s) of %s still exists%s", p.name, hashOf(p), strings.Join(p.images, ","), name, terminating(p))
		case p.deleting:
			return false, fmt.Sprintf("pod %s of %s is terminating", p.name, name)
		case p.ready:
			ready++
		}
	}
	if ready < d.spec {
		return false, fmt.Sprintf("%d of %d pods of %s ready", ready, d.spec, name)
	}
	return true, ""
}

// carries says whether the template of the workload of key holds image.
func (w *world) carries(key, image string) bool {
	d, ok := w.deployments[key]
	return ok && slices.Contains(d.images, image)
}

// rolledOrWas is rolled, or true where the workload has been fully rolled
// out since its template took image (deployment.wasRolled).
func (w *world) rolledOrWas(key, image string) (bool, string) {
	if d, ok := w.deployments[key]; ok && d.wasRolled && slices.Contains(d.images, image) {
		return true, ""
	}
	return w.rolled(key, image)
}

// hashOf is "hash <h>, " for a pod whose template hash is known, else "".
func hashOf(p pod) string {
	if p.hash == "" {
		return ""
	}
	return "hash " + p.hash + ", "
}

func terminating(p pod) string {
	if p.deleting {
		return " (terminating)"
	}
	return ""
}

// judge applies s to w: it returns whether s is legal, why not, and the
// world after it. Facts are always legal. A successful operator write of
// a Deployment sets its template; when it changes the template of a
// component of the reconciled upgrade, it is legal only while every
// component that one depends on is fully rolled out to its target image
// (for a v1alpha1 upgrade: the API's write needs the worker rolled out).
// A status write claims what its phases say, each "rolled out" meaning
// now or at some point since the workload's template took its target (a
// person scaling or restarting it since does not unmake a rollout; a
// write of other images does): a component moving into Upgrading claims
// its dependencies rolled out, into RollingOut or Rolled too unless its
// template already holds its target (that write was judged), into Rolled
// itself rolled out; the upgrade moving into Completed claims every
// component rolled out (v1alpha1: UpgradingAPI claims the worker,
// WaitingForAPI too unless the API's template holds its target,
// Completed both). Only a write is judged against the state now.
func judge(w *world, s step) (bool, string, *world) {
	if s.op == nil {
		return true, "", w.apply(s.facts)
	}
	op := s.op
	if !op.OK() || !op.Write() {
		return true, "", w
	}
	switch {
	case op.FromLog && isStatusClaim(op):
		ok, why := judgeTransition(w, op)
		return ok, why, w
	case op.FromLog:
		// no call recorded: the write is its facts, judged before them
		ok, why := judgeWorkloadWrite(w, op, w.deployments[workloadKeyOf(op)])
		return ok, why, w.apply(s.facts)
	case isWorkload(op.Kind):
		return judgeDeploymentWrite(w, op, s.hash)
	case op.Kind == "ApplicationUpgrade" && op.Sub == "status":
		ok, why := judgeTransition(w, op)
		return ok, why, w
	}
	return true, "", w
}

// isWorkload says whether kind is a workload the operator upgrades.
func isWorkload(kind string) bool {
	switch kind {
	case "Deployment", eventlog.KindStatefulSet, eventlog.KindDaemonSet:
		return true
	}
	return false
}

// workloadKeyOf is the eventlog.WorkloadKey of the workload op wrote.
func workloadKeyOf(op *Op) string { return eventlog.WorkloadKey(op.Kind, op.Namespace, op.Name) }

// nameOfKey is the workload name in an eventlog.WorkloadKey.
func nameOfKey(key string) string { return key[strings.LastIndex(key, "/")+1:] }

// judgeDeploymentWrite applies a recorded write of a workload's template
// (a Deployment, StatefulSet or DaemonSet) and judges it
// (judgeWorkloadWrite).
func judgeDeploymentWrite(w *world, op *Op, hash string) (bool, string, *world) {
	deps := cloneMap(w.deployments)
	key := workloadKeyOf(op)
	before, seen := deps[key]
	if hash == "" && slices.Equal(before.images, op.Images) {
		hash = before.hash
	}
	spec := op.Replicas
	if spec == 0 {
		// a DaemonSet has no spec.replicas: keep what the log said
		spec = max(before.spec, 1)
	}
	deps[key] = deployment{name: op.Name, images: op.Images, hash: hash, spec: spec,
		wasRolled: before.wasRolled && slices.Equal(before.images, op.Images)}
	next := newWorld(deps, w.pods)
	if !seen {
		return true, "", next
	}
	ok, why := judgeWorkloadWrite(w, op, before)
	return ok, why, next
}

// judgeWorkloadWrite judges op, a write of a workload whose template was
// before: a write changing the images of a component of the reconciled
// upgrade is legal only while every component it depends on is fully
// rolled out to its target image.
func judgeWorkloadWrite(w *world, op *Op, before deployment) (bool, string) {
	if slices.Equal(before.images, op.Images) {
		return true, ""
	}
	u := op.Upgrade
	if u == nil {
		return false, strings.ToLower(op.Kind) + " " + op.Name + " written outside a reconcile of an upgrade"
	}
	ns := upgradeNamespace(op)
	c, ok := u.componentOn(op.Kind, op.Namespace, op.Name, ns)
	if !ok {
		return true, ""
	}
	if ok, why := w.dependenciesRolled(u, c, ns, w.rolled); !ok {
		return false, fmt.Sprintf("%s image %s written while %s", label(u, c), strings.Join(op.Images, ","), why)
	}
	return true, ""
}

// upgradeNamespace is the namespace of the upgrade op belongs to: the
// spec's, else the reconciled request's, else op's own.
func upgradeNamespace(op *Op) string {
	if op.Upgrade != nil && op.Upgrade.Namespace != "" {
		return op.Upgrade.Namespace
	}
	if ns, _, ok := strings.Cut(op.Request, "/"); ok && ns != "" {
		return ns
	}
	return op.Namespace
}

// label names component c in a verdict: "API" / "worker" for a v1alpha1
// upgrade (as its phases do), else `component "name"`.
func label(u *UpgradeSpec, c ComponentSpec) string {
	switch {
	case u.Worker != "" && c.Deployment == u.API:
		return "API"
	case u.Worker != "" && c.Deployment == u.Worker:
		return "worker"
	}
	return fmt.Sprintf("component %q", c.Name)
}

// dependenciesRolled says whether every component c depends on is fully
// rolled out to its target image by rolled (world.rolled: now, for a
// write; world.rolledOrWas: now or since it took its target, for a
// claim); ns is the upgrade's namespace; the string says which is not,
// and why.
func (w *world) dependenciesRolled(u *UpgradeSpec, c ComponentSpec, ns string, rolled func(key, image string) (bool, string)) (bool, string) {
	for _, d := range c.DependsOn {
		dep, ok := u.Component(d)
		if !ok {
			continue
		}
		if ok, why := rolled(dep.key(ns), dep.Image); !ok {
			return false, fmt.Sprintf("the %s is not fully rolled out: %s", depLabel(u, dep), why)
		}
	}
	return true, ""
}

func depLabel(u *UpgradeSpec, c ComponentSpec) string {
	if u.Worker != "" && c.Deployment == u.Worker {
		return "worker"
	}
	return fmt.Sprintf("dependency %q", c.Name)
}

func judgeTransition(w *world, op *Op) (bool, string) {
	u := op.Upgrade
	if u == nil {
		return true, ""
	}
	ns := upgradeNamespace(op)
	if ok, why := judgeUpgradePhase(w, op); !ok {
		return false, why
	}
	for _, c := range u.Graph() {
		to, from := op.Components[c.Name], op.PrevComponents[c.Name]
		if to == from {
			continue
		}
		switch v1beta1.ComponentPhase(to) {
		case v1beta1.ComponentUpgrading, v1beta1.ComponentRollingOut, v1beta1.ComponentRolled:
			// once its target image is in its template, that write was
			// judged; its own rollout then claims nothing of its
			// dependencies (a person may restart or revert one since)
			if to != string(v1beta1.ComponentUpgrading) && w.carries(c.key(ns), c.Image) {
				break
			}
			if ok, why := w.dependenciesRolled(u, c, ns, w.rolledOrWas); !ok {
				return false, fmt.Sprintf("component %q claimed %s while %s", c.Name, to, why)
			}
		}
		if to == string(v1beta1.ComponentRolled) {
			if ok, why := w.rolledOrWas(c.key(ns), c.Image); !ok {
				return false, fmt.Sprintf("component %q claimed Rolled while not fully rolled out: %s", c.Name, why)
			}
		}
	}
	return true, ""
}

// judgeUpgradePhase judges the upgrade's own phase change (either API version).
func judgeUpgradePhase(w *world, op *Op) (bool, string) {
	u := op.Upgrade
	ns := upgradeNamespace(op)
	if op.Phase == op.PrevPhase {
		return true, ""
	}
	switch upgradesv1alpha1.Phase(op.Phase) {
	case upgradesv1alpha1.PhaseUpgradingAPI, upgradesv1alpha1.PhaseWaitingForAPI:
		// the API is the component that depends on another (a v1alpha1
		// spec's, or an alpha-shaped graph's whose log says alpha phases)
		for _, c := range u.Graph() {
			if len(c.DependsOn) == 0 {
				continue
			}
			if op.Phase == string(upgradesv1alpha1.PhaseWaitingForAPI) && w.carries(c.key(ns), c.Image) {
				continue // the API's write was judged when it was made
			}
			if ok, why := w.dependenciesRolled(u, c, ns, w.rolledOrWas); !ok {
				return false, fmt.Sprintf("phase %s claimed while %s", op.Phase, why)
			}
		}
	case upgradesv1alpha1.PhaseCompleted:
		for _, c := range u.Graph() {
			if ok, why := w.rolledOrWas(c.key(ns), c.Image); !ok {
				return false, fmt.Sprintf("phase Completed claimed while the %s is not fully rolled out: %s", completedLabel(u, c), why)
			}
		}
	}
	return true, ""
}

func completedLabel(u *UpgradeSpec, c ComponentSpec) string {
	switch {
	case u.Worker != "" && c.Deployment == u.Worker:
		return "worker"
	case u.Worker != "" && c.Deployment == u.API:
		return "API"
	}
	return fmt.Sprintf("component %q", c.Name)
}

// Model is the porcupine model of the ordering contract over the steps of
// one scenario.
var Model = porcupine.Model{
	Init: func() interface{} { return newWorld(map[string]deployment{}, map[string]pod{}) },
	Step: func(state, input, _ interface{}) (bool, interface{}) {
		ok, _, next := judge(state.(*world), input.(step))
		return ok, next
	},
	Equal:             func(a, b interface{}) bool { return a.(*world).equal(b.(*world)) },
	Hash:              func(state interface{}) uint64 { return state.(*world).hash },
	DescribeOperation: func(input, _ interface{}) string { return describeStep(input.(step)) },
	DescribeState:     func(state interface{}) string { return describeWorld(state.(*world)) },
}

func describeStep(s step) string {
	if s.op == nil {
		parts := make([]string, 0, len(s.facts))
		for _, f := range s.facts {
			parts = append(parts, describeFact(f.Event))
		}
		return strings.Join(parts, "; ")
	}
	return describeOp(s.op)
}

func describeFact(e eventlog.Event) string {
	switch e.Event {
	case eventlog.DeploymentStatus:
		c := e.Status
		term := "-"
		if c.Terminating != nil {
			term = fmt.Sprint(*c.Terminating)
		}
		return fmt.Sprintf("%s gen %d og %d spec %d rep %d upd %d avail %d term %s", e.Name, c.Generation, c.ObservedGeneration, c.Spec, c.Replicas, c.Updated, c.Available, term)
	case eventlog.Phase:
		return fmt.Sprintf("%s phase %s", e.Name, e.Phase)
	case eventlog.ComponentPhase:
		return fmt.Sprintf("%s component %s", e.Name, e.Phase)
	case eventlog.DeploymentWrite:
		return fmt.Sprintf("%s image %s", e.Name, e.Image)
	}
	if e.Image != "" {
		return fmt.Sprintf("%s %s (%s)", e.Event, e.Name, e.Image[strings.LastIndex(e.Image, "/")+1:])
	}
	return fmt.Sprintf("%s %s", e.Event, e.Name)
}

func describeOp(o *Op) string {
	var b strings.Builder
	if o.FromLog {
		fmt.Fprintf(&b, "%s %s written (event log, rv %s) → %s", strings.ToLower(o.Kind), o.Name, o.RV, strings.Join(o.Images, ","))
		return b.String()
	}
	fmt.Fprintf(&b, "#%d r%d/%d %s %s", o.ID, o.Replica, o.Reconcile, o.Verb, strings.ToLower(o.Kind))
	if o.Sub != "" {
		b.WriteString("/" + o.Sub)
	}
	if o.Name != "" {
		b.WriteString(" " + o.Name)
	}
	switch {
	case o.Err != "":
		fmt.Fprintf(&b, " → error: %s", o.Err)
	case isWorkload(o.Kind) && o.Write():
		fmt.Fprintf(&b, " → %s", strings.Join(o.Images, ","))
	case o.Kind == "ApplicationUpgrade" && o.Write():
		fmt.Fprintf(&b, " %s → %s%s", o.PrevPhase, o.Phase, describeComponents(o))
	case o.Status != nil:
		c := o.Status
		fmt.Fprintf(&b, " → gen %d og %d rep %d upd %d avail %d", c.Generation, c.ObservedGeneration, c.Replicas, c.Updated, c.Available)
	case o.Items != "":
		b.WriteString(" → " + o.Items)
	case o.Phase != "":
		b.WriteString(" → " + o.Phase)
	}
	return b.String()
}

func describeWorld(w *world) string {
	var b strings.Builder
	for _, n := range sortedKeys(w.deployments) {
		d := w.deployments[n]
		fmt.Fprintf(&b, "%s[%s ×%d]:", d.name, strings.Join(d.images, ","), d.spec)
		for _, pn := range sortedKeys(w.pods) {
			p := w.pods[pn]
			if p.deployment != n {
				continue
			}
			tag := "new"
			if p.old(d) {
				tag = "OLD"
			}
			if p.ready {
				tag += ",ready"
			}
			if p.deleting {
				tag += ",terminating"
			}
			fmt.Fprintf(&b, " %s(%s)", p.name, tag)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// describeComponents lists the component phases a status write changed,
// " (db=Rolled, cache=Upgrading)".
func describeComponents(o *Op) string {
	var parts []string
	for _, n := range sortedKeys(o.Components) {
		if o.Components[n] != o.PrevComponents[n] {
			parts = append(parts, n+"="+o.Components[n])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
