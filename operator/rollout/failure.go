package rollout

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// fastFailReasons are container waiting reasons that no amount of waiting
// fixes: the image cannot be pulled or the container cannot be configured.
var fastFailReasons = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"ErrImageNeverPull":          true,
	"CreateContainerConfigError": true,
}

const crashLoopBackOff = "CrashLoopBackOff"

// deploymentFailure reads the Deployment's own conditions, as kstatus and
// `kubectl rollout status` do: Progressing=False with reason
// ProgressDeadlineExceeded, or ReplicaFailure=True — but only when the
// condition is evidence about the current template's ReplicaSet (newRS,
// nil when none matches yet). Call only once the generation is observed.
//
// Why the generation check is not enough: after a spec change back to a
// template whose ReplicaSet still exists (e.g. the running image after a
// bad rollout timed out), the real Deployment controller's first
// syncRolloutStatus can find no progress (DeploymentProgressing compares
// counters that did not move), so DeploymentTimedOut keeps the old
// condition (its reason already says TimedOut) and SetDeploymentCondition
// leaves it untouched: the status publishes the new observedGeneration
// with a Progressing=False/ProgressDeadlineExceeded condition whose message
// still names the previous ReplicaSet (k8s.io/kubernetes
// pkg/controller/deployment/progress.go syncRolloutStatus, util
// DeploymentTimedOut, SetDeploymentCondition). Likewise getReplicaFailures
// (progress.go) lifts a ReplicaFailure of any old ReplicaSet when the new
// one has none. See staleFailure for the rule.
func deploymentFailure(d *appsv1.Deployment, owned []appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (Verdict, bool) {
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == ReasonProgressDeadlineExceed:
			if namesOtherReplicaSet(c.Message, newRS) {
				continue
			}
			return failed(ReasonProgressDeadlineExceed, "deployment %s/%s exceeded its progress deadline: %s", d.Namespace, d.Name, c.Message), true
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			if !replicaFailureIsCurrent(owned, newRS) {
				continue
			}
			return failed(ReasonReplicaFailure, "deployment %s/%s cannot create replicas (%s): %s", d.Namespace, d.Name, c.Reason, c.Message), true
		}
	}
	return Verdict{}, false
}

// namesOtherReplicaSet reports whether a Progressing condition's message,
// in the real controller's format (`ReplicaSet "<name>" has timed out
// progressing.`, `Deployment "<name>" ...` when it had no new ReplicaSet),
// is about a ReplicaSet other than newRS, or about no ReplicaSet while
// newRS exists. A message in neither format (set by hand) proves nothing
// either way and counts.
func namesOtherReplicaSet(msg string, newRS *appsv1.ReplicaSet) bool {
	const rsPrefix, dPrefix = `ReplicaSet "`, `Deployment "`
	switch {
	case strings.HasPrefix(msg, rsPrefix):
		name, _, ok := strings.Cut(msg[len(rsPrefix):], `"`)
		return ok && (newRS == nil || name != newRS.Name)
	case strings.HasPrefix(msg, dPrefix):
		return newRS != nil
	}
	return false
}

// replicaFailureIsCurrent reports whether a Deployment's ReplicaFailure
// condition is about newRS: the controller copies it from the new
// ReplicaSet's own ReplicaFailure condition, else from any old one's
// (getReplicaFailures). When some owned ReplicaSet carries the condition,
// it counts only if newRS does; when none does (a cache that has not seen
// the ReplicaSet's status, or a status set by hand), it counts.
func replicaFailureIsCurrent(owned []appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) bool {
	carried := false
	for i := range owned {
		for _, c := range owned[i].Status.Conditions {
			if c.Type != appsv1.ReplicaSetReplicaFailure || c.Status != corev1.ConditionTrue {
				continue
			}
			if newRS != nil && owned[i].UID == newRS.UID && owned[i].Name == newRS.Name {
				return true
			}
			carried = true
		}
	}
	return !carried
}

// podFailure classifies new-template pods (those whose pod-template-hash is
// newHash) that are not terminating — a failing pod of an earlier template
// is not evidence about the current one: a fast-fail waiting reason, or a crash
// loop with at least MaxRestarts restarts. Pods are examined in list order;
// the first failing container decides the message.
func podFailure(pods []corev1.Pod, newHash string, opts Options) (Verdict, bool) {
	if newHash == "" {
		return Verdict{}, false
	}
	return podFailureWhere(pods, func(p *corev1.Pod) bool { return p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == newHash }, opts)
}

// podFailureWhere is podFailure for any workload kind: isNew tells the
// pods of the current template (a StatefulSet's update revision, a
// DaemonSet's current hash or template generation) from the others.
func podFailureWhere(pods []corev1.Pod, isNew func(*corev1.Pod) bool, opts Options) (Verdict, bool) {
	maxRestarts := opts.MaxRestarts
	if maxRestarts <= 0 {
		maxRestarts = DefaultMaxRestarts
	}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || !isNew(p) {
			continue
		}
		// Init containers first, then the others (the two lists read in
		// place, not joined into a new one for every pod).
		for _, statuses := range [2][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for i := range statuses {
				cs := &statuses[i]
				w := cs.State.Waiting
				if w == nil {
					continue
				}
				if fastFailReasons[w.Reason] ||
					(w.Reason == crashLoopBackOff && cs.RestartCount >= maxRestarts) {
					return failed(ReasonPodFailing, "pod %s container %q: %s%s%s", p.Name, cs.Name, w.Reason,
						restarts(*cs, w.Reason), detail(w.Message)), true
				}
			}
		}
	}
	return Verdict{}, false
}

func restarts(cs corev1.ContainerStatus, reason string) string {
	if reason != crashLoopBackOff {
		return ""
	}
	return " after " + strconv.Itoa(int(cs.RestartCount)) + " restarts"
}

func detail(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
