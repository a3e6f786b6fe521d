package rollout

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// podsSettled is the pod-list rule (issue 21), consulted only when the
// Deployment's counters are not yet done and its current generation is
// observed: the controllers have already acted and only their status lags
// what the pod list shows. It holds when
//
//   - the Deployment controller has scaled the new ReplicaSet to
//     spec.replicas and every other ReplicaSet it owns to 0 (spec), so no
//     ReplicaSet of an older template can create another pod, and
//   - the pod list shows exactly spec.replicas pods, every one of the new
//     pod-template-hash, none terminating, each available as the
//     ReplicaSet controller counts it (k8s.io/kubernetes
//     pkg/api/v1/pod/util.go IsPodAvailable: Ready=True, and for
//     minReadySeconds > 0 Ready since at least minReadySeconds at now).
//
// These are the objects from which the ReplicaSet controller
// (replica_set_utils.go calculateStatus) and then the Deployment controller
// (sync.go calculateStatus) compute replicas = updatedReplicas =
// availableReplicas = spec.replicas and terminatingReplicas = 0, so the
// counters' verdict is the one they are about to publish
// (TestPodListRuleNeverAheadOfTheCounters enumerates the states). A zero
// now disables it for minReadySeconds > 0.
func podsSettled(d *appsv1.Deployment, owned []appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, pods []corev1.Pod, newHash string, now time.Time) bool {
	want := specReplicas(d)
	if rsReplicas(newRS) != want {
		return false
	}
	for i := range owned {
		if owned[i].UID != newRS.UID && rsReplicas(&owned[i]) != 0 {
			return false
		}
	}
	n := int32(0)
	for i := range pods {
		p := &pods[i]
		if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != newHash || p.DeletionTimestamp != nil || !podAvailable(p, d.Spec.MinReadySeconds, now) {
			return false
		}
		n++
	}
	return n == want
}

func rsReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

// podsReady is the last check of the pod-list parts of Assess,
// AssessStatefulSet and AssessDaemonSet, made after the status counters
// say done: at least want of pods (every one of the current template and
// none terminating, already checked) are available as podAvailable says
// at now — Ready only, when now is zero (the counters then vouch for
// minReadySeconds). The counters can describe a pod the list no longer
// holds: a pod deleted after the controller's last status write and
// replaced by one not yet Ready (simulate --seed 121, node-lost while the
// Deployment informer lagged 1 s, wrote the API while the worker's only
// pod was not Ready). The verdict names the first pod not available.
// With minReadySeconds > 0 a clock behind the kubelet's only delays it.
func podsReady(pods []corev1.Pod, want, minReadySeconds int32, now time.Time, what string) (Verdict, bool) {
	if now.IsZero() {
		minReadySeconds = 0
	}
	n, first := int32(0), ""
	for i := range pods {
		if podAvailable(&pods[i], minReadySeconds, now) {
			n++
		} else if first == "" {
			first = pods[i].Name
		}
	}
	if n >= want {
		return Verdict{}, true
	}
	v := progressing(ReasonReplicasNotAvailable, "pod list shows %d of %d %s available", n, want, what)
	if first != "" {
		v.Message += "; pod " + first + " is not"
		if minReadySeconds > 0 {
			v.Message += " available (Ready for at least minReadySeconds, " + itoa(minReadySeconds) + "s)"
		} else {
			v.Message += " Ready"
		}
	}
	return v, false
}

// podAvailable mirrors IsPodAvailable (k8s.io/kubernetes v1.37.2
// pkg/api/v1/pod/util.go): Ready=True, and for minReadySeconds > 0 Ready
// since at least minReadySeconds at now (a zero now: not available).
func podAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		if c.Status != corev1.ConditionTrue {
			return false
		}
		if minReadySeconds == 0 {
			return true
		}
		return !now.IsZero() && !c.LastTransitionTime.IsZero() &&
			c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).Compare(now) <= 0
	}
	return false
}
