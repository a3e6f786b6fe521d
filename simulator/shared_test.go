package simulator_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/simulator"
)

func sharedSim(t *testing.T) (*simulator.Sim, simulator.SharedLister) {
	t.Helper()
	require.True(t, simulator.CheckSharedReads, "the check is on in tests")
	sim := simulator.New(simulator.Options{Seed: 1})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:v1"}}}}
	require.NoError(t, sim.Client().Create(context.Background(), pod))
	return sim, sim.SharedLister("mutant")
}

var podGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// A reader that changes an object a shared read handed out (as a
// reconciler that forgot the DeepCopy would change a lister's object, and
// with it the cache) is caught at the end of the event, by name.
func TestModifyingASharedReadIsCaught(t *testing.T) {
	sim, l := sharedSim(t)
	sim.Schedule(time.Second, "mutate", func() {
		objs, err := l.List(context.Background(), podGVK, "ns")
		require.NoError(t, err)
		objs[0].(*corev1.Pod).Labels = map[string]string{"touched": "yes"}
	})
	assert.PanicsWithValue(t, "simulator: *v1.Pod ns/p, read shared by mutant, was modified in place: copy it (DeepCopy) before changing it, as with an informer's lister",
		func() { _, _ = sim.RunFor(context.Background(), time.Minute) })
}

// Outside an event (a stop condition), the change is caught at the next
// shared read.
func TestModifyingASharedReadIsCaughtAtTheNextRead(t *testing.T) {
	_, l := sharedSim(t)
	objs, err := l.List(context.Background(), podGVK, "")
	require.NoError(t, err)
	objs[0].(*corev1.Pod).Spec.Containers[0].Image = "img:v2"
	assert.Panics(t, func() { _, _ = l.List(context.Background(), podGVK, "") })
}

// Changing a copy is fine, and the store's object is what was read.
func TestCopyingASharedReadIsFine(t *testing.T) {
	sim, l := sharedSim(t)
	sim.Schedule(time.Second, "copy", func() {
		objs, err := l.List(context.Background(), podGVK, "ns")
		require.NoError(t, err)
		p := objs[0].(*corev1.Pod).DeepCopy()
		p.Labels = map[string]string{"touched": "yes"}
		require.NoError(t, sim.Client().Update(context.Background(), p))
	})
	_, err := sim.RunFor(context.Background(), time.Minute)
	require.NoError(t, err)
	var p corev1.Pod
	require.NoError(t, sim.Client().Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "p"}, &p))
	assert.Equal(t, "yes", p.Labels["touched"])
}

// Get with client.UnsafeDisableDeepCopy fills the caller's object with a
// shallow copy of the stored one, as controller-runtime's cache reader
// does: changing what it shares (a map, a slice element) is caught.
func TestModifyingASharedGetIsCaught(t *testing.T) {
	sim, _ := sharedSim(t)
	c := sim.ClientFor("mutant")
	key := client.ObjectKey{Namespace: "ns", Name: "p"}
	sim.Schedule(time.Second, "mutate", func() {
		var p corev1.Pod
		require.NoError(t, c.Get(context.Background(), key, &p, client.UnsafeDisableDeepCopy))
		assert.Equal(t, "img:v1", p.Spec.Containers[0].Image)
		p.Labels = map[string]string{"own": "map"} // the caller's own field: fine
		p.Spec.Containers[0].Image = "img:v2"      // the store's slice: caught
	})
	assert.PanicsWithValue(t, "simulator: *v1.Pod ns/p, read shared by mutant, was modified in place: copy it (DeepCopy) before changing it, as with an informer's lister",
		func() { _, _ = sim.RunFor(context.Background(), time.Minute) })
}

// Reading with Get shared and changing nothing is fine.
func TestReadingASharedGetIsFine(t *testing.T) {
	sim, _ := sharedSim(t)
	c := sim.ClientFor("reader")
	sim.Schedule(time.Second, "read", func() {
		var p corev1.Pod
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "p"}, &p, client.UnsafeDisableDeepCopy))
		p.Labels = map[string]string{"own": "map"}
	})
	_, err := sim.RunFor(context.Background(), time.Minute)
	require.NoError(t, err)
}

// List with client.UnsafeDisableDeepCopy fills a typed list with shallow
// copies of the stored objects, as controller-runtime's cache reader does
// (the operator lists ApplicationUpgrades, ReplicaSets and pods so): a
// reconciler changing what an item shares with the store is caught at the
// end of the event; replacing an item's own field is not a change.
func TestModifyingASharedListIsCaught(t *testing.T) {
	sim, _ := sharedSim(t)
	c := sim.ClientFor("mutant")
	sim.Schedule(time.Second, "own field", func() {
		var pods corev1.PodList
		require.NoError(t, c.List(context.Background(), &pods, client.InNamespace("ns"), client.UnsafeDisableDeepCopy))
		require.Len(t, pods.Items, 1)
		pods.Items[0].Labels = map[string]string{"own": "map"}
		pods.Items[0].Name = "renamed"
	})
	sim.Schedule(2*time.Second, "mutate", func() {
		var pods corev1.PodList
		require.NoError(t, c.List(context.Background(), &pods, client.UnsafeDisableDeepCopy))
		pods.Items[0].Spec.Containers[0].Image = "img:v2"
	})
	assert.PanicsWithValue(t, "simulator: *v1.Pod ns/p, read shared by mutant, was modified in place: copy it (DeepCopy) before changing it, as with an informer's lister",
		func() { _, _ = sim.RunFor(context.Background(), time.Minute) })
	var p corev1.Pod
	require.NoError(t, sim.Client().Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "p"}, &p))
	assert.Nil(t, p.Labels, "the first event changed only the list's own copy")
}
