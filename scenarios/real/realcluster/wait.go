package realcluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/rollout"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/render/console"
)

// recorderTee feeds one watch stream to the event log and the transcript.
type recorderTee struct {
	rec *eventlog.Recorder
	tr  *console.Console
}

// Observe implements Sink.
func (t recorderTee) Observe(typ watch.EventType, obj client.Object, at time.Time) {
	t.rec.Observe(typ, obj, at)
	t.tr.Observe(typ, obj, at)
}

// WaitRolledOut waits until every Deployment in namespace is fully rolled
// out by the product's own definition (rollout.Assess).
func WaitRolledOut(ctx context.Context, c client.Reader, namespace string, timeout time.Duration) error {
	last, err := poll(ctx, 100*time.Millisecond, timeout, func(ctx context.Context) (bool, string, error) {
		return RolledOut(ctx, c, namespace, false)
	})
	if err != nil {
		return fmt.Errorf("deployments in %s not rolled out within %s (%s): %w", namespace, timeout, last, err)
	}
	return nil
}

// WaitCountersComplete waits until every Deployment in namespace publishes
// its rollout complete in its own status (CountersComplete), polling every
// 50 ms; the error names the last Deployment that was not.
func WaitCountersComplete(ctx context.Context, c client.Reader, namespace string, timeout time.Duration) error {
	last, err := poll(ctx, 50*time.Millisecond, timeout, func(ctx context.Context) (bool, string, error) {
		return CountersComplete(ctx, c, namespace)
	})
	if err != nil {
		return fmt.Errorf("deployments in %s: status counters not complete within %s (%s): %w", namespace, timeout, last, err)
	}
	return nil
}

// poll calls check every interval until it says done or timeout passes,
// and returns the last reason it gave (or its last error's text: the API
// may be busy, so an error is retried until the timeout).
func poll(ctx context.Context, interval, timeout time.Duration, check func(context.Context) (bool, string, error)) (string, error) {
	last := ""
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		done, why, err := check(ctx)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = why
		return done, nil
	})
	return last, err
}

// CountersComplete reports whether every Deployment in namespace says in
// its own status that its rollout is complete, as `kubectl rollout status`
// reads it: the generation observed, and replicas, updatedReplicas and
// availableReplicas at spec.replicas. RolledOut (rollout.Assess) may say
// rolled out from the pod list while the Deployment controller's counters
// still lag; a case that needs the counters complete before it starts
// (C03's stale-status window: the worker written while its counters still
// describe the finished previous rollout) waits for this too. why names
// the first Deployment that is not.
func CountersComplete(ctx context.Context, c client.Reader, namespace string) (done bool, why string, err error) {
	var ds appsv1.DeploymentList
	if err := c.List(ctx, &ds, client.InNamespace(namespace)); err != nil {
		return false, "", err
	}
	for i := range ds.Items {
		if why := countersIncomplete(&ds.Items[i]); why != "" {
			return false, why, nil
		}
	}
	return true, "", nil
}

// countersIncomplete is why d's own status does not say its rollout is
// complete (CountersComplete's rule), "" when it does.
func countersIncomplete(d *appsv1.Deployment) string {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.Replicas != want || st.UpdatedReplicas != want || st.AvailableReplicas != want {
		return fmt.Sprintf("deployment %s: generation %d observed %d, replicas %d updated %d available %d of %d",
			d.Name, d.Generation, st.ObservedGeneration, st.Replicas, st.UpdatedReplicas, st.AvailableReplicas, want)
	}
	return ""
}

// RolledOut reports whether namespace has workloads and every one is
// rolled out by rollout.Assess (StatefulSets and DaemonSets by
// rollout.AssessStatefulSet and AssessDaemonSet) — or has failed, when failedCounts (a user
// applies an upgrade to a broken app too). why names the first that is
// not. Any client works: a real cluster's or the simulator's.
func RolledOut(ctx context.Context, c client.Reader, namespace string, failedCounts bool) (done bool, why string, err error) {
	return rolledOut(ctx, c, namespace, failedCounts, false)
}

// RolledOutAndPublished is RolledOut, and every Deployment that
// rollout.Assess calls rolled out also says so in its own status
// (CountersComplete's rule; a failed one is not waited for). The pod-list
// rule can call a Deployment rolled out while kube-controller-manager's
// Deployment controller has not yet published the last pods' availability
// (a loaded local control plane: 0.3–0.9 s after the last pod's readiness);
// an upgrade applied then, whose first write follows at once, lands before
// that publication, and the Deployment's status never shows the initial
// rollout complete. The simulator's Deployment model publishes it at the
// instant of the readiness, so a scenario starting from "rolled out" on
// the pod list alone starts from two different states on the two
// backends; waiting for the counters too makes it one.
func RolledOutAndPublished(ctx context.Context, c client.Reader, namespace string, failedCounts bool) (done bool, why string, err error) {
	return rolledOut(ctx, c, namespace, failedCounts, true)
}

// rolledOut is RolledOut; published: RolledOutAndPublished.
func rolledOut(ctx context.Context, c client.Reader, namespace string, failedCounts, published bool) (done bool, why string, err error) {
	var ds appsv1.DeploymentList
	if err := c.List(ctx, &ds, client.InNamespace(namespace)); err != nil {
		return false, "", err
	}
	for i := range ds.Items {
		d := &ds.Items[i]
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			return false, "", err
		}
		var rss appsv1.ReplicaSetList
		var pods corev1.PodList
		if err := c.List(ctx, &rss, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return false, "", err
		}
		if err := c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return false, "", err
		}
		v := rollout.Assess(d, rss.Items, pods.Items, rollout.Options{})
		if v.State == rollout.Progressing || (v.State == rollout.Failed && !failedCounts) {
			return false, d.Name + ": " + v.String(), nil
		}
		if published && v.State == rollout.Rolled {
			if why := countersIncomplete(d); why != "" {
				return false, why + " (rolled out by the pod list, not yet in its status)", nil
			}
		}
	}
	n, why, err := otherWorkloadsRolledOut(ctx, c, namespace, failedCounts)
	if err != nil || why != "" {
		return false, why, err
	}
	return len(ds.Items)+n > 0, "no workloads", nil
}

// otherWorkloadsRolledOut is RolledOut for the StatefulSets
// (rollout.AssessStatefulSet) and DaemonSets (rollout.AssessDaemonSet,
// with their ControllerRevisions) of namespace: how many there are, and
// why the first not rolled out is not ("" when all are).
func otherWorkloadsRolledOut(ctx context.Context, c client.Reader, namespace string, failedCounts bool) (int, string, error) {
	var stss appsv1.StatefulSetList
	var dss appsv1.DaemonSetList
	if err := c.List(ctx, &stss, client.InNamespace(namespace)); err != nil {
		return 0, "", err
	}
	if err := c.List(ctx, &dss, client.InNamespace(namespace)); err != nil {
		return 0, "", err
	}
	var revs appsv1.ControllerRevisionList
	if len(dss.Items) > 0 {
		if err := c.List(ctx, &revs, client.InNamespace(namespace)); err != nil {
			return 0, "", err
		}
	}
	podsOf := func(sel *metav1.LabelSelector) ([]corev1.Pod, error) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, err
		}
		var pods corev1.PodList
		err = c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: s})
		return pods.Items, err
	}
	bad := func(name string, v rollout.Verdict) string {
		if v.State == rollout.Progressing || (v.State == rollout.Failed && !failedCounts) {
			return name + ": " + v.String()
		}
		return ""
	}
	for i := range stss.Items {
		sts := &stss.Items[i]
		pods, err := podsOf(sts.Spec.Selector)
		if err != nil {
			return 0, "", err
		}
		if why := bad("statefulset "+sts.Name, rollout.AssessStatefulSet(sts, pods, rollout.Options{})); why != "" {
			return 0, why, nil
		}
	}
	for i := range dss.Items {
		ds := &dss.Items[i]
		pods, err := podsOf(ds.Spec.Selector)
		if err != nil {
			return 0, "", err
		}
		if why := bad("daemonset "+ds.Name, rollout.AssessDaemonSet(ds, revs.Items, pods, rollout.Options{})); why != "" {
			return 0, why, nil
		}
	}
	return len(stss.Items) + len(dss.Items), "", nil
}
