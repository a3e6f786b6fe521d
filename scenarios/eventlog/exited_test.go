package eventlog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// A kubelet's last status of a deleted pod carries the runtime's exit time
// of each container; PodDeleted records the latest, relative to the start.
func TestPodDeletedRecordsContainerExit(t *testing.T) {
	r := NewRecorder(t0, nil)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	r.Observe(watch.Added, pod, t0)
	gone := pod.DeepCopy()
	gone.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(7 * time.Second))}}},
		{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(9 * time.Second))}}},
		{Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
	}
	r.Observe(watch.Deleted, gone, t0.Add(10*time.Second))
	ev := r.Events()
	require.Equal(t, []string{PodCreated, PodDeleted}, kinds(ev))
	require.NotNil(t, ev[1].Exited)
	assert.Equal(t, 9.0, *ev[1].Exited)
	assert.Nil(t, ev[0].Exited)

	// kwok and the simulator report no exit: the field stays out of the log.
	r2 := NewRecorder(t0, nil)
	r2.Observe(watch.Added, pod, t0)
	r2.Observe(watch.Deleted, pod, t0.Add(time.Second))
	assert.Nil(t, r2.Events()[1].Exited)
}
