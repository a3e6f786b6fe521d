package simulator

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writeStatus posts the pod's status built from the kubelet's memory of it
// (the status manager), retrying a second later if the write fails.
func (k *kubelet) writeStatus(run *podRun) {
	if k.pods[run.uid] != run {
		return
	}
	// The pod as the kubelet's informer holds it (shared, read-only), with
	// a status of its own to fill; the write's answer is dropped. The pod
	// is the kubelet's reused request (k.req): the write keeps nothing of
	// it and writes never overlap.
	pod := &k.req
	*pod = corev1.Pod{}
	if err := k.c.Get(k.s.ctx(), run.key, pod, client.UnsafeDisableDeepCopy); err != nil || pod.UID != run.uid {
		return
	}
	shared := pod.Status
	shared.DeepCopyInto(&pod.Status)
	k.fillStatus(run, &pod.Status)
	if err := k.c.updateStatusDropAnswer(pod); err != nil && !apierrors.IsNotFound(err) {
		k.s.Schedule(time.Second, "kubelet status retry "+run.key.String(), func() { k.writeStatus(run) })
	}
}

// fillStatus sets phase, IPs, conditions and container statuses the way
// kwok's pod-create / pod-ready stages and the kubelet report them.
func (k *kubelet) fillStatus(run *podRun, st *corev1.PodStatus) {
	now := metav1.NewTime(k.s.now)
	allStarted := true
	for _, c := range run.containers {
		allStarted = allStarted && c.everStarted
	}
	st.Phase = corev1.PodPending
	if allStarted {
		st.Phase = corev1.PodRunning
	}
	st.StartTime = &metav1.Time{Time: run.startTime}
	st.HostIP = k.hostIP(run.node)
	st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
	st.PodIP = run.podIP
	st.PodIPs = []corev1.PodIP{{IP: run.podIP}}
	setPodCondition(st, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: now})
	setPodCondition(st, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now})
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
		if !run.ready {
			c.Status, c.Reason = corev1.ConditionFalse, "ContainersNotReady"
			c.Message = run.unreadyMsg()
		}
		setPodCondition(st, c)
	}
	st.ContainerStatuses = st.ContainerStatuses[:0]
	for _, c := range run.containers {
		st.ContainerStatuses = append(st.ContainerStatuses, c.status(run))
	}
}

// unreadyMsg is the not-ready conditions' message; it depends only on
// the containers' names, fixed for the run, so it is made once.
func (run *podRun) unreadyMsg() string {
	if run.unreadyMessage == "" {
		run.unreadyMessage = fmt.Sprintf("containers with unready status: [%s]", strings.Join(run.containerNames(), " "))
	}
	return run.unreadyMessage
}

// containerID is the container's ID in its current restart, made once
// per restart (the pod's UID and the container's name are fixed).
func (c *containerRun) containerID(run *podRun) string {
	if c.id == "" || c.idRestarts != c.restarts {
		c.id, c.idRestarts = fmt.Sprintf("containerd://%s-%s-%d", run.uid, c.name, c.restarts), c.restarts
	}
	return c.id
}

func (run *podRun) containerNames() []string {
	names := make([]string, len(run.containers))
	for i, c := range run.containers {
		names[i] = c.name
	}
	return names
}

func (c *containerRun) status(run *podRun) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: c.name, Image: c.image,
		Ready:        run.ready && c.running,
		RestartCount: c.restarts,
		Started:      ptr.To(c.running),
	}
	if c.everStarted {
		cs.ImageID = c.image
		cs.ContainerID = c.containerID(run)
	}
	if c.running {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.startedAt)}
	} else {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: c.reason, Message: c.message}
	}
	if c.lastExit != nil {
		cs.LastTerminationState.Terminated = c.lastExit.DeepCopy()
	}
	return cs
}

// hostIP is a node's address: 10.0.0.<position in KubeOptions.Nodes + 1>.
func (k *kubelet) hostIP(node string) string {
	for i, n := range k.opts.Nodes {
		if n == node {
			return fmt.Sprintf("10.0.0.%d", i+1)
		}
	}
	return "10.0.0.254"
}
