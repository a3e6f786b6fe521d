package simulator

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Helpers of the StatefulSet controller model, each mirroring the function
// of the same name in kubernetes/kubernetes (v1.37.2)
// pkg/controller/statefulset/stateful_set_utils.go unless said otherwise.

var statefulSetKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

var statefulPodRegex = regexp.MustCompile("(.*)-([0-9]+)$")

// getParentNameAndOrdinal: "db-2" → ("db", 2); ("", -1) when the name has
// no ordinal suffix.
func getParentNameAndOrdinal(pod *corev1.Pod) (string, int) {
	m := statefulPodRegex.FindStringSubmatch(pod.Name)
	if len(m) < 3 {
		return "", -1
	}
	i, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return m[1], -1
	}
	return m[1], int(i)
}

func getOrdinal(pod *corev1.Pod) int { _, o := getParentNameAndOrdinal(pod); return o }

func getStartOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func getEndOrdinal(set *appsv1.StatefulSet) int {
	return getStartOrdinal(set) + int(*set.Spec.Replicas) - 1
}

func podInOrdinalRange(pod *corev1.Pod, set *appsv1.StatefulSet) bool {
	o := getOrdinal(pod)
	return o >= getStartOrdinal(set) && o <= getEndOrdinal(set)
}

func getPodName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

func isMemberOf(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, _ := getParentNameAndOrdinal(pod)
	return parent == set.Name
}

func identityMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, ordinal := getParentNameAndOrdinal(pod)
	return ordinal >= 0 && set.Name == parent && pod.Name == getPodName(set, ordinal) &&
		pod.Namespace == set.Namespace && pod.Labels[appsv1.StatefulSetPodNameLabel] == pod.Name
}

// updateIdentity: name, namespace and the pod-name / pod-index labels.
func updateIdentity(set *appsv1.StatefulSet, pod *corev1.Pod) {
	ordinal := getOrdinal(pod)
	pod.Name, pod.Namespace = getPodName(set, ordinal), set.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ordinal)
}

// initIdentity: updateIdentity plus hostname and subdomain.
func initIdentity(set *appsv1.StatefulSet, pod *corev1.Pod) {
	updateIdentity(set, pod)
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
}

func isRunningAndReady(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && isPodReady(pod)
}

func isRunningAndAvailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	return isPodAvailable(pod, minReadySeconds, now)
}

// isCreated: the API server has set a phase (a pod object built locally and
// not yet read back has none).
func isCreated(pod *corev1.Pod) bool { return pod.Status.Phase != "" }

func isTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }

func isUnavailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	return !isPodAvailable(pod, minReadySeconds, now) || isTerminating(pod)
}

func allowsBurst(set *appsv1.StatefulSet) bool {
	return set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
}

func setPodRevision(pod *corev1.Pod, revision string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetRevisionLabel] = revision
}

func getPodRevision(pod *corev1.Pod) string { return pod.Labels[appsv1.StatefulSetRevisionLabel] }

// newStatefulSetPod: the template's labels, annotations, finalizers and
// spec (controller.GetPodFromTemplate), a controller reference, the
// ordinal's identity. updateStorage is not modelled (no PVCs).
func newStatefulSetPod(set *appsv1.StatefulSet, ordinal int) *corev1.Pod {
	t := set.Spec.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: set.Namespace, Name: getPodName(set, ordinal),
			Labels: t.Labels, Annotations: t.Annotations, Finalizers: t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, statefulSetKind)}},
		Spec: t.Spec,
	}
	initIdentity(set, pod)
	return pod
}

// newVersionedStatefulSetPod: ordinals below the partition (or, without a
// RollingUpdate block, below status.currentReplicas) get the current
// revision, the others the update revision. The condition keeps upstream's
// operator precedence.
func newVersionedStatefulSetPod(currentSet, updateSet *appsv1.StatefulSet, currentRevision, updateRevision string, ordinal int) *corev1.Pod {
	ru := currentSet.Spec.UpdateStrategy.RollingUpdate
	if currentSet.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		(ru == nil && ordinal < getStartOrdinal(currentSet)+int(currentSet.Status.CurrentReplicas)) ||
		(ru != nil && ordinal < getStartOrdinal(currentSet)+int(*ru.Partition)) {
		pod := newStatefulSetPod(currentSet, ordinal)
		setPodRevision(pod, currentRevision)
		return pod
	}
	pod := newStatefulSetPod(updateSet, ordinal)
	setPodRevision(pod, updateRevision)
	return pod
}

// newStatefulSetRevision mirrors newRevision: the template patch as a
// ControllerRevision labelled like the template, annotated like the set.
func newStatefulSetRevision(set *appsv1.StatefulSet, revision int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	patch, err := templatePatch(set.Spec)
	if err != nil {
		return nil, fmt.Errorf("statefulset %s/%s: encode template: %w", set.Namespace, set.Name, err)
	}
	cr := newControllerRevision(set, statefulSetKind, set.Spec.Template.Labels, patch, revision, collisionCount)
	if cr.Annotations == nil {
		cr.Annotations = map[string]string{}
	}
	for k, v := range set.Annotations {
		cr.Annotations[k] = v
	}
	return cr, nil
}

// applyRevision mirrors ApplyRevision: set with the revision's pod
// template. The patch replaces spec.template whole ($patch: replace), so
// decoding it into the template is the strategic merge.
func applyRevision(set *appsv1.StatefulSet, rev *appsv1.ControllerRevision) (*appsv1.StatefulSet, error) {
	clone := set.DeepCopy()
	var patch struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(rev.Data.Raw, &patch); err != nil {
		return nil, fmt.Errorf("controllerrevision %s/%s: decode: %w", rev.Namespace, rev.Name, err)
	}
	clone.Spec.Template = patch.Spec.Template
	return clone, nil
}

func nextRevision(revs []*appsv1.ControllerRevision) int64 {
	if len(revs) == 0 {
		return 1
	}
	return revs[len(revs)-1].Revision + 1
}

// inconsistentStatus: whether status differs from the set's in a field the
// controller writes (conditions are not modelled).
func inconsistentStatus(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) bool {
	cur := set.Status
	return st.ObservedGeneration > cur.ObservedGeneration || st.Replicas != cur.Replicas ||
		st.CurrentReplicas != cur.CurrentReplicas || st.ReadyReplicas != cur.ReadyReplicas ||
		st.UpdatedReplicas != cur.UpdatedReplicas || st.CurrentRevision != cur.CurrentRevision ||
		st.AvailableReplicas != cur.AvailableReplicas || st.UpdateRevision != cur.UpdateRevision
}

// completeUpdate: once every replica is updated and ready, the update
// revision becomes the current one.
func completeUpdate(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) {
	r := *set.Spec.Replicas
	if st.UpdatedReplicas == r && st.ReadyReplicas == r && st.Replicas == r {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
	}
}

// getStatefulSetMaxUnavailable: maxUnavailable scaled to replicas
// (rounding down), default 1, at least 1.
func getStatefulSetMaxUnavailable(mu *intstr.IntOrString, replicas int) (int, error) {
	n, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(mu, intstr.FromInt32(1)), replicas, false)
	if err != nil {
		return 0, err
	}
	return max(n, 1), nil
}
