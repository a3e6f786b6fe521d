package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// matches reports whether counters show a generation observed and the given counts.
func matches(c eventlog.Counters, replicas, updated, available int) bool {
	return c.ObservedGeneration >= c.Generation && c.Replicas == int32(replicas) && c.Updated == int32(updated) && c.Available == int32(available)
}

func (s *scenario) countersWindow(replicas, updated, available, seconds int) error {
	worker := s.role(roleWorker).name
	longest, since := 0.0, -1.0
	replay(s.cl.History().Facts, func(m *moment) {
		c, ok := m.Counters[worker]
		open := ok && matches(c, replicas, updated, available) && m.oldPods(worker) > 0
		switch {
		case open && since < 0:
			since = m.Event.T
		case !open && since >= 0:
			longest = max(longest, m.Event.T-since)
			since = -1
		}
	})
	if since >= 0 { // still open when the recording ends
		longest = max(longest, s.cl.Elapsed().Seconds()-since)
	}
	if longest < float64(seconds) {
		return fmt.Errorf("the worker's counters said %d/%d/%d while an old pod existed for at most %.3fs, not %ds", replicas, updated, available, longest, seconds)
	}
	return nil
}

func (s *scenario) staleCompleteSeen() error {
	worker := s.role(roleWorker).name
	for _, f := range s.cl.History().Facts {
		c := f.Status
		if f.Event.Event == eventlog.DeploymentStatus && f.Name == worker && c.ObservedGeneration < c.Generation &&
			c.Replicas == c.Spec && c.Updated == c.Spec && c.Available == c.Spec {
			return nil
		}
	}
	return fmt.Errorf("deployment %s was never seen with its generation ahead of observedGeneration and complete counters", worker)
}

func (s *scenario) staleRead() error {
	worker := s.role(roleWorker).name
	for _, op := range s.cl.History().Ops {
		if op.Kind == "Deployment" && op.Verb == "get" && op.Name == worker && op.Status != nil && op.Status.ObservedGeneration < op.Status.Generation {
			return nil
		}
	}
	return fmt.Errorf("the operator never read deployment %s before the Deployment controller observed it", worker)
}

var phaseOrder = []upgradesv1alpha1.Phase{upgradesv1alpha1.PhasePending, upgradesv1alpha1.PhaseUpgradingWorkers,
	upgradesv1alpha1.PhaseWaitingForWorkers, upgradesv1alpha1.PhaseUpgradingAPI, upgradesv1alpha1.PhaseWaitingForAPI, upgradesv1alpha1.PhaseCompleted}

func rank(p string) int { return slices.Index(phaseOrder, upgradesv1alpha1.Phase(p)) }

func (s *scenario) neverPastWhileStale(limit string) error {
	worker := s.role(roleWorker).name
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	var errs []string
	replay(s.cl.History().Facts, func(m *moment) {
		c, ok := m.Counters[worker]
		if ok && c.ObservedGeneration < c.Generation && rank(m.Phases[name]) > rank(limit) {
			errs = append(errs, fmt.Sprintf("t=%.3fs: %s while %s is at generation %d, observed %d", m.Event.T, m.Phases[name], worker, c.Generation, c.ObservedGeneration))
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// duringUpgrade calls fn at each moment after the worker's template changed.
func (s *scenario) duringUpgrade(fn func(m *moment)) {
	worker := s.role(roleWorker).name
	replay(s.cl.History().Facts, func(m *moment) {
		if m.Writes[worker] > 1 {
			fn(m)
		}
	})
}

func (s *scenario) statusShowed(replicas, updated, available int) error {
	worker := s.role(roleWorker).name
	found := false
	s.duringUpgrade(func(m *moment) {
		if c, ok := m.Counters[worker]; ok && m.Event.Event == eventlog.DeploymentStatus && m.Event.Name == worker && matches(c, replicas, updated, available) {
			found = true
		}
	})
	if !found {
		return fmt.Errorf("deployment %s never showed %d replicas, %d updated, %d available during the upgrade", worker, replicas, updated, available)
	}
	return nil
}

func (s *scenario) whileStatus(replicas, updated, available int, phase string) error {
	worker, api := s.role(roleWorker).name, s.role(roleAPI).name
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	var apiImages []string
	replay(s.cl.History().Facts, func(m *moment) {
		if apiImages == nil && m.Images[api] != nil {
			apiImages = m.Images[api]
		}
	})
	var errs []string
	s.duringUpgrade(func(m *moment) {
		c, ok := m.Counters[worker]
		if !ok || !matches(c, replicas, updated, available) {
			return
		}
		if m.Phases[name] != phase {
			errs = append(errs, fmt.Sprintf("t=%.3fs: phase %s", m.Event.T, m.Phases[name]))
		}
		if !slices.Equal(m.Images[api], apiImages) {
			errs = append(errs, fmt.Sprintf("t=%.3fs: API image %s", m.Event.T, strings.Join(m.Images[api], ",")))
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("while %s showed %d/%d/%d: %s", worker, replicas, updated, available, strings.Join(errs, "; "))
	}
	return nil
}

func (s *scenario) recreateOrder() error {
	worker := s.role(roleWorker).name
	var errs []string
	created := 0
	s.duringUpgrade(func(m *moment) {
		e := m.Event
		if e.Event == eventlog.PodCreated && e.Deployment == worker {
			created++
			if m.oldPods(worker) > 0 {
				errs = append(errs, fmt.Sprintf("t=%.3fs: pod %s created while %d old pods existed", e.T, e.Name, m.oldPods(worker)))
			}
		}
	})
	if created == 0 {
		return fmt.Errorf("no new worker pod was created")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func (s *scenario) failedBeforeDeadline(ctx context.Context) error {
	w := s.role(roleWorker)
	if w.progressSeconds == nil {
		return fmt.Errorf("the worker Deployment declares no progress deadline")
	}
	u, err := s.current(ctx, "")
	if err != nil {
		return err
	}
	if strings.Contains(u.Status.Message, "ProgressDeadlineExceeded") || strings.Contains(u.Status.Message, "progress deadline") {
		return fmt.Errorf("failed by the progress deadline, not from the pods: %s", u.Status.Message)
	}
	failed := -1.0
	for _, e := range s.phaseFacts(u.Name) {
		if e.Phase == string(upgradesv1alpha1.PhaseFailed) {
			failed = e.T
			break
		}
	}
	start := firstRewriteAt(s.cl.History().Facts, w.name)
	if start < 0 { // the worker was at the target already: count from the upgrade's first phase
		start = s.phaseFacts(u.Name)[0].T
	}
	if failed < 0 || failed-start >= float64(*w.progressSeconds) {
		return fmt.Errorf("Failed at %.3fs, %.3fs after the rollout started; the deadline is %ds", failed, failed-start, *w.progressSeconds)
	}
	return nil
}
