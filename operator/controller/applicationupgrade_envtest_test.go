//go:build envtest

package controller

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// setUpRolledOut creates job-worker and job-api at v1, one replica each,
// fully rolled out, and returns the old worker pod's name.
func (w *envWorld) setUpRolledOut(workerReplicas int32) []string {
	w.t.Helper()
	w.createDeployment("job-worker", workerReplicas, "worker", workerV1)
	w.createDeployment("job-api", 1, "api", apiV1)
	w.rollOut("job-worker", false)
	w.rollOut("job-api", false)
	var names []string
	for _, p := range w.podsOf("job-worker") {
		names = append(names, p.Name)
	}
	return names
}

// TestEnvtestManagerWalksThePhasesInOrder runs the real manager (cache,
// watches, field index) on the envtest API server while the test plays the
// Deployment controller: stale status, a surge window, then counters
// complete with the old pod still terminating. The API image must stay
// untouched until the old worker pod object is gone, and the phases must
// follow the state machine exactly.
func TestEnvtestManagerWalksThePhasesInOrder(t *testing.T) {
	w := newEnvWorld(t)
	oldPods := w.setUpRolledOut(1)
	phases := w.recordPhases("upgrade-v2")
	w.startManager()
	w.createUpgrade("upgrade-v2", workerV2, apiV2, nil)

	apiUntouched := func(when string) {
		t.Helper()
		require.Equal(t, apiV1, imageOf(w.deployment("job-api"), "api"), "API image written %s", when)
	}
	// The worker image is written; the controller has not observed it (stale, complete status).
	w.eventually(30*time.Second, "worker image written and the stale status noticed", func() bool {
		u := w.upgrade("upgrade-v2")
		return imageOf(w.deployment("job-worker"), "worker") == workerV2 &&
			u.Status.Phase == v1.PhaseWaitingForWorkers && messageHas(u, "observe generation 2")
	})
	apiUntouched("while the worker's generation is unobserved")

	// Surge: the new pod is up beside the old one, replicas = desired+1.
	rs := w.newReplicaSet(w.deployment("job-worker"))
	w.createPods(rs, 1)
	w.setStatus("job-worker", func(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}
	})
	w.eventually(30*time.Second, "the surge noticed", func() bool {
		return messageHas(w.upgrade("upgrade-v2"), "1 old replicas pending termination")
	})
	apiUntouched("during the surge window")

	// Every counter complete, the old pod still terminating.
	w.terminate(oldPods[0])
	w.setStatus("job-worker", complete)
	w.eventually(30*time.Second, "the terminating old pod noticed", func() bool {
		return messageHas(w.upgrade("upgrade-v2"), oldPods[0], "(terminating)")
	})
	apiUntouched("while an old worker pod is terminating")

	w.finishTermination(oldPods[0])
	w.eventually(30*time.Second, "API image written after the old pod is gone", func() bool {
		return imageOf(w.deployment("job-api"), "api") == apiV2
	})
	w.rollOut("job-api", false)
	w.eventually(30*time.Second, "Completed", func() bool { return w.upgrade("upgrade-v2").Status.Phase == v1.PhaseCompleted })
	// The watch delivering Completed may trail the read above.
	w.eventually(30*time.Second, "the watch to deliver Completed", func() bool {
		seen := phases()
		return len(seen) > 0 && seen[len(seen)-1] == v1.PhaseCompleted
	})

	assert.Equal(t, []v1.Phase{v1.PhasePending, v1.PhaseUpgradingWorkers, v1.PhaseWaitingForWorkers,
		v1.PhaseUpgradingAPI, v1.PhaseWaitingForAPI, v1.PhaseCompleted}, phases(), "phases in order, each once")
	u := w.upgrade("upgrade-v2")
	assert.Equal(t, metav1.ConditionTrue, conditionStatus(u, v1.ConditionReady))
	assert.Equal(t, int64(2), w.deployment("job-worker").Generation, "worker written once")
	assert.Equal(t, int64(2), w.deployment("job-api").Generation, "API written once")
}

// recordPhases watches upgrade name and returns the distinct phases its
// status went through, in order.
func (w *envWorld) recordPhases(name string) func() []v1.Phase {
	w.t.Helper()
	wc := w.c.(client.WithWatch)
	watcher, err := wc.Watch(w.ctx, &v1.ApplicationUpgradeList{}, client.InNamespace(w.ns))
	require.NoError(w.t, err)
	w.t.Cleanup(watcher.Stop)
	var mu sync.Mutex
	var phases []v1.Phase
	go func() {
		for ev := range watcher.ResultChan() {
			u, ok := ev.Object.(*v1.ApplicationUpgrade)
			if !ok || ev.Type == watch.Deleted || u.Name != name || u.Status.Phase == "" {
				continue
			}
			mu.Lock()
			if len(phases) == 0 || phases[len(phases)-1] != u.Status.Phase {
				phases = append(phases, u.Status.Phase)
			}
			mu.Unlock()
		}
	}()
	return func() []v1.Phase {
		mu.Lock()
		defer mu.Unlock()
		return append([]v1.Phase(nil), phases...)
	}
}

// TestEnvtestHoldsTheAPIUntilEveryOldWorkerPodIsGone calls the reconciler
// directly, one reconcile at a time, through every state where a counters
// rule would already write the API: stale status after the patch (with a
// stale ProgressDeadlineExceeded too), the surge window, and counters
// complete with the old pod terminating. Repeated reconciles write nothing.
func TestEnvtestHoldsTheAPIUntilEveryOldWorkerPodIsGone(t *testing.T) {
	w := newEnvWorld(t)
	oldPods := w.setUpRolledOut(1)
	w.createUpgrade("upgrade-v2", workerV2, apiV2, nil)

	assert.Equal(t, v1.PhasePending, w.reconcile("upgrade-v2"))
	assert.Equal(t, v1.PhaseUpgradingWorkers, w.reconcile("upgrade-v2"))
	assert.Equal(t, v1.PhaseWaitingForWorkers, w.reconcile("upgrade-v2"))
	worker := w.deployment("job-worker")
	require.Equal(t, workerV2, imageOf(worker, "worker"))
	require.Equal(t, int64(2), worker.Generation)

	t.Run("stale status after the patch does not advance", func(t *testing.T) {
		// The status still says complete for generation 1, with a leftover
		// ProgressDeadlineExceeded from an earlier rollout.
		w.setStatus("job-worker", func(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
			s.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
				Reason: "ProgressDeadlineExceeded", Message: "from an earlier rollout"}}
		})
		assert.Equal(t, v1.PhaseWaitingForWorkers, w.reconcile("upgrade-v2"))
		assert.Contains(t, w.upgrade("upgrade-v2").Status.Message, "observe generation 2 (observed 1)")
	})

	t.Run("repeated reconciles write nothing", func(t *testing.T) {
		workerRV, upgradeRV := w.deployment("job-worker").ResourceVersion, w.upgrade("upgrade-v2").ResourceVersion
		apiRV := w.deployment("job-api").ResourceVersion
		for range 5 {
			assert.Equal(t, v1.PhaseWaitingForWorkers, w.reconcile("upgrade-v2"))
		}
		assert.Equal(t, workerRV, w.deployment("job-worker").ResourceVersion, "no second worker write")
		assert.Equal(t, apiRV, w.deployment("job-api").ResourceVersion, "no API write")
		assert.Equal(t, upgradeRV, w.upgrade("upgrade-v2").ResourceVersion, "no status patch when nothing changed")
	})

	t.Run("surge window: replicas = desired+1", func(t *testing.T) {
		rs := w.newReplicaSet(w.deployment("job-worker"))
		w.createPods(rs, 1)
		w.setStatus("job-worker", func(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
			*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}
		})
		for range 3 {
			assert.Equal(t, v1.PhaseWaitingForWorkers, w.reconcile("upgrade-v2"))
		}
		assert.Contains(t, w.upgrade("upgrade-v2").Status.Message, "old replicas pending termination")
		assert.Equal(t, apiV1, imageOf(w.deployment("job-api"), "api"))
	})

	t.Run("counters complete while the old pod terminates", func(t *testing.T) {
		w.terminate(oldPods[0])
		w.setStatus("job-worker", complete)
		d := w.deployment("job-worker")
		require.Equal(t, d.Status.Replicas, d.Status.UpdatedReplicas)
		require.Equal(t, d.Status.Replicas, d.Status.AvailableReplicas)
		for range 3 {
			assert.Equal(t, v1.PhaseWaitingForWorkers, w.reconcile("upgrade-v2"))
		}
		assert.Contains(t, w.upgrade("upgrade-v2").Status.Message, "old pod "+oldPods[0])
		assert.Contains(t, w.upgrade("upgrade-v2").Status.Message, "(terminating)")
		assert.Equal(t, apiV1, imageOf(w.deployment("job-api"), "api"))
	})

	t.Run("API written once the old pod is gone, then Completed", func(t *testing.T) {
		w.finishTermination(oldPods[0])
		assert.Equal(t, v1.PhaseUpgradingAPI, w.reconcile("upgrade-v2"))
		assert.Equal(t, apiV1, imageOf(w.deployment("job-api"), "api"), "UpgradingAPI records the decision; the write is the next step")
		assert.Equal(t, v1.PhaseWaitingForAPI, w.reconcile("upgrade-v2"))
		api := w.deployment("job-api")
		assert.Equal(t, apiV2, imageOf(api, "api"))
		for range 3 {
			assert.Equal(t, v1.PhaseWaitingForAPI, w.reconcile("upgrade-v2"))
		}
		assert.Equal(t, api.ResourceVersion, w.deployment("job-api").ResourceVersion, "API written once")
		w.rollOut("job-api", false)
		assert.Equal(t, v1.PhaseCompleted, w.reconcile("upgrade-v2"))
		assert.Equal(t, v1.PhaseCompleted, w.reconcile("upgrade-v2"))
		assert.Equal(t, int64(2), w.deployment("job-worker").Generation)
		assert.Equal(t, int64(2), w.deployment("job-api").Generation)
	})
}

// TestEnvtestStuckWorkerFailsThenRecovers: a new worker pod that cannot pull
// its image fails the upgrade (API untouched); so does the progress
// deadline; fixing the spec starts over and completes.
func TestEnvtestStuckWorkerFailsThenRecovers(t *testing.T) {
	const bad = "registry.example.com/job-worker:does-not-exist"
	for _, tc := range []struct {
		name    string
		stall   func(w *envWorld)
		message []string
	}{
		{"image pull error on the new pod", func(w *envWorld) {
			rs := w.newReplicaSet(w.deployment("job-worker"))
			pod := w.createPods(rs, 1)[0]
			var p corev1.Pod
			require.NoError(w.t, w.c.Get(w.ctx, w.key(pod), &p))
			p.Status.Phase = corev1.PodPending
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: bad,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}}}
			require.NoError(w.t, w.c.Status().Update(w.ctx, &p))
			w.setStatus("job-worker", func(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
				*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1}
			})
		}, []string{"worker: Rollout of ", "/job-worker failed", "ErrImagePull"}},
		{"progress deadline exceeded", func(w *envWorld) {
			rs := w.newReplicaSet(w.deployment("job-worker"))
			w.setStatus("job-worker", func(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
				*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
					Conditions: []appsv1.DeploymentCondition{timedOut(rs.Name)}}
			})
		}, []string{"/job-worker failed", "exceeded its progress deadline"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newEnvWorld(t)
			w.setUpRolledOut(1)
			w.createUpgrade("upgrade-v2", bad, apiV2, nil)
			w.reconcileUntil("upgrade-v2", v1.PhaseWaitingForWorkers, 3)
			require.Equal(t, bad, imageOf(w.deployment("job-worker"), "worker"))
			tc.stall(w)
			assert.Equal(t, v1.PhaseFailed, w.reconcile("upgrade-v2"))
			u := w.upgrade("upgrade-v2")
			for _, part := range tc.message {
				assert.Contains(t, u.Status.Message, part)
			}
			assert.Contains(t, u.Status.Message, w.ns+"/job-worker")
			assert.Equal(t, metav1.ConditionTrue, conditionStatus(u, v1.ConditionStalled))
			rv := u.ResourceVersion
			assert.Equal(t, v1.PhaseFailed, w.reconcile("upgrade-v2"), "Failed is terminal for the generation")
			assert.Equal(t, rv, w.upgrade("upgrade-v2").ResourceVersion)
			assert.Equal(t, apiV1, imageOf(w.deployment("job-api"), "api"), "API untouched")

			// Fix the spec: a new generation starts over from Pending.
			u.Spec.Worker.Image = workerV2
			require.NoError(t, w.c.Update(w.ctx, u))
			assert.Equal(t, v1.PhasePending, w.reconcile("upgrade-v2"))
			assert.Equal(t, v1.PhaseUpgradingWorkers, w.reconcile("upgrade-v2"))
			assert.Equal(t, v1.PhaseWaitingForWorkers, w.reconcile("upgrade-v2"))
			assert.Equal(t, workerV2, imageOf(w.deployment("job-worker"), "worker"))
			w.rollOut("job-worker", false)
			w.reconcileUntil("upgrade-v2", v1.PhaseWaitingForAPI, 3)
			w.rollOut("job-api", false)
			assert.Equal(t, v1.PhaseCompleted, w.reconcile("upgrade-v2"))
			assert.Equal(t, int64(2), w.upgrade("upgrade-v2").Status.ObservedGeneration)
		})
	}
}

// TestEnvtestConfigErrorsFail: terminal configuration problems end Failed
// with a message that says what to fix, and nothing is written.
func TestEnvtestConfigErrorsFail(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setUp   func(w *envWorld)
		watched func(w *envWorld) []string
		message func(w *envWorld) string
	}{
		{"missing worker deployment",
			func(w *envWorld) { w.createDeployment("job-api", 1, "api", apiV1) }, nil,
			func(w *envWorld) string {
				return "worker: deployment " + w.ns + "/job-worker not found: create it or fix spec.worker.deploymentRef.name"
			}},
		{"two containers without containerName",
			func(w *envWorld) {
				w.createDeployment("job-worker", 1, "worker", workerV1, "sidecar", "registry.example.com/sidecar:v1")
				w.createDeployment("job-api", 1, "api", apiV1)
			}, nil,
			func(w *envWorld) string {
				return "worker: deployment " + w.ns + "/job-worker has 2 containers (worker, sidecar): set spec.worker.containerName to one of them"
			}},
		{"deployment outside --watch-namespaces",
			func(w *envWorld) {
				w.createDeployment("job-worker", 1, "worker", workerV1)
				w.createDeployment("job-api", 1, "api", apiV1)
			},
			func(w *envWorld) []string { return []string{"job-system", "other"} },
			func(w *envWorld) string {
				return "namespace \"" + w.ns + "\", which this operator does not watch (--watch-namespaces=job-system,other): add the namespace to the flag"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newEnvWorld(t)
			tc.setUp(w)
			if tc.watched != nil {
				w.r.WatchNamespaces = tc.watched(w)
			}
			w.createUpgrade("upgrade-v2", workerV2, apiV2, func(u *v1.ApplicationUpgrade) {
				if tc.name == "two containers without containerName" {
					u.Spec.Worker.ContainerName = ""
				}
			})
			assert.Equal(t, v1.PhasePending, w.reconcile("upgrade-v2"))
			assert.Equal(t, v1.PhaseFailed, w.reconcile("upgrade-v2"))
			u := w.upgrade("upgrade-v2")
			assert.Contains(t, u.Status.Message, tc.message(w))
			assert.Equal(t, metav1.ConditionTrue, conditionStatus(u, v1.ConditionStalled))
			assert.Equal(t, metav1.ConditionFalse, conditionStatus(u, v1.ConditionReady))
			var ds appsv1.DeploymentList
			require.NoError(t, w.c.List(w.ctx, &ds, client.InNamespace(w.ns)))
			for _, d := range ds.Items {
				assert.Equal(t, int64(1), d.Generation, "deployment %s written", d.Name)
			}
		})
	}
}

// TestEnvtestImagesAlreadyCurrent: both Deployments already run the target
// images: the upgrade walks to Completed without writing anything.
func TestEnvtestImagesAlreadyCurrent(t *testing.T) {
	w := newEnvWorld(t)
	w.setUpRolledOut(1)
	w.createUpgrade("upgrade-v1", workerV1, apiV1, nil)
	w.reconcileUntil("upgrade-v1", v1.PhaseCompleted, 8)
	u := w.upgrade("upgrade-v1")
	assert.Equal(t, metav1.ConditionTrue, conditionStatus(u, v1.ConditionReady))
	assert.Equal(t, int64(1), w.deployment("job-worker").Generation, "worker not written")
	assert.Equal(t, int64(1), w.deployment("job-api").Generation, "API not written")
}

// TestEnvtestGraphUpgradeOfThreeComponents: a v1beta1 upgrade (db, then
// worker and api in one wave) through the real API server: both dependents
// are written in one pass, only after db rolled out; a v1alpha1 client
// reads the same object converted down (first and last component, the
// full graph kept in the conversion-data annotation).
func TestEnvtestGraphUpgradeOfThreeComponents(t *testing.T) {
	w := newEnvWorld(t)
	w.createDeployment("db", 1, "main", "db:v1")
	w.createDeployment("job-worker", 1, "worker", workerV1)
	w.createDeployment("job-api", 1, "api", apiV1)
	for _, d := range []string{"db", "job-worker", "job-api"} {
		w.rollOut(d, false)
	}
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "graph"},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "db", DeploymentRef: v1beta1.DeploymentReference{Name: "db"}, Image: "db:v2"},
			{Name: "worker", DeploymentRef: v1beta1.DeploymentReference{Name: "job-worker"}, Image: workerV2, DependsOn: []string{"db"}},
			{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "job-api", Namespace: w.ns}, Image: apiV2, ContainerName: "api", DependsOn: []string{"db"}},
		}}}
	require.NoError(t, w.c.Create(w.ctx, u))
	pass := func() *v1beta1.ApplicationUpgrade {
		t.Helper()
		_, _, err := w.r.reconcilePass(w.ctx, ctrl.Request{NamespacedName: w.key("graph")})
		require.NoError(t, err)
		var got v1beta1.ApplicationUpgrade
		require.NoError(t, w.c.Get(w.ctx, w.key("graph"), &got))
		return &got
	}
	for range 3 {
		pass()
	}
	require.Equal(t, "db:v2", imageOf(w.deployment("db"), "main"))
	require.Equal(t, workerV1, imageOf(w.deployment("job-worker"), "worker"), "worker waits for db")
	w.rollOut("db", false)
	pass() // db Rolled; worker and api Upgrading
	got := pass()
	require.Equal(t, workerV2, imageOf(w.deployment("job-worker"), "worker"))
	require.Equal(t, apiV2, imageOf(w.deployment("job-api"), "api"), "one wave, one pass")
	assert.Equal(t, int64(2), got.Status.Component("api").WrittenGeneration)
	w.rollOut("job-worker", false)
	w.rollOut("job-api", false)
	got = pass()
	assert.Equal(t, v1beta1.PhaseCompleted, got.Status.Phase)
	assert.Equal(t, "3/3", got.Status.RolledOut)

	old := w.upgrade("graph") // served as v1alpha1 by the conversion webhook
	assert.Equal(t, v1.PhaseCompleted, old.Status.Phase)
	assert.Equal(t, "db", old.Spec.Worker.DeploymentRef.Name)
	assert.Equal(t, "job-api", old.Spec.API.DeploymentRef.Name)
	assert.Contains(t, old.Annotations, v1.ConversionDataAnnotation)
}

// TestEnvtestKstatusInProgressBeforeFirstReconcile: the API server defaults
// status.observedGeneration to 0, so a just-created upgrade — read as a
// GitOps health check reads it, unstructured, at either version — is
// InProgress for kstatus until the operator's first status write, not
// Current; after that write it stays InProgress while rolling.
func TestEnvtestKstatusInProgressBeforeFirstReconcile(t *testing.T) {
	w := newEnvWorld(t)
	w.setUpRolledOut(1)
	w.createUpgrade("upgrade-v2", workerV2, apiV2, nil)
	for _, gv := range []string{"upgrades.lunadas.dev/v1alpha1", "upgrades.lunadas.dev/v1beta1"} {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(gv)
		obj.SetKind("ApplicationUpgrade")
		require.NoError(t, w.c.Get(w.ctx, w.key("upgrade-v2"), obj))
		og, found, err := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
		require.NoError(t, err)
		require.True(t, found, "%s: status.observedGeneration defaulted by the API server", gv)
		assert.Equal(t, int64(0), og, gv)
		res, err := status.Compute(obj)
		require.NoError(t, err)
		assert.Equal(t, status.InProgressStatus, res.Status, "%s before the first reconcile: %s", gv, res.Message)
	}
	w.reconcileUntil("upgrade-v2", v1.PhasePending, 1)
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("upgrades.lunadas.dev/v1beta1")
	obj.SetKind("ApplicationUpgrade")
	require.NoError(t, w.c.Get(w.ctx, w.key("upgrade-v2"), obj))
	res, err := status.Compute(obj)
	require.NoError(t, err)
	assert.Equal(t, status.InProgressStatus, res.Status, "after the first status write: %s", res.Message)
}

// timedOut is the Progressing condition the Deployment controller sets when
// ReplicaSet rs misses its deadline (progress.go syncRolloutStatus).
func timedOut(rs string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "` + rs + `" has timed out progressing.`}
}

// TestEnvtestStaleDeadlineAfterCorrectionCompletes plays, by hand, the
// window the real Deployment controller publishes when a spec goes back to
// an existing ReplicaSet after a deadline fired: the new generation
// observed, counters that did not move, and the old Progressing=False
// condition naming the failed ReplicaSet (k8s.io/kubernetes
// pkg/controller/deployment/progress.go syncRolloutStatus: no progress →
// DeploymentTimedOut keeps the condition). The upgrade must not fail on it,
// and completes.
func TestEnvtestStaleDeadlineAfterCorrectionCompletes(t *testing.T) {
	const bad = "registry.example.com/job-worker:does-not-exist"
	w := newEnvWorld(t)
	w.setUpRolledOut(1)
	w.createUpgrade("upgrade-v2", bad, apiV2, nil)
	w.reconcileUntil("upgrade-v2", v1.PhaseWaitingForWorkers, 3)
	badRS := w.newReplicaSet(w.deployment("job-worker"))
	badPod := w.createPods(badRS, 1)[0]
	w.setStatus("job-worker", func(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{timedOut(badRS.Name)}}
	})
	require.Equal(t, v1.PhaseFailed, w.reconcile("upgrade-v2"))

	u := w.upgrade("upgrade-v2")
	u.Spec.Worker.Image = workerV1 // back to the running image
	require.NoError(t, w.c.Update(w.ctx, u))
	w.reconcileUntil("upgrade-v2", v1.PhaseWaitingForWorkers, 3)
	require.Equal(t, workerV1, imageOf(w.deployment("job-worker"), "worker"))
	// The window: generation observed, the v1 ReplicaSet is the new one
	// again (1 updated), the bad pod still there, the old deadline kept.
	w.setStatus("job-worker", func(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{timedOut(badRS.Name)}}
	})
	for range 3 {
		assert.Equal(t, v1.PhaseWaitingForWorkers, w.reconcile("upgrade-v2"), "a deadline naming another ReplicaSet is not a failure")
	}
	var p corev1.Pod
	require.NoError(t, w.c.Get(w.ctx, w.key(badPod), &p))
	require.NoError(t, w.c.Delete(w.ctx, &p))
	w.rollOut("job-worker", false)
	w.reconcileUntil("upgrade-v2", v1.PhaseWaitingForAPI, 3)
	assert.Equal(t, apiV2, imageOf(w.deployment("job-api"), "api"))
	w.rollOut("job-api", false)
	assert.Equal(t, v1.PhaseCompleted, w.reconcile("upgrade-v2"))
}

// TestEnvtestFailedRolloutRecovers: a worker Failed at its progress
// deadline whose Deployment later rolls out completely at the target image
// leaves Failed (RolloutRecovered), and the API is then written.
func TestEnvtestFailedRolloutRecovers(t *testing.T) {
	w := newEnvWorld(t)
	w.setUpRolledOut(1)
	w.createUpgrade("upgrade-v2", workerV2, apiV2, nil)
	w.reconcileUntil("upgrade-v2", v1.PhaseWaitingForWorkers, 3)
	rs := w.newReplicaSet(w.deployment("job-worker"))
	w.setStatus("job-worker", func(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{timedOut(rs.Name)}}
	})
	require.Equal(t, v1.PhaseFailed, w.reconcile("upgrade-v2"))
	assert.Equal(t, v1.PhaseFailed, w.reconcile("upgrade-v2"), "still rolling: stays Failed")
	w.rollOut("job-worker", false)
	assert.Equal(t, v1.PhaseUpgradingAPI, w.reconcile("upgrade-v2"))
	u := w.upgrade("upgrade-v2")
	assert.Equal(t, metav1.ConditionFalse, conditionStatus(u, v1.ConditionStalled))
	assert.Equal(t, v1.PhaseWaitingForAPI, w.reconcile("upgrade-v2"))
	w.rollOut("job-api", false)
	assert.Equal(t, v1.PhaseCompleted, w.reconcile("upgrade-v2"))
}

// TestEnvtestDeploymentRefIsImmutable: the API server refuses a changed
// deploymentRef in both versions (CEL self == oldSelf), with the rule's
// message; other spec changes pass.
func TestEnvtestDeploymentRefIsImmutable(t *testing.T) {
	w := newEnvWorld(t)
	w.setUpRolledOut(1)
	w.createUpgrade("upgrade-v2", workerV2, apiV2, nil)

	alpha := w.upgrade("upgrade-v2")
	alpha.Spec.Worker.DeploymentRef.Name = "job-worker-2"
	err := w.c.Update(w.ctx, alpha)
	require.True(t, apierrors.IsInvalid(err), "v1alpha1: %v", err)
	assert.Contains(t, err.Error(), "deploymentRef is immutable")

	var beta v1beta1.ApplicationUpgrade
	require.NoError(t, w.c.Get(w.ctx, w.key("upgrade-v2"), &beta))
	beta.Spec.Components[1].DeploymentRef.Namespace = "elsewhere"
	err = w.c.Update(w.ctx, &beta)
	require.True(t, apierrors.IsInvalid(err), "v1beta1: %v", err)
	assert.Contains(t, err.Error(), "deploymentRef is immutable")

	require.NoError(t, w.c.Get(w.ctx, w.key("upgrade-v2"), &beta))
	beta.Spec.Components[0].Image = workerV1
	require.NoError(t, w.c.Update(w.ctx, &beta), "an image change is allowed")
}
