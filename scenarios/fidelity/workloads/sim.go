package workloads

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/simulator"
)

// settleLimit bounds each wait for a scenario to settle.
const settleLimit = 10 * time.Minute

// RunSim runs sc on the simulator (seed seed, sc.Nodes nodes, namespace
// default) and returns its sequences (Recorder.Format).
func RunSim(ctx context.Context, sc Scenario, seed int64) (string, error) {
	sim := simulator.New(simulator.Options{Seed: seed})
	sim.InstallKubeControllers(simulator.KubeOptions{Nodes: simulator.NodeNames(sc.Nodes)})
	start := time.Unix(0, 0)
	rec := NewRecorder(start)
	rec.PerPod = sc.PerPod
	sim.Subscribe(func(ev simulator.WatchEvent) {
		rec.Observe(ev.Object, ev.Type == watch.Deleted, start.Add(sim.Elapsed()))
	})
	c := sim.Client()
	obj := sc.Object("default")
	if err := c.Create(ctx, obj); err != nil {
		return "", fmt.Errorf("%s: create %s: %w", sc.Name, obj.GetName(), err)
	}
	settle := func(step string, minPods int) error {
		_, err := sim.Run(ctx, func() bool { return rec.PodsSeen() >= minPods && simSettled(ctx, c, obj, sc.Nodes) }, sim.Elapsed()+settleLimit)
		if err != nil {
			return fmt.Errorf("%s: %s: not settled: %w", sc.Name, step, err)
		}
		return nil
	}
	if err := settle("create", 0); err != nil {
		return "", err
	}
	for i, step := range sc.Steps {
		minPods, err := applyStep(ctx, c, obj, step, rec.PodsSeen())
		if err != nil {
			return "", fmt.Errorf("%s: step %d: %w", sc.Name, i+1, err)
		}
		if err := settle(fmt.Sprintf("step %d", i+1), minPods); err != nil {
			return "", err
		}
	}
	return Format(rec.Sequences(obj.GetName())), nil
}

// applyStep runs one step on obj's cluster and returns how many pods the
// recorder must have seen before the step can be settled: one more than
// seen after an Act (the replacement), else seen.
func applyStep(ctx context.Context, c client.Client, obj client.Object, step Step, seen int) (int, error) {
	if step.Act != nil {
		return seen + 1, step.Act(ctx, c, obj.GetNamespace())
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return 0, err
	}
	step.Change(obj)
	if err := c.Update(ctx, obj); err != nil {
		return 0, fmt.Errorf("update: %w", err)
	}
	return seen, nil
}

func simSettled(ctx context.Context, c client.Client, obj client.Object, nodes int) bool {
	cur := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return false
	}
	list := &corev1.PodList{}
	if err := c.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return false
	}
	return Settled(cur, controlled(list.Items, cur), nodes)
}

// controlled are the pods whose controller is owner.
func controlled(pods []corev1.Pod, owner client.Object) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == owner.GetUID() {
			out = append(out, p)
		}
	}
	return out
}
