//go:build e2e && fidelity

package app

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
	"github.com/lunadas/upgrade-operator/scenarios/real/realnode"
	"github.com/lunadas/upgrade-operator/simulator"
)

// crashLoopScenario is the feature whose verdicts the crash-loop
// comparison reads (features/failures.feature, tagged @real-node).
const crashLoopScenario = "the new worker image crash-loops"

// crashLoopRestarts is how far both pods go: restarts at 0, 10, 20 and
// 40 s after an exit, then the back-off of 80 s is seen (~75 s real).
const crashLoopRestarts = 4

// writeCrashLoopFidelity runs one crash-looping pod on the simulator's
// kubelet model and on the real node's kubelet, reads the operator's
// verdicts from the crash-loop feature's event logs in scenarios, and
// writes the comparison to w (make fidelity REAL_NODE=1).
func writeCrashLoopFidelity(t *testing.T, w io.Writer, scenarios []fidelity.Scenario) {
	t.Helper()
	simSamples, err := fidelity.SimCrashLoop(t.Context(), *seed, crashLoopRestarts)
	if err != nil {
		t.Errorf("crash loop on the simulator: %v", err)
	}
	realSamples, err := realCrashLoop(t.Context(), realBackend(t), crashLoopRestarts)
	if err != nil {
		t.Errorf("crash loop on the real node: %v", err)
	}
	c := fidelity.CrashLoopComparison{Sim: fidelity.DeriveCrashLoop(simSamples), Real: fidelity.DeriveCrashLoop(realSamples)}
	found := false
	for _, s := range scenarios {
		if s.Name == crashLoopScenario {
			found = true
			c.SimVerdict, c.RealVerdict = crashLoopVerdict(s.Sim), crashLoopVerdict(s.Real)
		}
	}
	if !found {
		t.Errorf("no event logs of the scenario %q: is it still tagged @real @real-node?", crashLoopScenario)
	}
	if err := fidelity.WriteCrashLoopReport(w, c); err != nil {
		t.Error(err)
	}
}

// crashLoopVerdict is the upgrade's last phase and message in a detailed
// event log, timed from the write of the worker's crash-loop image.
func crashLoopVerdict(events []eventlog.Event) fidelity.Verdict {
	v := fidelity.Verdict{After: math.NaN()}
	write := math.NaN()
	for _, e := range events {
		switch {
		case e.Event == eventlog.DeploymentWrite && strings.HasSuffix(e.Image, ":"+simulator.ImageTagCrashLoop) && math.IsNaN(write):
			write = e.T
		case e.Event == eventlog.Phase:
			v.Phase, v.Message, v.After = e.Phase, e.Message, e.T-write
		}
	}
	return v
}

// realCrashLoop runs one pod of fidelity.CrashLoopImage on the real node
// (its own namespace, deleted after) and returns every status of its
// container the watch delivered, timed from just before its creation,
// until it restarted restarts times and waits in back-off again (at most
// 4 minutes).
func realCrashLoop(ctx context.Context, b RealBackend, restarts int32) ([]fidelity.ContainerSample, error) {
	cs, err := kubernetes.NewForConfig(b.Suite.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("crash loop: client: %w", err)
	}
	ns := fmt.Sprintf("crashloop-fidelity-%d", time.Now().Unix())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("crash loop: create namespace %s: %w", ns, err)
	}
	defer func() {
		_ = cs.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{})
	}()
	// The ServiceAccount admission plugin refuses a pod until the
	// namespace's default ServiceAccount exists (the serviceaccount
	// controller creates it).
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("crash loop: no default ServiceAccount in %s: %w", ns, err)
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Name: "crashloop"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: fidelity.CrashLoopContainer, Image: fidelity.CrashLoopImage}}}}
	if err := realnode.AdaptPodTemplate(&tmpl); err != nil {
		return nil, err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "crashloop"}, Spec: tmpl.Spec}
	wctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	watcher, err := cs.CoreV1().Pods(ns).Watch(wctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", pod.Name).String()})
	if err != nil {
		return nil, fmt.Errorf("crash loop: watch pod %s/%s: %w", ns, pod.Name, err)
	}
	defer watcher.Stop()
	origin := time.Now()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("crash loop: create pod %s/%s: %w", ns, pod.Name, err)
	}
	var samples []fidelity.ContainerSample
	for ev := range watcher.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		if s, ok := fidelity.SampleOf(p, fidelity.CrashLoopContainer, origin, time.Now()); ok {
			samples = append(samples, s)
		}
		if fidelity.CrashLoopDone(samples, restarts) {
			return samples, nil
		}
	}
	return samples, fmt.Errorf("crash loop: pod %s/%s on the real node did not reach %d restarts and back-off within 4 minutes (%d statuses seen)", ns, pod.Name, restarts, len(samples))
}
