package simulator

import (
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// RolloutTracer writes one line per observable step of rollouts as they
// commit: a Deployment's, StatefulSet's or DaemonSet's status counters
// (and a Deployment's conditions) when they change,
// a ReplicaSet's size changes, and each pod's lifecycle (created, phase,
// ready, waiting reasons, restarts, terminating, deleted). Lines start with
// the virtual time since Options.Start, so a seeded run's trace is stable
// and diffable (the golden transcripts under testdata use it).
type RolloutTracer struct {
	s       *Sim
	w       io.Writer
	enabled bool
	last    map[string]string
}

// NewRolloutTracer subscribes a tracer writing to w; it starts enabled.
func NewRolloutTracer(s *Sim, w io.Writer) *RolloutTracer {
	t := &RolloutTracer{s: s, w: w, enabled: true, last: map[string]string{}}
	s.Subscribe(t.observe)
	return t
}

// SetEnabled pauses (false) or resumes writing; state is tracked either
// way, so resuming prints only later changes.
func (t *RolloutTracer) SetEnabled(on bool) { t.enabled = on }

func (t *RolloutTracer) observe(ev WatchEvent) {
	switch o := ev.Object.(type) {
	case *appsv1.Deployment:
		t.emit("deploy "+o.Name, DeploymentStatusLine(o), ev.Type == watch.Deleted)
	case *appsv1.ReplicaSet:
		t.emit("rs "+o.Name, fmt.Sprintf("replicas=%d", *o.Spec.Replicas), ev.Type == watch.Deleted)
	case *corev1.Pod:
		state := podSummary(o)
		if ref := metav1.GetControllerOfNoCopy(o); ref != nil && ref.Kind != "ReplicaSet" {
			state += workloadPodSuffix(o)
		}
		t.emit("pod "+o.Name, state, ev.Type == watch.Deleted)
	case *appsv1.StatefulSet:
		t.emit("sts "+o.Name, StatefulSetStatusLine(o), ev.Type == watch.Deleted)
	case *appsv1.DaemonSet:
		t.emit("ds "+o.Name, DaemonSetStatusLine(o), ev.Type == watch.Deleted)
	}
}

func (t *RolloutTracer) emit(key, state string, deleted bool) {
	prev, seen := t.last[key]
	switch {
	case deleted:
		delete(t.last, key)
		state = "deleted"
	case seen && prev == state:
		return
	default:
		t.last[key] = state
	}
	if t.enabled {
		fmt.Fprintf(t.w, "%s %s %s\n", FormatElapsed(t.s.Elapsed()), key, state)
	}
}

// FormatElapsed renders a virtual time offset as "t=12.345s".
func FormatElapsed(d time.Duration) string { return fmt.Sprintf("t=%.3fs", d.Seconds()) }

// DeploymentStatusLine is a Deployment's generation, status counters and
// conditions in one line: "gen=2 og=1 rep=3 upd=3 ready=3 avail=3
// unavail=0 term=0 Progressing=True/NewReplicaSetAvailable
// Available=True/MinimumReplicasAvailable" (term=- when the field is nil).
func DeploymentStatusLine(d *appsv1.Deployment) string {
	st := d.Status
	term := "-"
	if st.TerminatingReplicas != nil {
		term = fmt.Sprint(*st.TerminatingReplicas)
	}
	line := fmt.Sprintf("gen=%d og=%d rep=%d upd=%d ready=%d avail=%d unavail=%d term=%s",
		d.Generation, st.ObservedGeneration, st.Replicas, st.UpdatedReplicas, st.ReadyReplicas,
		st.AvailableReplicas, st.UnavailableReplicas, term)
	for _, ct := range []appsv1.DeploymentConditionType{appsv1.DeploymentProgressing, appsv1.DeploymentAvailable, appsv1.DeploymentReplicaFailure} {
		if c := getDeploymentCondition(st, ct); c != nil {
			line += fmt.Sprintf(" %s=%s/%s", ct, c.Status, c.Reason)
		}
	}
	return line
}

// podSummary is a pod's observable state: phase, readiness, waiting
// reasons, restarts and whether it is terminating.
func podSummary(p *corev1.Pod) string {
	parts := []string{string(p.Status.Phase)}
	if p.Spec.NodeName == "" {
		parts = append(parts, "unscheduled")
	}
	if isPodReady(p) {
		parts = append(parts, "ready")
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil {
			parts = append(parts, cs.Name+":"+cs.State.Waiting.Reason)
		}
		if cs.RestartCount > 0 {
			parts = append(parts, fmt.Sprintf("%s:restarts=%d", cs.Name, cs.RestartCount))
		}
	}
	if p.DeletionTimestamp != nil {
		grace := int64(0)
		if p.DeletionGracePeriodSeconds != nil {
			grace = *p.DeletionGracePeriodSeconds
		}
		parts = append(parts, fmt.Sprintf("terminating(grace=%ds)", grace))
	}
	return strings.Join(parts, " ")
}
