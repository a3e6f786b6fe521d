package simulator_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lunadas/upgrade-operator/simulator"
)

// rolledWatcher is a toy reconciler: it reports when a Deployment's pods all
// run the new image and no pod of it is terminating.
type rolledWatcher struct {
	c    client.Client
	sim  *simulator.Sim
	done bool
}

func (r *rolledWatcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pods := &corev1.PodList{}
	if err := r.c.List(ctx, pods, client.InNamespace(req.Namespace), client.MatchingLabels{"app": req.Name}); err != nil {
		return reconcile.Result{}, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Spec.Containers[0].Image != "example/worker:v2" {
			return reconcile.Result{}, nil // woken again by the next pod change
		}
	}
	if len(pods.Items) > 0 && !r.done {
		r.done = true
		fmt.Printf("%s: only new pods left\n", simulator.FormatElapsed(r.sim.Elapsed()))
	}
	return reconcile.Result{}, nil
}

func Example() {
	ctx := context.Background()
	sim := simulator.New(simulator.Options{Seed: 42})
	sim.InstallKubeControllers(simulator.KubeOptions{})
	c := sim.Client()

	labels := map[string]string{"app": "worker"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "worker"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					simulator.AnnotationPodReadyDelay:  "5s",
					simulator.AnnotationPodDeleteDelay: "20s",
				}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "example/worker:v1"}}},
			},
		},
	}
	if err := c.Create(ctx, d); err != nil {
		panic(err)
	}
	_, _ = sim.RunFor(ctx, time.Minute) // initial rollout

	w := &rolledWatcher{c: c, sim: sim}
	mapPodToDeployment := func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()["app"]}}}
	}
	sim.AddController("watcher", w, simulator.Watch{Object: &corev1.Pod{}, Map: mapPodToDeployment})

	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = "example/worker:v2"
	if err := c.Patch(ctx, d, patch); err != nil {
		panic(err)
	}
	if _, err := sim.Run(ctx, func() bool { return w.done }, 10*time.Minute); err != nil {
		panic(err)
	}
	// Output: t=90.002s: only new pods left
}
