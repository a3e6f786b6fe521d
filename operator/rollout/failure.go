package rollout

import (
	"strconv"

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
// ProgressDeadlineExceeded, or ReplicaFailure=True. Call only once the
// generation is observed: a stale ProgressDeadlineExceeded from an earlier
// rollout survives until then.
func deploymentFailure(d *appsv1.Deployment) (Verdict, bool) {
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == ReasonProgressDeadlineExceed:
			return failed(ReasonProgressDeadlineExceed, "deployment %s/%s exceeded its progress deadline: %s", d.Namespace, d.Name, c.Message), true
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			return failed(ReasonReplicaFailure, "deployment %s/%s cannot create replicas (%s): %s", d.Namespace, d.Name, c.Reason, c.Message), true
		}
	}
	return Verdict{}, false
}

// podFailure classifies new-template pods (those whose pod-template-hash is
// newHash) that are not terminating: a fast-fail waiting reason, or a crash
// loop with at least MaxRestarts restarts. Pods are examined in list order;
// the first failing container decides the message.
func podFailure(pods []corev1.Pod, newHash string, opts Options) (Verdict, bool) {
	if newHash == "" {
		return Verdict{}, false
	}
	maxRestarts := opts.MaxRestarts
	if maxRestarts <= 0 {
		maxRestarts = DefaultMaxRestarts
	}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != newHash {
			continue
		}
		statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, cs := range statuses {
			w := cs.State.Waiting
			if w == nil {
				continue
			}
			if fastFailReasons[w.Reason] ||
				(w.Reason == crashLoopBackOff && cs.RestartCount >= maxRestarts) {
				return failed(ReasonPodFailing, "pod %s container %q: %s%s%s", p.Name, cs.Name, w.Reason,
					restarts(cs, w.Reason), detail(w.Message)), true
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
