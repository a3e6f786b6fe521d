package rollout

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/internal/objmeta"
)

// DefaultMaxRestarts is how many restarts a new pod in CrashLoopBackOff may
// have before the rollout is declared Failed, when Options.MaxRestarts is 0.
const DefaultMaxRestarts = 3

// Options tune Assess. The zero value is the product's behaviour.
type Options struct {
	// MaxRestarts: a new pod waiting in CrashLoopBackOff with at least this
	// many restarts fails the rollout. 0 means DefaultMaxRestarts.
	MaxRestarts int32
	// Now is the time the pod-list rule judges availability at when the
	// Deployment has minReadySeconds > 0 (podsSettled); zero disables the
	// rule for such Deployments.
	Now time.Time
	// Templates remembers template comparisons between calls (see
	// TemplateMatch); nil compares every time.
	Templates *TemplateMatch
}

// Assess decides whether d is fully rolled out, from the Deployment, the
// ReplicaSets it owns and the pods its selector matches — including pods that
// carry a deletionTimestamp. It implements the four-part definition in
// docs/DESIGN.md ("fully rolled"), checked in this order:
//
//  1. status.observedGeneration >= metadata.generation (else every other
//     status field describes the previous spec);
//  2. failure, judged only on evidence about the current template:
//     Progressing=False/ProgressDeadlineExceeded unless its message names
//     another ReplicaSet than the new one, ReplicaFailure=True unless an old
//     ReplicaSet (and not the new one) carries it, or a pod of the new
//     pod-template-hash waiting in ErrImagePull, ImagePullBackOff,
//     InvalidImageName, CreateContainerConfigError, ErrImageNeverPull, or
//     CrashLoopBackOff with at least Options.MaxRestarts restarts. A
//     condition left over from an earlier template is ignored: the real
//     controller publishes one at the new observedGeneration when a spec
//     goes back to an existing ReplicaSet (failure.go, deploymentFailure);
//  3. updatedReplicas == replicas == availableReplicas == spec.replicas, in the
//     order `kubectl rollout status` checks them
//     (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go);
//  4. status.terminatingReplicas is 0 where the field is set (KEP-3973);
//  5. the pod list shows no pod whose pod-template-hash differs from the new
//     ReplicaSet's and no terminating pod — the check that still holds where
//     the counters exclude terminating pods (Cluster API's pattern) — and
//     at least spec.replicas new pods available (podsReady), so counters
//     that still count a pod since deleted cannot say Rolled while its
//     replacement is not Ready.
//
// Where the Deployment controller's status lags (a busy
// kube-controller-manager), 3–4 are taken from the objects it has already
// written instead: podsSettled, the pod-list rule, applies only once the
// generation is observed, and says what the counters are about to say.
//
// Pods controlled by a ReplicaSet that d does not own are ignored. Assess never
// mutates its arguments.
func Assess(d *appsv1.Deployment, rss []appsv1.ReplicaSet, pods []corev1.Pod, opts Options) Verdict {
	if d.DeletionTimestamp != nil {
		return failed(ReasonDeploymentBeingDeleted, "deployment %s/%s is being deleted", d.Namespace, d.Name)
	}
	if d.Status.ObservedGeneration < d.Generation {
		return progressing(ReasonGenerationNotObserved,
			"waiting for the deployment controller to observe generation %d (observed %d)", d.Generation, d.Status.ObservedGeneration)
	}
	owned := ownedReplicaSets(d, rss)
	newRS := findNewReplicaSet(d, owned, opts.Templates)
	newHash := ""
	if newRS != nil {
		newHash = newRS.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	}
	mine := ownedPods(owned, pods)
	if v, bad := deploymentFailure(d, owned, newRS); bad {
		return v
	}
	if v, bad := podFailure(mine, newHash, opts); bad {
		return v
	}
	if d.Spec.Paused {
		return progressing(ReasonDeploymentPaused, "deployment %s/%s is paused: resume it to continue the rollout", d.Namespace, d.Name)
	}
	if newRS == nil {
		if v, done := counters(d); !done {
			return v
		}
		return progressing(ReasonNewReplicaSetNotFound, "no ReplicaSet of deployment %s/%s matches its pod template yet", d.Namespace, d.Name)
	}
	if v, done := counters(d); !done && !podsSettled(d, owned, newRS, mine, newHash, opts.Now) {
		return v
	}
	return podsGone(d, mine, newHash, opts.Now)
}

// counters applies `kubectl rollout status` steps 3–5 plus equality with
// spec.replicas and terminatingReplicas; done is true when all hold.
func counters(d *appsv1.Deployment) (Verdict, bool) {
	want := specReplicas(d)
	s := d.Status
	switch {
	case s.UpdatedReplicas < want:
		return progressing(ReasonReplicasNotUpdated, "%d of %d updated replicas", s.UpdatedReplicas, want), false
	case s.Replicas > s.UpdatedReplicas:
		return progressing(ReasonOldReplicasPending, "%d old replicas pending termination", s.Replicas-s.UpdatedReplicas), false
	case s.AvailableReplicas < s.UpdatedReplicas:
		return progressing(ReasonReplicasNotAvailable, "%d of %d updated replicas available", s.AvailableReplicas, s.UpdatedReplicas), false
	case s.Replicas != want || s.UpdatedReplicas != want || s.AvailableReplicas != want:
		return progressing(ReasonReplicasNotUpdated, "replicas %d, updated %d, available %d, want %d",
			s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want), false
	case s.TerminatingReplicas != nil && *s.TerminatingReplicas > 0:
		return progressing(ReasonTerminatingReplicas, "%d replicas terminating", *s.TerminatingReplicas), false
	}
	return Verdict{}, true
}

// podsGone is part 5 of the definition: no old-template pod and no
// terminating pod in the live list, every desired new pod visible, and
// at least spec.replicas of them available (podsReady) — the counters'
// availableReplicas may describe pods the list no longer has (a pod
// deleted and replaced while the Deployment's status lags).
func podsGone(d *appsv1.Deployment, pods []corev1.Pod, newHash string, now time.Time) Verdict {
	newPods := int32(0)
	for i := range pods {
		p := &pods[i]
		hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		switch {
		case hash != newHash:
			return progressing(ReasonOldPodsExist, "old pod %s (template %s) still exists%s", p.Name, hash, terminatingSuffix(p))
		case p.DeletionTimestamp != nil:
			return progressing(ReasonPodsTerminating, "pod %s is terminating", p.Name)
		}
		newPods++
	}
	want := specReplicas(d)
	if newPods < want {
		return progressing(ReasonNewPodsNotCreated, "pod list shows %d of %d new pods", newPods, want)
	}
	if v, ok := podsReady(pods, want, d.Spec.MinReadySeconds, now, "new pods"); !ok {
		return v
	}
	return Verdict{State: Rolled, Reason: ReasonRolled,
		Message: "all " + itoa(newPods) + " pods run the new template and no old pod remains"}
}

func terminatingSuffix(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return " (terminating)"
	}
	return ""
}

func specReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// ownedReplicaSets keeps the ReplicaSets whose controller reference is d
// (all of them when d has no UID, as in hand-built test objects).
func ownedReplicaSets(d *appsv1.Deployment, rss []appsv1.ReplicaSet) []appsv1.ReplicaSet {
	if d.UID == "" {
		return rss
	}
	return keep(rss, func(rs *appsv1.ReplicaSet) bool { return controlledBy(&rs.ObjectMeta, d.UID) })
}

// ownedPods drops pods controlled by a ReplicaSet outside owned.
func ownedPods(owned []appsv1.ReplicaSet, pods []corev1.Pod) []corev1.Pod {
	uids := make(map[types.UID]bool, len(owned))
	for i := range owned {
		uids[owned[i].UID] = true
	}
	return keep(pods, func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		return ref == nil || ref.Kind != "ReplicaSet" || ref.UID == "" || uids[ref.UID]
	})
}

// keep returns the items of in for which ok holds: in itself when that is
// all of them (the common case: nothing is copied; Assess only reads its
// inputs), else a new slice.
func keep[T any](in []T, ok func(*T) bool) []T {
	for i := range in {
		if ok(&in[i]) {
			continue
		}
		out := append([]T(nil), in[:i]...)
		for j := i + 1; j < len(in); j++ {
			if ok(&in[j]) {
				out = append(out, in[j])
			}
		}
		return out
	}
	return in
}

func controlledBy(m *metav1.ObjectMeta, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(m)
	return ref != nil && ref.UID == uid
}

// findNewReplicaSet mirrors FindNewReplicaSet in
// k8s.io/kubernetes/pkg/controller/deployment/util/deployment_util.go: the
// oldest ReplicaSet whose template equals the Deployment's, ignoring the
// pod-template-hash label.
func findNewReplicaSet(d *appsv1.Deployment, rss []appsv1.ReplicaSet, match *TemplateMatch) *appsv1.ReplicaSet {
	sorted := make([]*appsv1.ReplicaSet, len(rss))
	for i := range rss {
		sorted[i] = &rss[i]
	}
	slices.SortStableFunc(sorted, func(a, b *appsv1.ReplicaSet) int { // sort.SliceStable's order, without its reflection
		ti, tj := a.CreationTimestamp, b.CreationTimestamp
		switch {
		case ti.Equal(&tj):
			return strings.Compare(a.Name, b.Name)
		case ti.Before(&tj):
			return -1
		}
		return 1
	})
	for _, rs := range sorted {
		if match.equal(d, rs) {
			return rs
		}
	}
	return nil
}

// TemplateMatch remembers which ReplicaSet templates equal which
// Deployment templates (equalIgnoreHash, as FindNewReplicaSet compares
// them) by the two objects' UIDs and metadata.generations: kube-apiserver
// bumps the generation of a Deployment or a ReplicaSet on every change of
// its spec (k8s.io/kubernetes pkg/registry/apps/deployment/strategy.go and
// pkg/registry/apps/replicaset/strategy.go, PrepareForUpdate), so a (UID,
// generation) pair names one template. Objects with no UID or a zero
// generation (not from an API server: a fake client sets neither
// generation) are compared every time. It holds at most
// MaxTemplateMatches answers (then forgets them all) and is safe for
// concurrent use; the zero value is ready, a nil one compares every time.
type TemplateMatch struct {
	mu    sync.Mutex
	known map[templatePair]bool
}

type templatePair struct {
	d, rs       types.UID
	dGen, rsGen int64
}

// MaxTemplateMatches bounds a TemplateMatch: about 60 bytes an answer.
const MaxTemplateMatches = 8192

func (t *TemplateMatch) equal(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if t == nil || d.UID == "" || rs.UID == "" || d.Generation == 0 || rs.Generation == 0 {
		return equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template)
	}
	k := templatePair{d: d.UID, rs: rs.UID, dGen: d.Generation, rsGen: rs.Generation}
	t.mu.Lock()
	eq, ok := t.known[k]
	t.mu.Unlock()
	if ok {
		return eq
	}
	eq = equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template)
	t.mu.Lock()
	if t.known == nil || len(t.known) >= MaxTemplateMatches {
		t.known = map[templatePair]bool{}
	}
	t.known[k] = eq
	t.mu.Unlock()
	return eq
}

// equalIgnoreHash mirrors EqualIgnoreHash in the same file. Labels are
// compared apart and the rest as metadata and spec, so no template is
// copied (Assess runs on every reconcile); a strict reflect.DeepEqual,
// which implies the semantic one, answers first (templates that are
// equal are usually identical).
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	if !labelsEqualIgnoreHash(a.Labels, b.Labels) || !imagesEqual(a.Spec.Containers, b.Spec.Containers) {
		return false
	}
	if !maps.Equal(a.Annotations, b.Annotations) { // Semantic.DeepEqual of string maps (nil and empty alike), without copies
		return false
	}
	// Labels and annotations compared above, by hand: reflect.DeepEqual
	// copies every key and value of a map it walks.
	if objmeta.EmptyBesidesLabels(&a.ObjectMeta) && objmeta.EmptyBesidesLabels(&b.ObjectMeta) {
		return semanticEqual(&a.Spec, &b.Spec)
	}
	am, bm := a.ObjectMeta, b.ObjectMeta
	am.Labels, bm.Labels = nil, nil
	am.Annotations, bm.Annotations = nil, nil
	return semanticEqual(&am, &bm) && semanticEqual(&a.Spec, &b.Spec)
}

// semanticEqual is apiequality.Semantic.DeepEqual, answered by
// reflect.DeepEqual when that already holds (strict equality implies
// semantic equality).
func semanticEqual(a, b any) bool {
	return reflect.DeepEqual(a, b) || apiequality.Semantic.DeepEqual(a, b)
}

// imagesEqual compares the containers' names and images, in order: a
// cheap first test of equalIgnoreHash (a rollout compares an old template
// with a new one, which usually differ in an image), where templates that
// differ there cannot be equal.
func imagesEqual(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Image != b[i].Image {
			return false
		}
	}
	return true
}

// labelsEqualIgnoreHash compares label maps without the pod-template-hash
// label; nil and empty are equal.
func labelsEqualIgnoreHash(a, b map[string]string) bool {
	n := 0
	for k, v := range a {
		if k == appsv1.DefaultDeploymentUniqueLabelKey {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
		n++
	}
	for k := range b {
		if k != appsv1.DefaultDeploymentUniqueLabelKey {
			n--
		}
	}
	return n == 0
}
