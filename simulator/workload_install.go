package simulator

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeNames are n node names, "kwok-node-0" ... "kwok-node-<n-1>", the
// names the local control plane gives its kwok nodes: pass them as
// KubeOptions.Nodes to simulate n nodes. n < 1 means 1.
func NodeNames(n int) []string {
	names := make([]string, max(n, 1))
	for i := range names {
		names[i] = fmt.Sprintf("kwok-node-%d", i)
	}
	return names
}

// installWorkloadControllers adds the StatefulSet and DaemonSet controller
// models. Their watches filter out the events of objects they do not
// control (the informers' handlers resolve the controller reference and
// drop the others), so a run without StatefulSets or DaemonSets schedules
// no extra event and replays as before.
func (s *Sim) installWorkloadControllers(kcm *simClient) {
	ssc := &statefulSetController{s: s, c: kcm}
	s.AddController(StatefulSetControllerName, ssc,
		Watch{Object: &appsv1.StatefulSet{}},
		Watch{Object: &corev1.Pod{}, Map: MapToControllerOwner("StatefulSet"), Filter: controlledBy("StatefulSet")},
	)
	dsc := &daemonSetsController{s: s, c: kcm}
	s.AddController(DaemonSetControllerName, dsc,
		Watch{Object: &appsv1.DaemonSet{}},
		Watch{Object: &corev1.Pod{}, Map: MapToControllerOwner("DaemonSet"), Filter: controlledBy("DaemonSet")},
		Watch{Object: &appsv1.ControllerRevision{}, Map: MapToControllerOwner("DaemonSet"), Filter: controlledBy("DaemonSet")},
		Watch{Object: &corev1.Node{}, Map: dsc.mapNodeToDaemonSets, Filter: func(WatchEvent) bool {
			return len(s.store.list(appsv1.SchemeGroupVersion.WithKind("DaemonSet"))) > 0
		}},
	)
}

// controlledBy is a Watch.Filter passing the events of objects (before or
// after the change) whose controller reference is of the given kind.
func controlledBy(kind string) func(WatchEvent) bool {
	is := func(o metav1.Object) bool {
		ref := metav1.GetControllerOfNoCopy(o)
		return ref != nil && ref.Kind == kind
	}
	return func(ev WatchEvent) bool {
		return is(ev.Object) || (ev.Old != nil && is(ev.Old))
	}
}
