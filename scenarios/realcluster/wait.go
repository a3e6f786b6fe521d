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
	"github.com/lunadas/upgrade-operator/scenarios/transcript"
)

// recorderTee feeds one watch stream to the event log and the transcript.
type recorderTee struct {
	rec *eventlog.Recorder
	tr  *transcript.Transcript
}

// Observe implements Sink.
func (t recorderTee) Observe(typ watch.EventType, obj client.Object, at time.Time) {
	t.rec.Observe(typ, obj, at)
	t.tr.Observe(typ, obj, at)
}

// WaitRolledOut waits until every Deployment in namespace is fully rolled
// out by the product's own definition (rollout.Assess).
func WaitRolledOut(ctx context.Context, c client.Reader, namespace string, timeout time.Duration) error {
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		done, why, err := RolledOut(ctx, c, namespace, false)
		if err != nil { // the API may be busy: try again until the timeout
			last = err.Error()
			return false, nil
		}
		last = why
		return done, nil
	})
	if err != nil {
		return fmt.Errorf("deployments in %s not rolled out within %s (%s): %w", namespace, timeout, last, err)
	}
	return nil
}

// RolledOut reports whether namespace has Deployments and every one is
// rolled out by rollout.Assess — or has failed, when failedCounts (a user
// applies an upgrade to a broken app too). why names the first that is
// not. Any client works: a real cluster's or the simulator's.
func RolledOut(ctx context.Context, c client.Reader, namespace string, failedCounts bool) (done bool, why string, err error) {
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
	}
	return len(ds.Items) > 0, "no deployments", nil
}
