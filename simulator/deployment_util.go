package simulator

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/lunadas/upgrade-operator/internal/objmeta"
)

// Annotations and condition reasons of the Deployment controller
// (pkg/controller/deployment/util/deployment_util.go).
const (
	RevisionAnnotation        = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"

	ReasonReplicaSetUpdated  = "ReplicaSetUpdated"
	ReasonFailedRSCreate     = "ReplicaSetCreateError"
	ReasonNewReplicaSet      = "NewReplicaSetCreated"
	ReasonFoundNewRS         = "FoundNewReplicaSet"
	ReasonNewRSAvailable     = "NewReplicaSetAvailable"
	ReasonTimedOut           = "ProgressDeadlineExceeded"
	ReasonPaused             = "DeploymentPaused"
	ReasonResumed            = "DeploymentResumed"
	ReasonMinimumAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumUnavailable = "MinimumReplicasUnavailable"
)

// annotationsNotCopied are the Deployment annotations not copied to its
// ReplicaSets.
var annotationsNotCopied = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true, RevisionAnnotation: true, RevisionHistoryAnnotation: true,
	DesiredReplicasAnnotation: true, MaxReplicasAnnotation: true, appsv1.DeprecatedRollbackTo: true,
}

func newDeploymentCondition(t appsv1.DeploymentConditionType, st corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: st, Reason: reason, Message: msg,
		LastUpdateTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
}

// getDeploymentCondition is the condition of type t, or nil
// (GetDeploymentCondition). Upstream returns a pointer to a copy; the
// model points into st.Conditions itself, one allocation less per call:
// its callers only read it, and conditions change only as whole new
// slices (setDeploymentCondition, removeDeploymentCondition), never in
// place (a write into a shared status would be caught by
// CheckSharedReads).
func getDeploymentCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// setDeploymentCondition replaces the condition of c's type unless it has
// the same status and reason; the transition time survives a same-status
// change (SetDeploymentCondition).
func setDeploymentCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := getDeploymentCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	st.Conditions = append(withoutDeploymentCondition(st.Conditions, c.Type), c)
}

func removeDeploymentCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	st.Conditions = withoutDeploymentCondition(st.Conditions, t)
}

// withoutDeploymentCondition is a new slice of the conditions not of type
// t (filterOutCondition), nil when none is left; allocated once, with room
// for the condition setDeploymentCondition appends.
func withoutDeploymentCondition(cs []appsv1.DeploymentCondition, t appsv1.DeploymentConditionType) []appsv1.DeploymentCondition {
	n := 0
	for i := range cs {
		if cs[i].Type != t {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]appsv1.DeploymentCondition, 0, n+1)
	for _, c := range cs {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// revision parses a ReplicaSet's revision annotation (0 when absent or bad).
func revision(rs *appsv1.ReplicaSet) int64 {
	v, err := strconv.ParseInt(rs.Annotations[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

func maxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		m = max(m, revision(rs))
	}
	return m
}

// setDeploymentRevision records the new ReplicaSet's revision on the
// Deployment, reporting whether it changed.
// The map is copied before the write: d may be read shared
// (syncDeployment), its annotations the stored object's.
func setDeploymentRevision(d *appsv1.Deployment, rev string) bool {
	if d.Annotations[RevisionAnnotation] == rev {
		return false
	}
	a := make(map[string]string, len(d.Annotations)+1)
	maps.Copy(a, d.Annotations)
	a[RevisionAnnotation] = rev
	d.Annotations = a
	return true
}

// resolveFenceposts scales maxSurge (rounding up) and maxUnavailable
// (rounding down) against the desired replicas; both 0 means
// maxUnavailable 1 (ResolveFenceposts).
func resolveFenceposts(ru *appsv1.RollingUpdateDeployment, desired int32) (surge, unavailable int32) {
	zero := intstr.FromInt32(0)
	s, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxSurge, zero), int(desired), true)
	u, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxUnavailable, zero), int(desired), false)
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u)
}

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

// maxUnavailable of a rolling Deployment, at most its replicas (MaxUnavailable).
func maxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || *d.Spec.Replicas == 0 {
		return 0
	}
	_, u := resolveFenceposts(d.Spec.Strategy.RollingUpdate, *d.Spec.Replicas)
	return min(u, *d.Spec.Replicas)
}

// maxSurge of a rolling Deployment (MaxSurge).
func maxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) {
		return 0
	}
	s, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate, *d.Spec.Replicas)
	return s
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// equalIgnoreHash compares pod templates ignoring the pod-template-hash
// label (EqualIgnoreHash): labels apart, then metadata and spec, nothing
// copied but the metadata; a strict reflect.DeepEqual, which implies the
// semantic one, answers first (equal templates are usually identical).
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	if !imagesEqual(a.Spec.Containers, b.Spec.Containers) {
		return false // a cheap first test: templates that differ here differ
	}
	if !labelsEqualIgnoreHash(a.Labels, b.Labels) {
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

// labelsEqualIgnoreHash compares label maps without the pod-template-hash
// label, nil and empty alike (as Semantic.DeepEqual of the maps without
// it), without copying them.
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

// imagesEqual compares the containers' names and images, in order.
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

// rsByCreation sorts oldest first, then by name (ReplicaSetsByCreationTimestamp).
func rsByCreation(rss []*appsv1.ReplicaSet) {
	// A stable sort by the same order as sort.SliceStable's, without its
	// reflective swapper: a stable sort's result is the one the order and
	// the input determine.
	slices.SortStableFunc(rss, compareRSCreation)
}

// compareRSCreation orders ReplicaSets by creation time, then name
// (ReplicaSetsByCreationTimestamp.Less).
func compareRSCreation(a, b *appsv1.ReplicaSet) int {
	if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return strings.Compare(a.Name, b.Name)
	}
	if a.CreationTimestamp.Before(&b.CreationTimestamp) {
		return -1
	}
	return 1
}

// findNewReplicaSet is the oldest ReplicaSet whose template equals the
// Deployment's (FindNewReplicaSet), compared through match (nil: compared
// every time).
func findNewReplicaSet(d *appsv1.Deployment, rss []*appsv1.ReplicaSet, match *templateMatch) *appsv1.ReplicaSet {
	// The callers' lists are in creation order already (replicaSetsFor):
	// sorting a copy of a sorted list, stably, gives it back unchanged.
	sorted := rss
	if !slices.IsSortedFunc(rss, compareRSCreation) {
		sorted = append([]*appsv1.ReplicaSet(nil), rss...)
		rsByCreation(sorted)
	}
	for _, rs := range sorted {
		if match.equal(d, rs) {
			return rs
		}
	}
	return nil
}

// templateMatch remembers equalIgnoreHash of a ReplicaSet's and a
// Deployment's templates by the two objects' UIDs and generations: the
// registry bumps metadata.generation on every spec change of either kind
// (k8s.io/kubernetes pkg/registry/apps/deployment/strategy.go and
// pkg/registry/apps/replicaset/strategy.go, PrepareForUpdate; the store's
// write does the same), so a (UID, generation) pair names one template.
// Objects without a UID or a generation (not stored) are compared every
// time. With CheckSharedReads on, every remembered answer is compared
// again and a difference panics. A nil *templateMatch compares every time.
type templateMatch struct {
	check bool
	known map[templatePair]bool
}

type templatePair struct {
	d, rs       types.UID
	dGen, rsGen int64
}

// maxTemplateMatches bounds templateMatch: past it the answers are forgotten.
const maxTemplateMatches = 4096

func (t *templateMatch) equal(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if t == nil || d.UID == "" || rs.UID == "" || d.Generation == 0 || rs.Generation == 0 {
		return equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template)
	}
	k := templatePair{d: d.UID, rs: rs.UID, dGen: d.Generation, rsGen: rs.Generation}
	if eq, ok := t.known[k]; ok {
		if t.check && eq != equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			panic(fmt.Sprintf("simulator: ReplicaSet %s/%s (generation %d) and Deployment %s (generation %d): the remembered template comparison is stale",
				rs.Namespace, rs.Name, rs.Generation, d.Name, d.Generation))
		}
		return eq
	}
	if t.known == nil || len(t.known) >= maxTemplateMatches {
		t.known = map[templatePair]bool{}
	}
	eq := equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template)
	t.known[k] = eq
	return eq
}

// findOldReplicaSets is every other ReplicaSet (FindOldReplicaSets' second result).
func findOldReplicaSets(d *appsv1.Deployment, rss []*appsv1.ReplicaSet, match *templateMatch) []*appsv1.ReplicaSet {
	newRS := findNewReplicaSet(d, rss, match)
	var old []*appsv1.ReplicaSet
	for _, rs := range rss {
		if newRS == nil || rs.UID != newRS.UID {
			old = append(old, rs)
		}
	}
	return old
}

func filterActive(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && *rs.Spec.Replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// Sums over ReplicaSets (GetReplicaCountForReplicaSets and friends).
func sumSpecReplicas(rss []*appsv1.ReplicaSet) (n int32) {
	for _, rs := range rss {
		if rs != nil {
			n += *rs.Spec.Replicas
		}
	}
	return n
}

func sumStatus(rss []*appsv1.ReplicaSet, f func(appsv1.ReplicaSetStatus) int32) (n int32) {
	for _, rs := range rss {
		if rs != nil {
			n += f(rs.Status)
		}
	}
	return n
}

// sumTerminating is nil if a synced ReplicaSet does not report the field
// (GetTerminatingReplicaCountForReplicaSets).
func sumTerminating(rss []*appsv1.ReplicaSet) *int32 {
	var n int32
	for _, rs := range rss {
		switch {
		case rs == nil, rs.Status.ObservedGeneration == 0 && rs.Status.TerminatingReplicas == nil:
		case rs.Status.TerminatingReplicas == nil:
			return nil
		default:
			n += *rs.Status.TerminatingReplicas
		}
	}
	return &n
}

// sortByRevision orders by revision, then creation (ReplicaSetsByRevision).
func sortByRevision(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		ri, rj := revision(rss[i]), revision(rss[j])
		if ri == rj || ri == 0 || rj == 0 {
			a, b := rss[i], rss[j]
			if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
				return a.Name < b.Name
			}
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return ri < rj
	})
}
