package eventlog

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// Recorder turns watch events of Deployments, pods and ApplicationUpgrades
// into Events. It keeps the last state it saw of each object (watches carry
// no "old" object), so the same code serves the simulator's store
// subscription and a real cluster's watches. Safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	start  time.Time
	out    io.Writer
	events []Event
	deps   map[types.NamespacedName]depSeen
	hash   TemplateHashFunc
	header bool // the header line was written
	pods   map[types.NamespacedName]podSeen
	phases map[types.NamespacedName]string
	comps  map[types.NamespacedName]map[string]string // component → phase@generation
	err    error

	detailed bool
	counters map[types.NamespacedName]Counters
	// wcounters: the last WorkloadCounters of each StatefulSet and DaemonSet, by WorkloadKey
	wcounters map[string]WorkloadCounters

	// workloads and revisions: StatefulSets and DaemonSets by WorkloadKey
	workloads map[string]workloadSeen
	revisions map[string]map[string]revisionSeen // workload → ControllerRevision name → revision
}

// workloadSeen is what the recorder last saw of a StatefulSet or
// DaemonSet: its template and the controller-revision-hash its pods get
// ("" until a ControllerRevision of the template is seen).
type workloadSeen struct {
	template corev1.PodTemplateSpec
	hash     string
}

// revisionSeen is a ControllerRevision's pod template (decoded from its
// data) and the controller-revision-hash label value of its pods.
type revisionSeen struct {
	template corev1.PodTemplateSpec
	podHash  string
}

type podSeen struct {
	ready, deleting bool
}

// depSeen is what the recorder last saw of a Deployment: its template's
// containers and pod-template-hash, and the generation and collisionCount
// that hash was computed at.
type depSeen struct {
	containers []Container
	hash       string
	generation int64
	collisions int32
}

// TemplateHashFunc computes the pod-template-hash a Deployment controller
// gives the pods of template at collisionCount: TemplateHash on a real
// cluster, the simulator's own function there (SetTemplateHash).
type TemplateHashFunc func(template *corev1.PodTemplateSpec, collisionCount *int32) string

// NewRecorder records times relative to start; out (may be nil) receives each
// event as a JSON line as soon as it is recorded.
func NewRecorder(start time.Time, out io.Writer) *Recorder {
	return &Recorder{start: start, out: out, deps: map[types.NamespacedName]depSeen{}, hash: TemplateHash,
		pods: map[types.NamespacedName]podSeen{}, phases: map[types.NamespacedName]string{},
		comps: map[types.NamespacedName]map[string]string{}, workloads: map[string]workloadSeen{},
		revisions: map[string]map[string]revisionSeen{}}
}

// NewDetailedRecorder is NewRecorder that also fills the detailed fields
// (container images, pod-template hashes, the upgrade's generation and
// message) and records DeploymentStatus events: what the history checks
// and the fidelity report read.
func NewDetailedRecorder(start time.Time, out io.Writer) *Recorder {
	r := NewRecorder(start, out)
	r.detailed = true
	r.counters = map[types.NamespacedName]Counters{}
	r.wcounters = map[string]WorkloadCounters{}
	return r
}

// SetTemplateHash replaces the pod-template-hash function (default
// TemplateHash, the real Deployment controller's) by the backend's; the
// simulator's differs (simulator.PodTemplateHash). Call before Observe.
func (r *Recorder) SetTemplateHash(fn TemplateHashFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hash = fn
}

// ObserveUpgrade records a v1alpha1 ApplicationUpgrade event as Observe
// does, from the object it was converted from: hub, at the storage
// version, and alpha, the v1alpha1 object's status.phase — without
// converting v1alpha1 back to the hub (a backend that holds both, the
// simulator, saves a conversion per event).
func (r *Recorder) ObserveUpgrade(typ watch.EventType, hub *upgradesv1beta1.ApplicationUpgrade, alpha upgradesv1alpha1.Phase, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phase(typ, hub, alpha, at)
}

// Observe records what changed in obj at time at; typ is the watch event type.
// Objects of other kinds are ignored.
func (r *Recorder) Observe(typ watch.EventType, obj client.Object, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o := obj.(type) {
	case *appsv1.Deployment:
		r.deployment(typ, o, at)
	case *appsv1.StatefulSet:
		r.workload(typ, KindStatefulSet, o, &o.Spec.Template, at)
		if r.detailed && typ != watch.Deleted {
			r.workloadStatus(KindStatefulSet, o, statefulSetCounters(o), at)
		}
	case *appsv1.DaemonSet:
		r.workload(typ, KindDaemonSet, o, &o.Spec.Template, at)
		if r.detailed && typ != watch.Deleted {
			r.workloadStatus(KindDaemonSet, o, daemonSetCounters(o), at)
		}
	case *appsv1.ControllerRevision:
		r.revision(typ, o, at)
	case *corev1.Pod:
		r.pod(typ, o, at)
	case *upgradesv1alpha1.ApplicationUpgrade:
		hub := &upgradesv1beta1.ApplicationUpgrade{}
		if err := o.ConvertTo(hub); err == nil {
			r.phase(typ, hub, o.Status.Phase, at)
		}
	case *upgradesv1beta1.ApplicationUpgrade:
		r.phase(typ, o, AlphaPhase(o), at)
	}
}

func (r *Recorder) deployment(typ watch.EventType, d *appsv1.Deployment, at time.Time) {
	key := client.ObjectKeyFromObject(d)
	if typ == watch.Deleted {
		delete(r.deps, key)
		if r.detailed {
			delete(r.counters, key)
		}
		return
	}
	prev, seen := r.deps[key]
	now := r.templateOf(d, prev, seen)
	r.deps[key] = now
	images := imagesOf(now.containers)
	base := Event{Event: DeploymentWrite, Namespace: d.Namespace, Name: d.Name, Deployment: d.Name, RV: d.ResourceVersion,
		Containers: now.containers, HashBefore: prev.hash, HashAfter: now.hash}
	if r.detailed {
		base.Images = images
	}
	for _, e := range templateWrites(base, prev.containers, now.containers, seen, prev.hash != now.hash, d) {
		r.add(e, at)
	}
	if r.detailed {
		r.deploymentStatus(key, d, images, at)
	}
}

// templateOf is d's template as the recorder keeps it; the hash is
// recomputed only when the generation or the collisionCount moved.
func (r *Recorder) templateOf(d *appsv1.Deployment, prev depSeen, seen bool) depSeen {
	now := depSeen{containers: containersOf(d.Spec.Template.Spec.Containers), generation: d.Generation}
	if d.Status.CollisionCount != nil {
		now.collisions = *d.Status.CollisionCount
	}
	if seen && prev.generation == now.generation && prev.collisions == now.collisions && prev.hash != "" {
		now.hash = prev.hash
	} else {
		now.hash = r.hash(&d.Spec.Template, d.Status.CollisionCount)
	}
	return now
}

// templateWrites are the DeploymentWrite events of a template change from
// before to after: on creation one event (Container and Image set when
// there is one container); after it one per container whose image
// changed, by name, or one with no Container when only the hash moved
// (another field of the template changed). An event with Container names
// the image's owners in obj's managedFields (ImageOwner).
func templateWrites(base Event, before, after []Container, seen, hashMoved bool, obj metav1.Object) []Event {
	if !seen {
		if len(after) == 1 {
			base.Container, base.Image = after[0].Name, after[0].Image
			base.ImageOwner = appupgrade.ImageOwner(obj, base.Container)
		}
		return []Event{base}
	}
	var out []Event
	for _, c := range after {
		if img, ok := imageIn(before, c.Name); !ok || img != c.Image {
			e := base
			e.Container, e.Image = c.Name, c.Image
			e.ImageOwner = appupgrade.ImageOwner(obj, c.Name)
			out = append(out, e)
		}
	}
	if len(out) == 0 && hashMoved {
		out = append(out, base)
	}
	return out
}

// imageIn is the image of the container named name in cs.
func imageIn(cs []Container, name string) (string, bool) {
	for _, c := range cs {
		if c.Name == name {
			return c.Image, true
		}
	}
	return "", false
}

// deploymentStatus records a DeploymentStatus event when the generation,
// observedGeneration, spec.replicas or a status counter changed.
func (r *Recorder) deploymentStatus(key types.NamespacedName, d *appsv1.Deployment, images []string, at time.Time) {
	c := Counters{Generation: d.Generation, ObservedGeneration: d.Status.ObservedGeneration, Spec: 1,
		Replicas: d.Status.Replicas, Updated: d.Status.UpdatedReplicas, Ready: d.Status.ReadyReplicas,
		Available: d.Status.AvailableReplicas, Terminating: d.Status.TerminatingReplicas, DeadlineExceeded: deadlineExceeded(d)}
	if d.Spec.Replicas != nil {
		c.Spec = *d.Spec.Replicas
	}
	if prev, ok := r.counters[key]; ok && sameCounters(prev, c) {
		return
	}
	r.counters[key] = c
	cp := c
	if c.Terminating != nil {
		t := *c.Terminating
		cp.Terminating = &t
	}
	r.add(Event{Event: DeploymentStatus, Namespace: d.Namespace, Name: d.Name, Deployment: d.Name,
		Images: images, Status: &cp, RV: d.ResourceVersion}, at)
}

// deadlineExceeded is the message of d's Progressing=False /
// ProgressDeadlineExceeded condition, or "".
func deadlineExceeded(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return c.Message
		}
	}
	return ""
}

func sameCounters(a, b Counters) bool {
	ta, tb := a.Terminating, b.Terminating
	a.Terminating, b.Terminating = nil, nil
	if a != b || (ta == nil) != (tb == nil) {
		return false
	}
	return ta == nil || *ta == *tb
}

func (r *Recorder) pod(typ watch.EventType, p *corev1.Pod, at time.Time) {
	key := client.ObjectKeyFromObject(p)
	base := Event{Namespace: p.Namespace, Name: p.Name, Deployment: OwnerDeployment(p), Image: firstImage(p), RV: p.ResourceVersion,
		Containers: containersOf(p.Spec.Containers), Hash: p.Labels[appsv1.DefaultDeploymentUniqueLabelKey], ReplicaSet: ownerReplicaSet(p)}
	if kind, name := ownerWorkload(p); kind != "" {
		base.Kind, base.Deployment, base.Hash = kind, name, p.Labels[appsv1.ControllerRevisionHashLabelKey]
	}
	if r.detailed {
		base.Images = containerImages(p.Spec.Containers)
		base.Node = TargetNode(p)
	}
	prev, seen := r.pods[key]
	if typ == watch.Deleted {
		if seen {
			delete(r.pods, key)
			if exited, ok := lastExit(p); ok {
				t := exited.Sub(r.start).Seconds()
				base.Exited = &t
			}
			r.addKind(base, PodDeleted, at)
		}
		return
	}
	if !seen {
		r.addKind(base, PodCreated, at)
	}
	now := podSeen{ready: prev.ready || podReady(p), deleting: prev.deleting || p.DeletionTimestamp != nil}
	if now.ready && !prev.ready {
		r.addKind(base, PodReady, at)
	}
	if now.deleting && !prev.deleting {
		r.addKind(base, PodDeleting, at)
	}
	r.pods[key] = now
}

// phase records the upgrade's phase (alpha, its v1alpha1 phase, when it
// has one) and every component whose phase changed.
func (r *Recorder) phase(typ watch.EventType, u *upgradesv1beta1.ApplicationUpgrade, alpha upgradesv1alpha1.Phase, at time.Time) {
	key := client.ObjectKeyFromObject(u)
	if typ == watch.Deleted {
		if _, had := r.phases[key]; had {
			r.add(Event{Event: UpgradeDeleted, Namespace: u.Namespace, Name: u.Name, RV: u.ResourceVersion}, at)
		}
		delete(r.phases, key)
		delete(r.comps, key)
		return
	}
	phase := string(u.Status.Phase)
	if alpha != "" {
		phase = string(alpha)
	}
	gen := "@" + strconv.FormatInt(u.Status.ObservedGeneration, 10)
	if phase != "" && phase+gen != r.phases[key] {
		// a spec change that lands in the phase it left is still a new phase
		r.phases[key] = phase + gen
		e := Event{Event: Phase, Namespace: u.Namespace, Name: u.Name, Phase: phase, RV: u.ResourceVersion, Generation: u.Status.ObservedGeneration}
		if r.detailed {
			e.Message = u.Status.Message
		}
		r.add(e, at)
	}
	if r.detailed || alpha == "" {
		// the plain log of a v1alpha1-shaped upgrade stays as it was: its
		// Phase lines say everything
		r.componentPhases(key, u, gen, at)
	}
}

// componentPhases records a ComponentPhase event per component whose
// phase (or generation) changed since the last observation.
func (r *Recorder) componentPhases(key types.NamespacedName, u *upgradesv1beta1.ApplicationUpgrade, gen string, at time.Time) {
	seen := r.comps[key]
	if seen == nil {
		seen = map[string]string{}
		r.comps[key] = seen
	}
	deployments := map[string]string{}
	for _, c := range u.Spec.Components {
		deployments[c.Name] = c.WorkloadName()
	}
	for _, c := range u.Status.Components {
		if c.Phase == "" || seen[c.Name] == string(c.Phase)+gen {
			continue
		}
		seen[c.Name] = string(c.Phase) + gen
		e := Event{Event: ComponentPhase, Namespace: u.Namespace, Name: u.Name, Deployment: deployments[c.Name],
			Phase: c.Name + "=" + string(c.Phase), RV: u.ResourceVersion, Generation: u.Status.ObservedGeneration}
		if r.detailed {
			e.Message = c.Message
		}
		r.add(e, at)
	}
}

// AlphaPhase is u's v1alpha1 phase when v1alpha1 can say u's graph — two
// components, one depending on the other — and "" otherwise.
func AlphaPhase(u *upgradesv1beta1.ApplicationUpgrade) upgradesv1alpha1.Phase {
	if !AlphaShaped(u.Spec) {
		return ""
	}
	var alpha upgradesv1alpha1.ApplicationUpgrade
	if err := alpha.ConvertFrom(u.DeepCopy()); err != nil {
		return ""
	}
	return alpha.Status.Phase
}

// AlphaShaped reports whether spec is a v1alpha1 upgrade's graph: exactly
// two components, one depending on the other alone and that
// other on nothing.
func AlphaShaped(spec upgradesv1beta1.ApplicationUpgradeSpec) bool {
	cs := spec.Components
	if len(cs) != 2 {
		return false
	}
	dependsOnly := func(a, b upgradesv1beta1.Component) bool {
		return len(a.DependsOn) == 1 && a.DependsOn[0] == b.Name && len(b.DependsOn) == 0
	}
	return dependsOnly(cs[0], cs[1]) || dependsOnly(cs[1], cs[0])
}

// ComponentOf splits a ComponentPhase event's phase "<component>=<phase>".
func ComponentOf(e Event) (component, phase string) {
	component, phase, _ = strings.Cut(e.Phase, "=")
	return component, phase
}

func (r *Recorder) addKind(e Event, kind string, at time.Time) {
	e.Event = kind
	r.add(e, at)
}

func (r *Recorder) add(e Event, at time.Time) {
	e.T = at.Sub(r.start).Seconds()
	r.events = append(r.events, e)
	if r.out != nil && r.err == nil {
		if !r.header {
			r.header = true
			if r.err = WriteHeader(r.out); r.err != nil {
				return
			}
		}
		line, _ := json.Marshal(e)
		_, r.err = fmt.Fprintf(r.out, "%s\n", line)
	}
}

// Events returns a copy of everything recorded so far, in recording order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// EventsSince returns a copy of the events recorded after the first n.
func (r *Recorder) EventsSince(n int) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n >= len(r.events) {
		return nil
	}
	return append([]Event(nil), r.events[n:]...)
}

// Err is the first error writing to out, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// lastExit is the latest finishedAt of the pod's terminated containers:
// when the runtime saw the last one exit.
func lastExit(p *corev1.Pod) (time.Time, bool) {
	var last time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(last) {
			last = t.FinishedAt.Time
		}
	}
	return last, !last.IsZero()
}

// OwnerDeployment derives a pod's Deployment from its controlling
// ReplicaSet's name, "<deployment>-<pod-template-hash>"; "" when the pod is
// not a Deployment's.
func OwnerDeployment(p *corev1.Pod) string {
	hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	for _, ref := range p.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "ReplicaSet" && hash != "" {
			return strings.TrimSuffix(ref.Name, "-"+hash)
		}
	}
	return ""
}

// ownerReplicaSet is the name of p's controlling ReplicaSet, or "".
func ownerReplicaSet(p *corev1.Pod) string {
	for _, ref := range p.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "ReplicaSet" {
			return ref.Name
		}
	}
	return ""
}

func containersOf(cs []corev1.Container) []Container {
	out := make([]Container, len(cs))
	for i := range cs {
		out[i] = Container{Name: cs[i].Name, Image: cs[i].Image}
	}
	return out
}

func imagesOf(cs []Container) []string {
	out := make([]string, len(cs))
	for i := range cs {
		out[i] = cs[i].Image
	}
	return out
}

func containerImages(cs []corev1.Container) []string {
	out := make([]string, len(cs))
	for i := range cs {
		out[i] = cs[i].Image
	}
	return out
}

func firstImage(p *corev1.Pod) string {
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	return p.Spec.Containers[0].Image
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
