package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// node is a component "name" on Deployment "d-name" (container "main",
// image name:v1, target name:v2) depending on deps.
func node(name string, deps ...string) v1beta1.Component {
	return v1beta1.Component{Name: name, DeploymentRef: v1beta1.DeploymentReference{Name: "d-" + name},
		Image: name + ":v2", ContainerName: "main", DependsOn: deps}
}

// graphWorld is a world holding upgrade "g" of cs, every Deployment at v1
// and fully rolled out.
func graphWorld(t *testing.T, cs ...v1beta1.Component) *world {
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: "uid-g", Generation: 1,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: cs}}
	objs := []client.Object{u}
	for _, c := range cs {
		objs = append(objs, deployment(c.DeploymentRef.Name, "main", c.Name+":v1"))
	}
	w := newWorld(t, objs...)
	for _, c := range cs {
		w.rollOut(c.DeploymentRef.Name, "")
	}
	return w
}

// drive reconciles "g" until it is terminal (at most 60 passes), playing
// the Deployment controller after each pass: every written Deployment
// whose name is not in failing rolls out completely; a failing one reports
// ProgressDeadlineExceeded. It fails the test if a component is written
// while a dependency is not Rolled in the status before that pass, and
// returns, per component, the pass of its write (-1: never written).
func (w *world) drive(failing ...string) map[string]int {
	w.t.Helper()
	u := w.beta("g")
	writtenAt := map[string]int{}
	for _, c := range u.Spec.Components {
		writtenAt[c.Name] = -1
	}
	for pass := 0; pass < 60; pass++ {
		before := w.beta("g")
		after := w.pass("g")
		for _, c := range u.Spec.Components {
			var d appsv1.Deployment
			require.NoError(w.t, w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.DeploymentRef.Name}, &d))
			if d.Spec.Template.Spec.Containers[0].Image != c.Image || writtenAt[c.Name] >= 0 {
				continue
			}
			writtenAt[c.Name] = pass
			for _, dep := range c.DependsOn {
				require.Equalf(w.t, v1beta1.ComponentRolled, before.Status.Component(dep).Phase,
					"pass %d: %s written while dependency %s was %s", pass, c.Name, dep, before.Status.Component(dep).Phase)
			}
			if contains(failing, c.Name) {
				w.failRollout(c.DeploymentRef.Name)
			} else {
				w.rollOut(c.DeploymentRef.Name, "")
			}
		}
		if after.Status.Phase.Terminal() {
			return writtenAt
		}
	}
	w.t.Fatalf("upgrade g not terminal after 60 passes: %s", w.beta("g").Status.Message)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// failRollout plays a Deployment controller giving up: generation
// observed, Progressing=False with ProgressDeadlineExceeded.
func (w *world) failRollout(name string) {
	w.t.Helper()
	d, _ := w.get(name)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 0, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: rollout.ReasonProgressDeadlineExceed, Message: "ReplicaSet has timed out progressing"}}}
	require.NoError(w.t, w.c.Status().Update(context.Background(), d))
}

func componentPhases(u *v1beta1.ApplicationUpgrade) map[string]v1beta1.ComponentPhase {
	out := map[string]v1beta1.ComponentPhase{}
	for _, c := range u.Status.Components {
		out[c.Name] = c.Phase
	}
	return out
}

func TestReconcileChainOfFourCompletesInOrder(t *testing.T) {
	w := graphWorld(t, node("db"), node("cache", "db"), node("worker", "cache"), node("api", "worker"))
	at := w.drive()
	assert.Less(t, at["db"], at["cache"])
	assert.Less(t, at["cache"], at["worker"])
	assert.Less(t, at["worker"], at["api"])
	u := w.beta("g")
	assert.Equal(t, v1beta1.PhaseCompleted, u.Status.Phase)
	assert.Equal(t, "4/4", u.Status.RolledOut)
	for i, c := range u.Status.Components {
		assert.Equal(t, int32(i), c.Wave, c.Name)
		assert.Equal(t, c.Name+":v2", c.ShortImage, c.Name)
		assert.NotZero(t, c.WrittenGeneration, c.Name) // the fake client does not bump generation
	}
	assert.Equal(t, metav1.ConditionTrue, findCondition(u.Status.Conditions, v1beta1.ConditionReady).Status)
	reasons := eventReasons(w.rec)
	assert.Equal(t, 4, count(reasons, "ImageWritten"))
	assert.Equal(t, 4, count(reasons, "RolledOut"))
	assert.Equal(t, "Completed", reasons[len(reasons)-1])
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func TestReconcileDiamondWritesTheMiddleWaveTogether(t *testing.T) {
	w := graphWorld(t, node("api", "worker", "indexer"), node("worker", "db"), node("indexer", "db"), node("db"))
	at := w.drive()
	assert.Equal(t, at["worker"], at["indexer"], "one wave, one pass")
	assert.Less(t, at["db"], at["worker"])
	assert.Less(t, at["indexer"], at["api"])
	u := w.beta("g")
	assert.Equal(t, v1beta1.PhaseCompleted, u.Status.Phase)
	assert.Equal(t, []string{"api", "worker", "indexer", "db"}, names(u.Status.Components), "status in spec order")
	assert.Equal(t, map[string]int32{"api": 2, "worker": 1, "indexer": 1, "db": 0}, waves(u.Status.Components))
}

func names(cs []v1beta1.ComponentStatus) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func waves(cs []v1beta1.ComponentStatus) map[string]int32 {
	out := map[string]int32{}
	for _, c := range cs {
		out[c.Name] = c.Wave
	}
	return out
}

func TestReconcileTenWideWaveWritesEveryComponentInOnePass(t *testing.T) {
	var cs []v1beta1.Component
	for i := range 10 {
		cs = append(cs, node(fmt.Sprintf("c%d", i)))
	}
	w := graphWorld(t, cs...)
	at := w.drive()
	for i := range 10 {
		assert.Equal(t, at["c0"], at[fmt.Sprintf("c%d", i)])
	}
	assert.Equal(t, v1beta1.PhaseCompleted, w.beta("g").Status.Phase)
	assert.Equal(t, "10/10", w.beta("g").Status.RolledOut)
}

// A failed component blocks its dependents only; the rest completes, then
// the upgrade is Failed with a Warning event naming the component.
func TestReconcileFailedBranchBlocksOnlyItsDependents(t *testing.T) {
	w := graphWorld(t, node("db"), node("worker", "db"), node("indexer", "db"), node("api", "worker", "indexer"), node("mail"))
	at := w.drive("indexer")
	u := w.beta("g")
	assert.Equal(t, v1beta1.PhaseFailed, u.Status.Phase)
	assert.Equal(t, map[string]v1beta1.ComponentPhase{"db": "Rolled", "worker": "Rolled", "indexer": "Failed", "api": "Blocked", "mail": "Rolled"},
		componentPhases(u))
	assert.Equal(t, -1, at["api"], "a blocked component is never written")
	assert.Equal(t, "3/5", u.Status.RolledOut)
	assert.Contains(t, u.Status.Message, "indexer")
	stalled := findCondition(u.Status.Conditions, v1beta1.ConditionStalled)
	assert.Equal(t, metav1.ConditionTrue, stalled.Status)
	assert.Equal(t, "RolloutFailed", stalled.Reason)
	reasons := eventReasons(w.rec)
	assert.Equal(t, "Failed", reasons[len(reasons)-1])
}

// The overlap guard: an older unfinished upgrade of a Deployment in
// another namespace holds a newer one, which writes nothing and says it is
// held without naming the other namespace's upgrade.
func TestReconcileHoldsAnOverlapAcrossNamespaces(t *testing.T) {
	older := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "shared-db", UID: "uid-old", Generation: 1,
		CreationTimestamp: metav1.NewTime(time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC))},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{{Name: "db", Image: "db:v3", ContainerName: "main",
			DeploymentRef: v1beta1.DeploymentReference{Name: "d-db", Namespace: ns}}}}}
	w := graphWorld(t, node("db"), node("api", "db"))
	require.NoError(t, w.c.Create(context.Background(), older))
	w.pass("g")
	u := w.pass("g")
	assert.Equal(t, v1beta1.PhasePending, u.Status.Phase)
	assert.Contains(t, u.Status.Message, "deployment "+ns+"/d-db is being upgraded by an ApplicationUpgrade of another namespace")
	assert.NotContains(t, u.Status.Message, "shared-db", "another namespace's upgrade is not named in this one's status")
	d, _ := w.get("d-db")
	assert.Equal(t, "db:v1", d.Spec.Template.Spec.Containers[0].Image)

	reqs := Mapper{Reader: w.c}.Deployment(context.Background(), d)
	assert.ElementsMatch(t, []string{"platform/shared-db", ns + "/g"}, requestKeys(reqs), "both upgrades of d-db, across namespaces")
	older.Status.Phase = v1beta1.PhaseCompleted
	require.NoError(t, w.c.Status().Update(context.Background(), older))
	assert.Equal(t, []string{ns + "/g"}, requestKeys(Mapper{Reader: w.c}.Upgrade(context.Background(), older)), "the holder wakes the held")
	assert.Equal(t, v1beta1.PhaseProgressing, w.pass("g").Status.Phase, "released")
}

func requestKeys(reqs []ctrlRequest) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Namespace+"/"+r.Name)
	}
	return out
}

// A failed image write stops the writes of the pass, records the ones that
// succeeded (phase RollingOut, writtenGeneration) and returns the error;
// the failed component stays Upgrading and is written on a later pass.
func TestReconcileRecordsSucceededWritesWhenOneFails(t *testing.T) {
	w := graphWorld(t, node("a"), node("b"), node("c"))
	w.pass("g")
	before := w.pass("g").Status.Component("b").Message // every component Upgrading
	inner := w.c
	w.r.Client = interceptor.NewClient(inner.(client.WithWatch), interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if d, ok := obj.(*appsv1ac.DeploymentApplyConfiguration); ok && *d.Name == "d-b" {
				return errors.New("injected: the API server is unavailable")
			}
			return c.Apply(ctx, obj, opts...)
		},
	})
	_, err := w.r.Reconcile(context.Background(), ctrlRequest{NamespacedName: client.ObjectKey{Namespace: ns, Name: "g"}})
	require.ErrorContains(t, err, "deployment job-system/d-b")
	u := w.beta("g")
	assert.Equal(t, map[string]v1beta1.ComponentPhase{"a": "RollingOut", "b": "Upgrading", "c": "Upgrading"}, componentPhases(u))
	assert.NotZero(t, u.Status.Component("a").WrittenGeneration)
	assert.Zero(t, u.Status.Component("b").WrittenGeneration)
	assert.Equal(t, before, u.Status.Component("b").Message, "the failed write is not recorded: only successes change status")
	w.r.Client = inner
	u = w.pass("g")
	assert.Equal(t, map[string]v1beta1.ComponentPhase{"a": "RollingOut", "b": "RollingOut", "c": "RollingOut"}, componentPhases(u))
}

// When every write of a pass fails, status is not patched at all: a patch
// would wake the upgrade at once through its own watch event and defeat the
// workqueue's exponential back-off (found by C08 on the simulator).
func TestReconcileLeavesStatusAloneWhenNoWriteSucceeds(t *testing.T) {
	w := graphWorld(t, node("a"))
	w.pass("g")
	rv := w.pass("g").ResourceVersion // a Upgrading
	inner := w.c
	w.r.Client = interceptor.NewClient(inner.(client.WithWatch), interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if d, ok := obj.(*appsv1ac.DeploymentApplyConfiguration); ok && *d.Name == "d-a" {
				return errors.New("injected: conflict")
			}
			return c.Apply(ctx, obj, opts...)
		},
	})
	_, err := w.r.Reconcile(context.Background(), ctrlRequest{NamespacedName: client.ObjectKey{Namespace: ns, Name: "g"}})
	require.ErrorContains(t, err, "injected: conflict")
	assert.Equal(t, rv, w.beta("g").ResourceVersion, "status untouched")
}

type ctrlRequest = reconcile.Request

// A graph's configuration errors name the component's field path.
func TestReconcileGraphConfigErrorNamesTheComponent(t *testing.T) {
	bad := node("api", "db")
	bad.ContainerName = "nope"
	w := graphWorld(t, node("db"), bad)
	w.pass("g")
	u := w.pass("g")
	assert.Equal(t, v1beta1.PhaseFailed, u.Status.Phase)
	assert.Contains(t, u.Status.Message, `api: deployment job-system/d-api has no container "nope" (containers: main): fix spec.components[api].containerName`)
	assert.Equal(t, "ConfigurationError", findCondition(u.Status.Conditions, v1beta1.ConditionStalled).Reason)
}
