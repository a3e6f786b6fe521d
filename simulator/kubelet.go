package simulator

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kubelet models the kubelets of all nodes as kwok's pod stages drive them
// (kustomize/stage/pod/general: pod-create, pod-ready, pod-delete), timed
// by the kwok annotations, plus the kubelet's image-pull and crash-loop
// back-off (pkg/kubelet/images, pkg/kubelet/kuberuntime: 10 s doubling to
// 5 min). A bound pod is started after the create delay, Ready after the
// ready delay, and, once it has a deletionTimestamp, deleted for good after
// the delete delay but never later than its deletionTimestamp (the end of
// its grace period). A terminating pod keeps its status until then, as
// with kwok: its containers still run.
type kubelet struct {
	s    *Sim
	c    *simClient
	opts KubeOptions
	pods map[types.UID]*podRun
	// req is the pod writeStatus sends, reused by the next write.
	req    corev1.Pod
	podIPs int
}

// podRun is the kubelet's memory of one pod.
type podRun struct {
	key       types.NamespacedName
	uid       types.UID
	node      string
	podIP     string
	startTime time.Time
	started   bool
	ready     bool
	// readyScheduled: the pod-ready stage is on its way.
	readyScheduled bool
	deleting       bool
	containers     []*containerRun // fixed at admission, as a pod's containers are
	// unreadyMessage is the Ready and ContainersReady conditions' message
	// while not ready, made once (unreadyMsg): it names the containers.
	unreadyMessage string
}

type imageBehaviour int

const (
	imageOK imageBehaviour = iota
	imageNotFound
	imageCrashLoop
	imageNeverReady
)

// containerRun is one container's runtime state.
type containerRun struct {
	name, image string
	behaviour   imageBehaviour
	everStarted bool
	running     bool
	startedAt   time.Time
	reason      string // waiting reason when not running
	message     string
	restarts    int32
	lastExit    *corev1.ContainerStateTerminated
	backoffs    int
	// id is the containerID of restart idRestarts (containerID).
	id         string
	idRestarts int32
}

func newKubelet(s *Sim, opts KubeOptions) *kubelet {
	return &kubelet{s: s, c: s.clientFor("kubelet"), opts: opts, pods: map[types.UID]*podRun{}}
}

func (k *kubelet) install() { k.s.Subscribe(k.observe) }

// observe reacts to pod changes: admits newly bound pods and starts the
// deletion stage of pods that got a deletionTimestamp.
func (k *kubelet) observe(ev WatchEvent) {
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	if ev.Type == watch.Deleted {
		delete(k.pods, pod.UID)
		return
	}
	run := k.pods[pod.UID]
	if run == nil {
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			return
		}
		run = k.admit(pod)
	}
	if pod.DeletionTimestamp != nil && !run.deleting {
		run.deleting = true
		k.scheduleFinalDelete(pod, run)
	}
}

func (k *kubelet) admit(pod *corev1.Pod) *podRun {
	k.podIPs++
	run := &podRun{key: client.ObjectKeyFromObject(pod), uid: pod.UID, node: pod.Spec.NodeName,
		podIP: fmt.Sprintf("10.244.%d.%d", k.podIPs/250, k.podIPs%250+1)}
	for _, c := range pod.Spec.Containers {
		run.containers = append(run.containers, &containerRun{name: c.Name, image: c.Image, behaviour: behaviourOf(c.Image)})
	}
	k.pods[pod.UID] = run
	k.step(k.s.stageDelay(pod, AnnotationPodCreateDelay, AnnotationPodCreateJitterDelay, DefaultPodCreateDelay),
		run, "kubelet start", func() { k.start(pod, run) })
	return run
}

func behaviourOf(image string) imageBehaviour {
	switch tag, _ := imageTag(image); tag {
	case ImageTagNotFound:
		return imageNotFound
	case ImageTagCrashLoop:
		return imageCrashLoop
	case ImageTagNeverReady:
		return imageNeverReady
	}
	return imageOK
}

// step schedules a lifecycle change of a live, non-terminating pod and
// writes the pod's status after it.
func (k *kubelet) step(d time.Duration, run *podRun, what string, change func()) {
	k.s.Schedule(d, what+" "+run.key.String(), func() {
		if k.pods[run.uid] != run || run.deleting {
			return
		}
		change()
		k.writeStatus(run)
	})
}

// start is the pod-create stage: each container starts, or fails to.
func (k *kubelet) start(pod *corev1.Pod, run *podRun) {
	run.started, run.startTime = true, k.s.now
	for _, c := range run.containers {
		k.startContainer(pod, run, c)
	}
	k.maybeReady(pod, run)
}

// startContainer starts one container the way the kubelet's SyncPod would:
// an unparsable image reference is InvalidImageName (never retried); a
// missing ConfigMap or Secret it needs is CreateContainerConfigError
// (retried every containerConfigRetry); then the image decides.
func (k *kubelet) startContainer(pod *corev1.Pod, run *podRun, c *containerRun) {
	switch {
	case !validImageReference(c.image):
		c.reason = "InvalidImageName"
		c.message = fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: invalid reference format", c.image, c.image)
	case k.missingConfig(pod, c.name) != "":
		c.reason, c.message = "CreateContainerConfigError", k.missingConfig(pod, c.name)
		k.step(containerConfigRetry, run, "container config retry", func() {
			k.startContainer(pod, run, c)
			k.maybeReady(pod, run)
		})
	case c.behaviour == imageNotFound:
		k.pullFailed(run, c)
	case c.behaviour == imageCrashLoop:
		c.run(k.s.now)
		k.step(k.opts.CrashLoopRunTime, run, "container exits", func() { k.crashed(run, c) })
	default:
		c.run(k.s.now)
	}
}

// maybeReady schedules the pod-ready stage once every container runs a
// good image.
func (k *kubelet) maybeReady(pod *corev1.Pod, run *podRun) {
	if run.readyScheduled {
		return
	}
	for _, c := range run.containers {
		if c.behaviour != imageOK || !c.running {
			return
		}
	}
	run.readyScheduled = true
	k.step(k.s.stageDelay(pod, AnnotationPodReadyDelay, AnnotationPodReadyJitterDelay, DefaultPodReadyDelay),
		run, "kubelet ready", func() { run.ready = true })
}

func (c *containerRun) run(now time.Time) {
	c.everStarted, c.running, c.startedAt, c.reason, c.message = true, true, now, "", ""
}

// kubeletBackoff is the kubelet's image-pull and container-restart back-off
// before the n-th retry (n from 0): 10 s doubling, capped at 5 min.
func kubeletBackoff(n int) time.Duration {
	d := 10 * time.Second
	for ; n > 0 && d < 5*time.Minute; n-- {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// pullFailed: the pull fails (ErrImagePull); a second later the kubelet
// reports ImagePullBackOff until the back-off expires and it pulls again.
func (k *kubelet) pullFailed(run *podRun, c *containerRun) {
	c.reason = "ErrImagePull"
	c.message = fmt.Sprintf("failed to pull and unpack image %q: not found", c.image)
	wait := kubeletBackoff(c.backoffs)
	c.backoffs++
	k.step(time.Second, run, "image pull back-off", func() {
		c.reason, c.message = "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q", c.image)
	})
	k.step(wait, run, "image pull retry", func() { k.pullFailed(run, c) })
}

// crashed: the container exits with code 1. The kubelet restarts it at
// once the first time, then after a back-off during which it reports
// CrashLoopBackOff (10 s, 20 s, ... 5 min) with the real kubelet's message
// (k8s.io/kubernetes v1.37.2 pkg/kubelet/kuberuntime/kuberuntime_manager.go
// doBackOff: flowcontrol.Backoff keyed by container, the first exit finds
// no entry and restarts at once; the pod named as
// pkg/kubelet/util/format.Pod does, "name_namespace(uid)"). Compared with
// the real kubelet by make fidelity REAL_NODE=1: the same delays, plus
// 0.5–5 s of the real kubelet's own per restart (relist, container start,
// status write).
func (k *kubelet) crashed(run *podRun, c *containerRun) {
	c.lastExit = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
	c.lastExit.StartedAt.Time, c.lastExit.FinishedAt.Time = c.startedAt, k.s.now
	restart := func() {
		c.run(k.s.now)
		c.restarts++
		k.step(k.opts.CrashLoopRunTime, run, "container exits", func() { k.crashed(run, c) })
	}
	if c.restarts == 0 {
		restart()
		return
	}
	wait := kubeletBackoff(c.backoffs)
	c.backoffs++
	c.running, c.reason = false, "CrashLoopBackOff"
	c.message = fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", wait, c.name, run.key.Name, run.key.Namespace, run.uid)
	k.step(wait, run, "container restart", restart)
}

// scheduleFinalDelete is the pod-delete stage: the final delete (grace 0)
// after the delete delay, capped by the deletionTimestamp.
func (k *kubelet) scheduleFinalDelete(pod *corev1.Pod, run *podRun) {
	d := k.s.stageDelay(pod, AnnotationPodDeleteDelay, AnnotationPodDeleteJitterDelay, DefaultPodDeleteDelay)
	if limit := pod.DeletionTimestamp.Sub(k.s.now); d > limit {
		d = max(limit, 0)
	}
	k.s.Schedule(d, "kubelet delete "+run.key.String(), func() { k.finalDelete(run) })
}

func (k *kubelet) finalDelete(run *podRun) {
	if k.pods[run.uid] != run {
		return
	}
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = run.key.Namespace, run.key.Name
	err := k.c.Delete(k.s.ctx(), pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &run.uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.s.Schedule(time.Second, "kubelet delete retry "+run.key.String(), func() { k.finalDelete(run) })
	}
}
