package simulator

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// StatefulSetStatusLine is a StatefulSet's generation and status in one
// line: "gen=2 og=2 rep=3 ready=3 avail=3 cur=2 upd=1 rev=web-6d4f/web-7c9b"
// (rev is currentRevision/updateRevision).
func StatefulSetStatusLine(s *appsv1.StatefulSet) string {
	st := s.Status
	return fmt.Sprintf("gen=%d og=%d rep=%d ready=%d avail=%d cur=%d upd=%d rev=%s/%s",
		s.Generation, st.ObservedGeneration, st.Replicas, st.ReadyReplicas, st.AvailableReplicas,
		st.CurrentReplicas, st.UpdatedReplicas, st.CurrentRevision, st.UpdateRevision)
}

// DaemonSetStatusLine is a DaemonSet's generation and status in one line:
// "gen=2 og=2 desired=2 current=2 upd=1 ready=2 avail=2 unavail=0 mis=0".
func DaemonSetStatusLine(d *appsv1.DaemonSet) string {
	st := d.Status
	return fmt.Sprintf("gen=%d og=%d desired=%d current=%d upd=%d ready=%d avail=%d unavail=%d mis=%d",
		d.Generation, st.ObservedGeneration, st.DesiredNumberScheduled, st.CurrentNumberScheduled,
		st.UpdatedNumberScheduled, st.NumberReady, st.NumberAvailable, st.NumberUnavailable, st.NumberMisscheduled)
}

// workloadPodSuffix is what the tracer adds to a StatefulSet's or
// DaemonSet's pod: its controller-revision-hash and, once bound, its node.
func workloadPodSuffix(p *corev1.Pod) string {
	s := " rev=" + p.Labels[appsv1.ControllerRevisionHashLabelKey]
	if p.Spec.NodeName != "" {
		s += " node=" + p.Spec.NodeName
	}
	return s
}
