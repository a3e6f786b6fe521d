// Package poller is the baseline make bench compares the operator with:
// the ordered upgrade as Helm --wait, Argo CD sync waves and kapp change
// groups drive it. Write the worker image, poll the worker Deployment
// every Interval (2 s, Helm's and Argo's period) with the checks of
// `kubectl rollout status` until it reports done, then write the API image
// and poll the API the same way. Those checks read only the Deployment's
// status counters, which exclude terminating pods
// (shared/reference/rollout-semantics.md), so the poller writes the API
// image while old worker pods still run: the ordering violations it
// commits are part of what make bench reports.
package poller

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultInterval is the polling period of Helm's --wait and of Argo CD's
// gap between sync waves.
const DefaultInterval = 2 * time.Second

// Target is one image write: container Container of Deployment Name gets Image.
type Target struct {
	Name, Container, Image string
}

// Config is one ordered upgrade.
type Config struct {
	Client    client.Client
	Namespace string
	Worker    Target
	API       Target
	// Interval between polls; DefaultInterval when zero.
	Interval time.Duration
	// Timeout bounds each of the two waits; 10 minutes when zero.
	Timeout time.Duration
}

// Result holds the moments the poller acted or concluded, by its own clock.
type Result struct {
	Start         time.Time
	WorkerWritten time.Time
	// WorkerDone is when a poll first found the worker rolled out.
	WorkerDone time.Time
	APIWritten time.Time
	APIDone    time.Time
	// Polls counts Deployment reads.
	Polls int
}

// Run performs the upgrade. It stops at the first error, including a
// Deployment that exceeded its progress deadline.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Minute
	}
	res := Result{Start: time.Now()}
	steps := []struct {
		t               Target
		written, rolled *time.Time
	}{{cfg.Worker, &res.WorkerWritten, &res.WorkerDone}, {cfg.API, &res.APIWritten, &res.APIDone}}
	for _, s := range steps {
		if err := SetImage(ctx, cfg.Client, cfg.Namespace, s.t); err != nil {
			return res, err
		}
		*s.written = time.Now()
		err := wait.PollUntilContextTimeout(ctx, cfg.Interval, cfg.Timeout, true, func(ctx context.Context) (bool, error) {
			var d appsv1.Deployment
			res.Polls++
			if err := cfg.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: s.t.Name}, &d); err != nil {
				return false, nil // transient: poll again, as Helm does
			}
			done, _, err := RolloutStatus(&d)
			return done, err
		})
		if err != nil {
			return res, fmt.Errorf("wait for deployment %s/%s: %w", cfg.Namespace, s.t.Name, err)
		}
		*s.rolled = time.Now()
	}
	return res, nil
}

// SetImage sets one container's image with a merge patch, as `kubectl set
// image` (or a re-applied manifest) would.
func SetImage(ctx context.Context, c client.Client, namespace string, t Target) error {
	var d appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: t.Name}, &d); err != nil {
		return fmt.Errorf("get deployment %s/%s: %w", namespace, t.Name, err)
	}
	patched := d.DeepCopy()
	found := false
	for i := range patched.Spec.Template.Spec.Containers {
		if patched.Spec.Template.Spec.Containers[i].Name == t.Container {
			patched.Spec.Template.Spec.Containers[i].Image = t.Image
			found = true
		}
	}
	if !found {
		return fmt.Errorf("deployment %s/%s has no container %q", namespace, t.Name, t.Container)
	}
	if err := c.Patch(ctx, patched, client.MergeFrom(&d)); err != nil {
		return fmt.Errorf("set image of deployment %s/%s: %w", namespace, t.Name, err)
	}
	return nil
}

// RolloutStatus is the decision of `kubectl rollout status` for a
// Deployment, in its order: the spec not yet observed, the progress
// deadline exceeded (an error), too few updated replicas, old replicas
// pending termination (counted in status.replicas, which excludes
// terminating pods), too few available. msg says what it waits for.
func RolloutStatus(d *appsv1.Deployment) (done bool, msg string, err error) {
	st := d.Status
	if d.Generation > st.ObservedGeneration {
		return false, "waiting for the deployment spec update to be observed", nil
	}
	for _, c := range st.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return false, "", fmt.Errorf("deployment %s/%s exceeded its progress deadline", d.Namespace, d.Name)
		}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	switch {
	case st.UpdatedReplicas < want:
		return false, fmt.Sprintf("%d out of %d new replicas have been updated", st.UpdatedReplicas, want), nil
	case st.Replicas > st.UpdatedReplicas:
		return false, fmt.Sprintf("%d old replicas are pending termination", st.Replicas-st.UpdatedReplicas), nil
	case st.AvailableReplicas < st.UpdatedReplicas:
		return false, fmt.Sprintf("%d of %d updated replicas are available", st.AvailableReplicas, st.UpdatedReplicas), nil
	}
	return true, "successfully rolled out", nil
}
