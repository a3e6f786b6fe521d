package app

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// ordering is judge.Ordering of the worker and API Deployments.
func (s *scenario) ordering() judge.Report {
	return judge.Ordering(s.cl.History().Events(), judge.Pair{Namespace: s.cl.Namespace(), Worker: s.role(roleWorker).name, API: s.role(roleAPI).name})
}

// neverEarly is the step "the API is neither written nor claimed while an
// old worker pod exists": no write of the API image while an old worker
// pod existed (judge.Ordering over the event log), at least one API write,
// and no claim ahead of the pods — UpgradingAPI only once no old worker pod
// existed, Completed only once no old pod of either existed
// (decidedAfterOldPods).
func (s *scenario) neverEarly() error {
	rep := s.ordering()
	if len(rep.Violations) > 0 {
		return fmt.Errorf("%d ordering violations, first: %s", len(rep.Violations), rep.Violations[0])
	}
	if rep.APIWrites == 0 {
		return fmt.Errorf("the API image was never written, so the ordering was not exercised")
	}
	return s.decidedAfterOldPods()
}

// decidedAfterOldPods: the upgrade's status entered UpgradingAPI only once
// no old worker pod existed, and Completed only once no old pod of either
// existed, as the event log shows it. An in-process operator's status
// writes are judged so by the porcupine model too; an out-of-process one's
// are not recorded, so the step looks at the log.
func (s *scenario) decidedAfterOldPods() error {
	if len(s.order) != 1 {
		return nil // several upgrades: the judge's model and per-edge ordering
	}
	name := s.order[0]
	gone := map[upgradesv1alpha1.Phase][]string{ // the Deployments whose old pods must be gone
		upgradesv1alpha1.PhaseUpgradingAPI: {s.role(roleWorker).name},
		upgradesv1alpha1.PhaseCompleted:    {s.role(roleWorker).name, s.role(roleAPI).name},
	}
	var err error
	eventlog.Replay(s.cl.History().Events(), func(st *eventlog.State) {
		e := st.Event
		if err != nil || e.Event != eventlog.Phase || e.Name != name {
			return
		}
		for _, d := range gone[upgradesv1alpha1.Phase(e.Phase)] {
			if old := st.OldPods(s.cl.Namespace(), d); len(old) > 0 && err == nil {
				err = fmt.Errorf("t=%.3fs: upgrade %s entered %s while old pods %v of %s still existed", e.T, name, e.Phase, old, d)
			}
		}
	})
	return err
}

func (s *scenario) handoff(seconds int) error {
	rep := s.ordering()
	if rep.Handoff < 0 {
		return fmt.Errorf("no API write after an old worker pod's deletion (first API write at %.3fs, last old worker pod deleted at %.3fs)", rep.FirstAPIWrite, rep.LastOldWorkerDeleted)
	}
	if rep.Handoff > float64(seconds) {
		return fmt.Errorf("the API image was written %.3fs after the last old worker pod was deleted, more than %ds", rep.Handoff, seconds)
	}
	return nil
}

// apiWriteMoments calls fn at each moment the API Deployment's template
// changed after its first sight (the operator's writes).
func (s *scenario) apiWriteMoments(fn func(m *moment)) {
	api := s.role(roleAPI).name
	replay(s.cl.History().Facts, func(m *moment) {
		if m.rewrite(api) {
			fn(m)
		}
	})
}

func (s *scenario) apiAfterWorkerReady() error {
	worker := s.role(roleWorker).name
	var errs []string
	writes := 0
	s.apiWriteMoments(func(m *moment) {
		writes++
		for name, p := range m.Pods {
			if p.deployment == worker && !p.ready {
				errs = append(errs, fmt.Sprintf("t=%.3fs: API written while worker pod %s was not ready", m.Event.T, name))
			}
		}
	})
	if writes == 0 {
		return fmt.Errorf("the API image was never written")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// rolloutSpan is the time from the operator's write of role's Deployment
// to the deletion of its last old pod (or its last new pod being ready,
// whichever is later).
func (s *scenario) rolloutSpan(role string) (time.Duration, error) {
	dep := s.role(role).name
	written, done := -1.0, -1.0
	replay(s.cl.History().Facts, func(m *moment) {
		e := m.Event
		switch {
		case written < 0 && m.rewrite(dep):
			written = e.T
		case written >= 0 && e.Deployment == dep && (e.Event == eventlog.PodDeleted || e.Event == eventlog.PodReady) && m.oldPods(dep) == 0:
			done = e.T
		}
	})
	if written < 0 || done < 0 {
		return 0, fmt.Errorf("no rollout of %s was recorded", dep)
	}
	return time.Duration((done - written) * float64(time.Second)), nil
}

func (s *scenario) noPollingGap(seconds int) error {
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	phases := s.phaseFacts(name)
	if len(phases) == 0 || phases[len(phases)-1].Phase != string(upgradesv1alpha1.PhaseCompleted) {
		return fmt.Errorf("the upgrade did not complete")
	}
	total := time.Duration((phases[len(phases)-1].T - phases[0].T) * float64(time.Second))
	w, err := s.rolloutSpan(roleWorker)
	if err != nil {
		return err
	}
	a, err := s.rolloutSpan(roleAPI)
	if err != nil {
		return err
	}
	if gap := total - w - a; gap > time.Duration(seconds)*time.Second {
		return fmt.Errorf("the upgrade took %s, the worker's rollout %s and the API's %s: %s more than both", total, w, a, gap)
	}
	return nil
}

// operatorWrites are the operator's successful writes of deployment.
func (s *scenario) operatorWrites(deployment string) []judge.Op {
	var out []judge.Op
	for _, op := range judge.SuccessfulWrites(s.cl.History().Ops) {
		if deployment == "" || op.Name == deployment {
			out = append(out, op)
		}
	}
	return out
}

func (s *scenario) writes(role string, n int) error {
	dep := s.role(role).name
	if got := len(s.operatorWrites(dep)); got != n {
		return fmt.Errorf("the operator wrote deployment %s %d times, want %d", dep, got, n)
	}
	return nil
}

func (s *scenario) noWrites() error {
	if ws := s.operatorWrites(""); len(ws) > 0 {
		return fmt.Errorf("the operator wrote %d Deployment images, the first to %s", len(ws), ws[0].Name)
	}
	return nil
}

func (s *scenario) eachImageOnce() error {
	count := map[string]int{}
	for _, op := range s.operatorWrites("") {
		count[op.Name+" = "+strings.Join(op.Images, ",")]++
	}
	if len(count) == 0 {
		return fmt.Errorf("the operator wrote no image")
	}
	for k, n := range count {
		if n != 1 {
			return fmt.Errorf("deployment %s written %d times", k, n)
		}
	}
	return nil
}

func (s *scenario) wroteNothingBefore(writer, other, phase string) error {
	var otherRV uint64
	for _, e := range s.phaseFacts(other) {
		if e.Phase == phase {
			otherRV, _ = strconv.ParseUint(e.RV, 10, 64)
			break
		}
	}
	if otherRV == 0 {
		return fmt.Errorf("upgrade %s never reached %s", other, phase)
	}
	wrote := false
	for _, op := range s.operatorWrites("") {
		// a write read from the event log (the operator out of process) is
		// the upgrade's whose target image it wrote
		fromLog := op.FromLog && op.Upgrade != nil && op.Upgrade.Name == writer
		if op.Request != s.cl.Namespace()+"/"+writer && !fromLog {
			continue
		}
		wrote = true
		if rv, _ := strconv.ParseUint(op.RV, 10, 64); rv < otherRV {
			return fmt.Errorf("%s wrote %s (op #%d, rv %d) before %s was %s (rv %d)", writer, op.Name, op.ID, rv, other, phase, otherRV)
		}
	}
	if !wrote {
		return fmt.Errorf("%s wrote nothing at all", writer)
	}
	return nil
}
