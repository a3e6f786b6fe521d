package fidelity

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/simulator"
)

// CrashLoopImage is the image of the crash-loop comparison: the
// ":crashloop" marker on the simulator, the demo image's crashloop tag on
// the real node (scenarios/real/nodeimages CrashTags).
const CrashLoopImage = "registry.example.com/job-worker:" + simulator.ImageTagCrashLoop

// CrashLoopContainer is the pod's one container.
const CrashLoopContainer = "worker"

// CrashLoopDone: the samples reach restarts restarts and then the
// CrashLoopBackOff that follows the last run's exit (so its delay and
// message are in the samples).
func CrashLoopDone(samples []ContainerSample, restarts int32) bool {
	for _, s := range samples {
		if s.Restarts >= restarts && s.State == "waiting" && s.Reason == "CrashLoopBackOff" {
			return true
		}
	}
	return false
}

// SimCrashLoop runs one pod of CrashLoopImage on the simulator's kubelet
// model until it has restarted restarts times and waits in back-off
// again, and returns every status of its container the model wrote,
// timed from the pod's creation (virtual seconds). Errors: the pod could
// not be created, or the model did not get there within an hour of
// virtual time.
func SimCrashLoop(ctx context.Context, seed int64, restarts int32) ([]ContainerSample, error) {
	sim := simulator.New(simulator.Options{Seed: seed})
	sim.InstallKubeControllers(simulator.KubeOptions{})
	origin := sim.Now()
	var samples []ContainerSample
	sim.Subscribe(func(ev simulator.WatchEvent) {
		if p, ok := ev.Object.(*corev1.Pod); ok {
			if s, ok := SampleOf(p, CrashLoopContainer, origin, ev.Time); ok {
				samples = append(samples, s)
			}
		}
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "fidelity", Name: "crashloop"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: CrashLoopContainer, Image: CrashLoopImage}}}}
	if err := sim.Client().Create(ctx, pod); err != nil {
		return nil, fmt.Errorf("fidelity: create pod fidelity/crashloop in the simulator: %w", err)
	}
	if _, err := sim.Run(ctx, func() bool { return CrashLoopDone(samples, restarts) }, time.Hour); err != nil {
		return samples, fmt.Errorf("fidelity: pod fidelity/crashloop in the simulator: %w", err)
	}
	if !CrashLoopDone(samples, restarts) {
		return samples, fmt.Errorf("fidelity: pod fidelity/crashloop in the simulator did not reach %d restarts and back-off within an hour", restarts)
	}
	return samples, nil
}
