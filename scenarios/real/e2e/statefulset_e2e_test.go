//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/real/e2e"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// stsNamespace holds the StatefulSet-callee graph.
const stsNamespace = "e2e-statefulset-graph"

// fact is one watch event the ordering check needs, with the
// resourceVersion etcd committed it at (one etcd orders every commit, the
// same basis as the history checks of scenarios/judge).
type fact struct {
	rv   int64
	what string
	at   time.Time
}

// TestE2EStatefulSetCalleeBeforeAPI: on the local control plane (the real
// StatefulSet and Deployment controllers, kwok pods), the graph
// db (StatefulSet, 2 replicas, pods terminating for 4 s) ← api
// (Deployment) upgrades in order, and the api image is committed only after
// the last pod of db's old revision is deleted — by the resourceVersions of
// the watch events.
func TestE2EStatefulSetCalleeBeforeAPI(t *testing.T) {
	ctx := t.Context()
	// Run alone, nothing set the manager's logger (TestE2E sets its own):
	// errors only, to stderr.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	env := e2e.Env{Name: "local", RESTConfig: cp.RESTConfig, Kubeconfig: cp.Kubeconfig, Images: e2e.KwokImages}
	r, err := e2e.NewRunner(ctx, env, t.TempDir())
	require.NoError(t, err)
	require.NoError(t, r.CreateNamespace(ctx, stsNamespace))
	c, err := client.NewWithWatch(cp.RESTConfig, client.Options{Scheme: realcluster.Scheme()})
	require.NoError(t, err)
	startManager(t, ctx, env, manager.Options{WatchNamespaces: []string{stsNamespace}})

	timing := map[string]string{"pod-ready.stage.kwok.x-k8s.io/delay": "1s", "pod-delete.stage.kwok.x-k8s.io/delay": "4s"}
	dbLabels := map[string]string{"app": "db"}
	require.NoError(t, c.Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: stsNamespace, Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: dbLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: dbLabels, Annotations: timing},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30),
					Containers: []corev1.Container{{Name: "db", Image: "registry.example.com/db:v1"}}}}}}))
	apiLabels := map[string]string{"app": "api"}
	require.NoError(t, c.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: stsNamespace, Name: "api"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: apiLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: apiLabels, Annotations: timing},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30),
					Containers: []corev1.Container{{Name: "api", Image: "registry.example.com/api:v1"}}}}}}))
	waitFor(t, ctx, c, &appsv1.StatefulSetList{}, "statefulset db rolled out at v1", func(l client.ObjectList) bool {
		for _, s := range l.(*appsv1.StatefulSetList).Items {
			return s.Status.ObservedGeneration >= s.Generation && s.Status.ReadyReplicas == 2 && s.Status.UpdatedReplicas == 2 &&
				s.Status.CurrentRevision == s.Status.UpdateRevision
		}
		return false
	})
	var before appsv1.StatefulSet
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: stsNamespace, Name: "db"}, &before))
	oldRevision := before.Status.UpdateRevision

	// Record pod deletions of db's old revision and the api Deployment's
	// image writes, from watches started before the upgrade exists.
	var mu sync.Mutex
	var oldPodsDeleted, apiWrites []fact
	var countersDone fact // first status kubectl rollout status calls done
	apiWritten := make(chan struct{}, 1)
	record := func(list client.ObjectList, on func(watch.Event)) {
		w, err := c.Watch(ctx, list, client.InNamespace(stsNamespace))
		require.NoError(t, err)
		t.Cleanup(w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				on(ev)
			}
		}()
	}
	record(&corev1.PodList{}, func(ev watch.Event) {
		p, ok := ev.Object.(*corev1.Pod)
		if ok && ev.Type == watch.Deleted && p.Labels[appsv1.StatefulSetRevisionLabel] == oldRevision {
			mu.Lock()
			oldPodsDeleted = append(oldPodsDeleted, fact{rv: rvOf(p), what: "old pod " + p.Name + " deleted", at: time.Now()})
			mu.Unlock()
		}
	})
	record(&appsv1.StatefulSetList{}, func(ev watch.Event) {
		s, ok := ev.Object.(*appsv1.StatefulSet)
		if !ok || s.Spec.Template.Spec.Containers[0].Image != "registry.example.com/db:v2" {
			return
		}
		// StatefulSetStatusViewer: generation observed, ready >= replicas,
		// updated >= replicas - partition (partition defaults to 0).
		st := s.Status
		if st.ObservedGeneration >= s.Generation && st.ReadyReplicas >= *s.Spec.Replicas && st.UpdatedReplicas >= *s.Spec.Replicas {
			mu.Lock()
			if countersDone.rv == 0 {
				countersDone = fact{rv: rvOf(s), what: "statefulset counters done (kubectl rollout status)", at: time.Now()}
			}
			mu.Unlock()
		}
	})
	record(&appsv1.DeploymentList{}, func(ev watch.Event) {
		d, ok := ev.Object.(*appsv1.Deployment)
		if ok && ev.Type == watch.Modified && d.Spec.Template.Spec.Containers[0].Image == "registry.example.com/api:v2" {
			mu.Lock()
			apiWrites = append(apiWrites, fact{rv: rvOf(d), what: "api image written (generation " + strconv.FormatInt(d.Generation, 10) + ")", at: time.Now()})
			mu.Unlock()
			select {
			case apiWritten <- struct{}{}:
			default:
			}
		}
	})

	began := time.Now()
	require.NoError(t, c.Create(ctx, &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: stsNamespace, Name: "shop-v2"},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "db"}, Image: "registry.example.com/db:v2"},
			{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "api"}, Image: "registry.example.com/api:v2", DependsOn: []string{"db"}},
		}}}))
	waitFor(t, ctx, c, &v1beta1.ApplicationUpgradeList{}, "upgrade shop-v2 Completed", func(l client.ObjectList) bool {
		for _, u := range l.(*v1beta1.ApplicationUpgradeList).Items {
			require.NotEqual(t, v1beta1.PhaseFailed, u.Status.Phase, u.Status.Message)
			return u.Status.Phase == v1beta1.PhaseCompleted
		}
		return false
	})
	elapsed := time.Since(began)

	// The api Deployment's MODIFIED event of the write is delivered after
	// Completed at the latest; wait for it through the same watch.
	select {
	case <-apiWritten:
	case <-time.After(30 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, oldPodsDeleted, 2, "both old db pods are deleted")
	require.NotEmpty(t, apiWrites, "the api image write was observed")
	last := oldPodsDeleted[0]
	for _, f := range oldPodsDeleted {
		if f.rv > last.rv {
			last = f
		}
	}
	first := apiWrites[0]
	require.Greaterf(t, first.rv, last.rv, "%s at resourceVersion %d, before %s at %d", first.what, first.rv, last.what, last.rv)
	counters := "never observed"
	if countersDone.rv != 0 {
		order := "after"
		if countersDone.rv < last.rv {
			order = "BEFORE"
		}
		counters = fmt.Sprintf("rv %d, %s the last old pod's deletion", countersDone.rv, order)
	}
	fmt.Printf("statefulset callee: Completed in %.1f s; counters done: %s; %s (rv %d), then %s (rv %d): handoff %.3f s\n",
		elapsed.Seconds(), counters, last.what, last.rv, first.what, first.rv, first.at.Sub(last.at).Seconds())
}

func rvOf(o client.Object) int64 {
	n, _ := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	return n
}

// waitFor watches list in stsNamespace until done holds (checked on the
// initial list and on every event), or fails after two minutes.
func waitFor(t *testing.T, ctx context.Context, c client.WithWatch, list client.ObjectList, what string, done func(client.ObjectList) bool) {
	waitIn(t, ctx, c, stsNamespace, list, what, done)
}

// waitIn is waitFor in namespace ns.
func waitIn(t *testing.T, ctx context.Context, c client.WithWatch, ns string, list client.ObjectList, what string, done func(client.ObjectList) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		require.NoError(t, c.List(ctx, list, client.InNamespace(ns)))
		if done(list) {
			return
		}
		w, err := c.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}})
		require.NoError(t, err, "waiting for %s", what)
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			if ctx.Err() != nil {
				break
			}
			break // any change: list again and judge
		}
		w.Stop()
		require.NoError(t, ctx.Err(), "waiting for %s", what)
	}
}
