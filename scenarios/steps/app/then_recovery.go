package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// registerRecovery binds the steps of the stale-deadline window and of a
// rollout failure's recovery (issue 16).
func (s *scenario) registerRecovery(sc *godog.ScenarioContext) {
	sc.Step(`^the worker's progress deadline has passed$`, s.deadlinePassed)
	sc.Step(`^the upgrade "([^"]+)" is changed back to the worker's running image$`, func(ctx context.Context, name string) error {
		return s.change(ctx, name, fmt.Sprintf("the worker image %q", imageOf(s.role(roleWorker).name, CurrentTag)))
	})
	sc.Step(`^the worker Deployment was seen at its new generation with the previous ReplicaSet's progress deadline$`, s.staleDeadlineSeen)
	sc.Step(`^changing the upgrade "([^"]+)" to (.+) is refused with a message containing "([^"]+)"$`, s.changeRefused)
	sc.Step(`^the upgrade "([^"]+)" is deleted and "([^"]+)" is applied with (.+)$`, s.replaceUpgrade)
}

// changeRefused: the spec change is refused by the API server (the CRD's
// CEL rules, or admission) with a message containing text, and the
// stored spec is unchanged.
func (s *scenario) changeRefused(ctx context.Context, name, clauses, text string) error {
	u := s.upgrades[name]
	if u == nil {
		return fmt.Errorf("no upgrade %q was applied in this scenario", name)
	}
	saved := *u
	err := s.change(ctx, name, clauses)
	*u = saved
	switch {
	case err == nil:
		return fmt.Errorf("changing upgrade %s to %s was accepted", name, clauses)
	case !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err):
		return fmt.Errorf("changing upgrade %s: want a refusal (422 or 403), got %w", name, err)
	case !strings.Contains(err.Error(), text):
		return fmt.Errorf("changing upgrade %s was refused with %q, which does not contain %q", name, err.Error(), text)
	}
	return nil
}

// replaceUpgrade deletes upgrade old, waits until it is gone, and applies
// a new upgrade with clauses.
func (s *scenario) replaceUpgrade(ctx context.Context, old, name, clauses string) error {
	key := types.NamespacedName{Namespace: s.cl.Namespace(), Name: old}
	obj := &upgradesv1beta1.ApplicationUpgrade{}
	obj.Namespace, obj.Name = key.Namespace, key.Name
	if err := s.cl.Client().Delete(ctx, obj); err != nil {
		return fmt.Errorf("delete applicationupgrade %s: %w", key, err)
	}
	if err := s.cl.Eventually(ctx, "upgrade "+old+" deleted", time.Minute, func(ctx context.Context) (bool, error) {
		err := s.cl.Client().Get(ctx, key, &upgradesv1beta1.ApplicationUpgrade{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}); err != nil {
		return err
	}
	return s.apply(ctx, name, clauses)
}

// deadlinePassed waits until the worker Deployment carries
// Progressing=False/ProgressDeadlineExceeded.
func (s *scenario) deadlinePassed(ctx context.Context) error {
	key := types.NamespacedName{Namespace: s.cl.Namespace(), Name: s.role(roleWorker).name}
	return s.cl.Eventually(ctx, "the worker's progress deadline exceeded", 2*time.Minute, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := s.cl.Client().Get(ctx, key, &d); err != nil {
			return false, err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
				return true, nil
			}
		}
		return false, nil
	})
}

// staleDeadlineSeen: the history holds a status of the worker Deployment
// whose observedGeneration is a generation later than the one its
// progress deadline was first reported at, still carrying that deadline
// (the window k8s.io/kubernetes pkg/controller/deployment/progress.go
// syncRolloutStatus publishes when a spec goes back to an existing
// ReplicaSet and no progress is counted).
func (s *scenario) staleDeadlineSeen() error {
	worker := s.role(roleWorker).name
	first := int64(0)
	for _, f := range s.cl.History().Facts {
		c := f.Status
		if f.Event.Event != eventlog.DeploymentStatus || f.Name != worker || c == nil || c.DeadlineExceeded == "" {
			continue
		}
		if first == 0 {
			first = c.ObservedGeneration
			continue
		}
		if c.ObservedGeneration > first && c.ObservedGeneration == c.Generation {
			return nil
		}
	}
	if first == 0 {
		return fmt.Errorf("deployment %s never reported ProgressDeadlineExceeded", worker)
	}
	return fmt.Errorf("deployment %s reported ProgressDeadlineExceeded at generation %d but never at a later observed generation", worker, first)
}
