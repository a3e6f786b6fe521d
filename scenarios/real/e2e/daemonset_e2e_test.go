//go:build e2e

package e2e_test

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/operator/rollout"
	"github.com/lunadas/upgrade-operator/scenarios/real/e2e"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// dsNamespace holds the DaemonSet-callee graph.
const dsNamespace = "e2e-daemonset-graph"

// TestE2EDaemonSetCalleeBeforeAPI: on the local control plane (the real
// DaemonSet controller, one kwok node), the graph agent (DaemonSet,
// maxSurge 1, pods terminating for 4 s) ← api (Deployment) upgrades in
// order: the api image is committed after the old agent pod's deletion,
// although the DaemonSet's counters (kubectl rollout status's rule) said
// done earlier — the figure is printed. It also checks that
// rollout.CurrentDaemonSetRevision finds, among the real controller's
// ControllerRevisions, the hash the new pod carries (the getPatch/Match
// reimplementation against the real thing).
func TestE2EDaemonSetCalleeBeforeAPI(t *testing.T) {
	ctx := t.Context()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	env := e2e.Env{Name: "local", RESTConfig: cp.RESTConfig, Kubeconfig: cp.Kubeconfig, Images: e2e.KwokImages}
	r, err := e2e.NewRunner(ctx, env, t.TempDir())
	require.NoError(t, err)
	require.NoError(t, r.CreateNamespace(ctx, dsNamespace))
	c, err := client.NewWithWatch(cp.RESTConfig, client.Options{Scheme: realcluster.Scheme()})
	require.NoError(t, err)
	startManager(t, ctx, env, manager.Options{WatchNamespaces: []string{dsNamespace}})

	timing := map[string]string{"pod-ready.stage.kwok.x-k8s.io/delay": "1s", "pod-delete.stage.kwok.x-k8s.io/delay": "4s"}
	agentLabels := map[string]string{"app": "agent"}
	require.NoError(t, c.Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: dsNamespace, Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: agentLabels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: agentLabels, Annotations: timing},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30),
					Containers: []corev1.Container{{Name: "agent", Image: "registry.example.com/agent:v1"}}}}}}))
	apiLabels := map[string]string{"app": "api"}
	require.NoError(t, c.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: dsNamespace, Name: "api"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: apiLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: apiLabels, Annotations: timing},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30),
					Containers: []corev1.Container{{Name: "api", Image: "registry.example.com/api:v1"}}}}}}))
	waitIn(t, ctx, c, dsNamespace, &appsv1.DaemonSetList{}, "daemonset agent rolled out at v1", func(l client.ObjectList) bool {
		for _, d := range l.(*appsv1.DaemonSetList).Items {
			return d.Status.ObservedGeneration >= d.Generation && d.Status.DesiredNumberScheduled == 1 &&
				d.Status.UpdatedNumberScheduled == 1 && d.Status.NumberAvailable == 1
		}
		return false
	})
	pods := &corev1.PodList{}
	require.NoError(t, c.List(ctx, pods, client.InNamespace(dsNamespace), client.MatchingLabels(agentLabels)))
	require.Len(t, pods.Items, 1)
	oldPod := pods.Items[0].Name

	var mu sync.Mutex
	var oldGone, apiWrite, countersDone fact
	apiWritten := make(chan struct{}, 1)
	record := func(list client.ObjectList, on func(watch.Event)) {
		w, err := c.Watch(ctx, list, client.InNamespace(dsNamespace))
		require.NoError(t, err)
		t.Cleanup(w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				mu.Lock()
				on(ev)
				mu.Unlock()
			}
		}()
	}
	record(&corev1.PodList{}, func(ev watch.Event) {
		if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Deleted && p.Name == oldPod {
			oldGone = fact{rv: rvOf(p), what: "old pod " + p.Name + " deleted", at: time.Now()}
		}
	})
	record(&appsv1.DaemonSetList{}, func(ev watch.Event) {
		d, ok := ev.Object.(*appsv1.DaemonSet)
		if !ok {
			return
		}
		s := d.Status
		if countersDone.rv == 0 && d.Spec.Template.Spec.Containers[0].Image == "registry.example.com/agent:v2" &&
			s.ObservedGeneration >= d.Generation && s.UpdatedNumberScheduled >= s.DesiredNumberScheduled && s.NumberAvailable >= s.DesiredNumberScheduled {
			countersDone = fact{rv: rvOf(d), what: "daemonset counters done (kubectl rollout status)", at: time.Now()}
		}
	})
	record(&appsv1.DeploymentList{}, func(ev watch.Event) {
		if d, ok := ev.Object.(*appsv1.Deployment); ok && apiWrite.rv == 0 && d.Spec.Template.Spec.Containers[0].Image == "registry.example.com/api:v2" {
			apiWrite = fact{rv: rvOf(d), what: "api image written (generation " + strconv.FormatInt(d.Generation, 10) + ")", at: time.Now()}
			select {
			case apiWritten <- struct{}{}:
			default:
			}
		}
	})

	began := time.Now()
	require.NoError(t, c.Create(ctx, &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: dsNamespace, Name: "agents-v2"},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "agent", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindDaemonSet, Name: "agent"}, Image: "registry.example.com/agent:v2"},
			{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "api"}, Image: "registry.example.com/api:v2", DependsOn: []string{"agent"}},
		}}}))
	waitIn(t, ctx, c, dsNamespace, &v1beta1.ApplicationUpgradeList{}, "upgrade agents-v2 Completed", func(l client.ObjectList) bool {
		for _, u := range l.(*v1beta1.ApplicationUpgradeList).Items {
			require.NotEqual(t, v1beta1.PhaseFailed, u.Status.Phase, u.Status.Message)
			return u.Status.Phase == v1beta1.PhaseCompleted
		}
		return false
	})
	elapsed := time.Since(began)
	select {
	case <-apiWritten:
	case <-time.After(30 * time.Second):
	}

	// The real controller's current revision, found as the operator finds it.
	var ds appsv1.DaemonSet
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: dsNamespace, Name: "agent"}, &ds))
	var revs appsv1.ControllerRevisionList
	require.NoError(t, c.List(ctx, &revs, client.InNamespace(dsNamespace), client.MatchingLabels(agentLabels)))
	require.NoError(t, c.List(ctx, pods, client.InNamespace(dsNamespace), client.MatchingLabels(agentLabels)))
	require.Len(t, pods.Items, 1)
	rev := rollout.CurrentDaemonSetRevision(&ds, revs.Items)
	assert.Equal(t, pods.Items[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey], rev.Hash,
		"getPatch/Match reimplemented: the current ControllerRevision's hash is the new pod's (%d revisions)", len(revs.Items))
	assert.True(t, rev.Updated(&pods.Items[0]))

	mu.Lock()
	defer mu.Unlock()
	require.NotZero(t, oldGone.rv, "the old agent pod was deleted")
	require.NotZero(t, apiWrite.rv, "the api image write was observed")
	require.Greaterf(t, apiWrite.rv, oldGone.rv, "%s at resourceVersion %d, before %s at %d", apiWrite.what, apiWrite.rv, oldGone.what, oldGone.rv)
	counters := "never observed"
	if countersDone.rv != 0 {
		order := "after"
		if countersDone.rv < oldGone.rv {
			order = "BEFORE"
		}
		counters = fmt.Sprintf("rv %d, %s the old pod's deletion", countersDone.rv, order)
	}
	fmt.Printf("daemonset callee: Completed in %.1f s; counters done: %s; %s (rv %d), then %s (rv %d): handoff %.3f s\n",
		elapsed.Seconds(), counters, oldGone.what, oldGone.rv, apiWrite.what, apiWrite.rv, apiWrite.at.Sub(oldGone.at).Seconds())
}
