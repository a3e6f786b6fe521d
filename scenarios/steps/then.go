package steps

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/checks"
	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/history"
)

func (s *scenario) registerThen(sc *godog.ScenarioContext) {
	sc.Step(`^the phase stays "([^"]+)" for (\d+) seconds$`, s.phaseStays)
	sc.Step(`^the message contains "([^"]+)"$`, func(ctx context.Context, text string) error { return s.messageContains(ctx, "", text) })
	sc.Step(`^the message of "([^"]+)" contains "([^"]+)"$`, s.messageContains)
	sc.Step(`^the message names the image pull error$`, s.messageNamesPullError)
	sc.Step(`^the message names the worker Deployment "([^"]+)"$`, s.messageNamesDeployment)
	sc.Step(`^the status shows the worker image "([^"]+)" and the API image "([^"]+)"$`, s.statusImages)
	sc.Step(`^the upgrade "([^"]+)" is held with a message naming "([^"]+)" within (\d+) seconds$`, s.held)
	sc.Step(`^the phases were "([^"]+)"$`, s.phasesWere)

	sc.Step(`^the API image is never written while an old worker pod exists(?: or terminates)?$`, s.neverEarly)
	sc.Step(`^the API image is written within (\d+) seconds? after the last old worker pod is deleted$`, s.handoff)
	sc.Step(`^the API image is written only after every new worker pod was ready$`, s.apiAfterWorkerReady)
	sc.Step(`^the upgrade took at most (\d+) seconds? longer than the worker's rollout plus the API's rollout$`, s.noPollingGap)
	sc.Step(`^the API image is not written$`, func() error { return s.writes(roleAPI, 0) })
	sc.Step(`^the worker image is never written$`, func() error { return s.writes(roleWorker, 0) })
	sc.Step(`^the (worker|API) image is written once$`, func(role string) error { return s.writes(role, 1) })
	sc.Step(`^no Deployment image is written$`, s.noWrites)
	sc.Step(`^each Deployment image was written once$`, s.eachImageOnce)
	sc.Step(`^"([^"]+)" wrote no image before "([^"]+)" was "([^"]+)"$`, s.wroteNothingBefore)

	sc.Step(`^the worker's counters said (\d+) replicas?, (\d+) updated, (\d+) available for at least (\d+) seconds while an old worker pod still existed$`, s.countersWindow)
	sc.Step(`^the worker Deployment was seen a generation ahead of its observedGeneration with complete counters$`, s.staleCompleteSeen)
	sc.Step(`^the operator read the worker Deployment a generation ahead of its observedGeneration$`, s.staleRead)
	sc.Step(`^the upgrade was never past "([^"]+)" while the worker's generation was not observed$`, s.neverPastWhileStale)
	sc.Step(`^the worker's status showed (\d+) replicas, (\d+) updated and (\d+) available$`, s.statusShowed)
	sc.Step(`^while the worker's status showed (\d+) replicas, (\d+) updated and (\d+) available, the upgrade was "([^"]+)" and the API image was not written$`, s.whileStatus)
	sc.Step(`^no new worker pod was created while an old worker pod existed$`, s.recreateOrder)
	sc.Step(`^the upgrade failed before the worker's progress deadline$`, s.failedBeforeDeadline)

	sc.Step(`^every write of the operator was rejected (\d+) times before it succeeded$`, s.rejectedBeforeSuccess)
	sc.Step(`^the rejected attempts of each write were spread over at least (\d+) milliseconds$`, s.backoffSpread)
	sc.Step(`^the operator was killed at least (\d+) times$`, s.killedAtLeast)
	sc.Step(`^the standby replica took over and wrote$`, s.standbyWrote)
}

func (s *scenario) phaseStays(ctx context.Context, phase string, seconds int) error {
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	return s.cl.Consistently(ctx, fmt.Sprintf("upgrade %s stays %s", name, phase), time.Duration(seconds)*time.Second, func(ctx context.Context) (bool, error) {
		u, err := s.getUpgrade(ctx, name)
		if err != nil {
			return false, err
		}
		return string(u.Status.Phase) == phase, nil
	})
}

func (s *scenario) current(ctx context.Context, name string) (*upgradesv1alpha1.ApplicationUpgrade, error) {
	name, err := s.upgradeName(name)
	if err != nil {
		return nil, err
	}
	return s.getUpgrade(ctx, name)
}

func (s *scenario) messageContains(ctx context.Context, name, text string) error {
	u, err := s.current(ctx, name)
	if err != nil {
		return err
	}
	if !strings.Contains(u.Status.Message, text) {
		return fmt.Errorf("message %q does not contain %q", u.Status.Message, text)
	}
	return nil
}

func (s *scenario) messageNamesPullError(ctx context.Context) error {
	u, err := s.current(ctx, "")
	if err != nil {
		return err
	}
	if !strings.Contains(u.Status.Message, "ErrImagePull") && !strings.Contains(u.Status.Message, "ImagePullBackOff") {
		return fmt.Errorf("message %q names neither ErrImagePull nor ImagePullBackOff", u.Status.Message)
	}
	return s.messageContains(ctx, "", s.role(roleWorker).name)
}

func (s *scenario) messageNamesDeployment(ctx context.Context, name string) error {
	return s.messageContains(ctx, "", s.cl.Namespace()+"/"+name)
}

func (s *scenario) statusImages(ctx context.Context, worker, api string) error {
	u, err := s.current(ctx, "")
	if err != nil {
		return err
	}
	if u.Status.Worker.ShortImage != worker || u.Status.API.ShortImage != api {
		return fmt.Errorf("status shows worker %q and API %q, want %q and %q", u.Status.Worker.ShortImage, u.Status.API.ShortImage, worker, api)
	}
	return nil
}

func (s *scenario) held(ctx context.Context, name, other string, seconds int) error {
	seen := ""
	err := s.cl.Eventually(ctx, fmt.Sprintf("upgrade %s held by %s", name, other), time.Duration(seconds)*time.Second, func(ctx context.Context) (bool, error) {
		u, err := s.getUpgrade(ctx, name)
		if err != nil {
			return false, err
		}
		seen = fmt.Sprintf("%s (%s)", u.Status.Phase, u.Status.Message)
		return u.Status.Phase == upgradesv1alpha1.PhasePending && strings.Contains(u.Status.Message, other), nil
	})
	if err != nil {
		return fmt.Errorf("%w; last seen %s", err, seen)
	}
	return nil
}

// phaseFacts are the upgrade's phases as the cluster recorded them, in order.
func (s *scenario) phaseFacts(name string) []eventlog.Event {
	var out []eventlog.Event
	replay(s.cl.History().Facts, func(m *moment) {
		if m.Event.Event == eventlog.Phase && m.Event.Name == name {
			out = append(out, m.Event)
		}
	})
	return out
}

func (s *scenario) phasesWere(list string) error {
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	var got []string
	for _, e := range s.phaseFacts(name) {
		got = append(got, e.Phase)
	}
	want := strings.Split(list, ", ")
	if !slices.Equal(got, want) {
		return fmt.Errorf("phases were %q, want %q", strings.Join(got, ", "), list)
	}
	return nil
}

// ordering is checks.Ordering of the worker and API Deployments.
func (s *scenario) ordering() checks.Report {
	return checks.Ordering(s.cl.History().Events(), checks.Pair{Namespace: s.cl.Namespace(), Worker: s.role(roleWorker).name, API: s.role(roleAPI).name})
}

func (s *scenario) neverEarly() error {
	rep := s.ordering()
	if len(rep.Violations) > 0 {
		return fmt.Errorf("%d ordering violations, first: %s", len(rep.Violations), rep.Violations[0])
	}
	if rep.APIWrites == 0 {
		return fmt.Errorf("the API image was never written, so the ordering was not exercised")
	}
	return nil
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
	seen := false
	replay(s.cl.History().Facts, func(m *moment) {
		if m.Event.Event != eventlog.DeploymentWrite || m.Event.Name != api {
			return
		}
		if seen {
			fn(m)
		}
		seen = true
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
	var written, done float64 = -1, -1
	first := true
	replay(s.cl.History().Facts, func(m *moment) {
		e := m.Event
		if e.Deployment != dep {
			return
		}
		if e.Event == eventlog.DeploymentWrite {
			if !first && written < 0 {
				written = e.T
			}
			first = false
			return
		}
		if written >= 0 && (e.Event == eventlog.PodDeleted || e.Event == eventlog.PodReady) && m.oldPods(dep) == 0 {
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
func (s *scenario) operatorWrites(deployment string) []history.Op {
	var out []history.Op
	for _, op := range history.SuccessfulWrites(s.cl.History().Ops) {
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
		if op.Request != s.cl.Namespace()+"/"+writer {
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
	writes := 0
	replay(s.cl.History().Facts, func(m *moment) {
		if m.Event.Event == eventlog.DeploymentWrite && m.Event.Name == worker {
			writes++
		}
		if writes > 1 {
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
	var written, failed float64 = -1, -1
	first := true
	replay(s.cl.History().Facts, func(m *moment) {
		e := m.Event
		switch {
		case e.Event == eventlog.DeploymentWrite && e.Name == w.name:
			if !first && written < 0 {
				written = e.T
			}
			first = false
		case e.Event == eventlog.Phase && e.Phase == string(upgradesv1alpha1.PhaseFailed) && failed < 0:
			failed = e.T
		}
	})
	start := written
	if start < 0 { // the worker was at the target already: count from the upgrade's first phase
		start = s.phaseFacts(u.Name)[0].T
	}
	if failed < 0 || failed-start >= float64(*w.progressSeconds) {
		return fmt.Errorf("Failed at %.3fs, %.3fs after the rollout started; the deadline is %ds", failed, failed-start, *w.progressSeconds)
	}
	return nil
}

// rejections returns, per write target, the injected failures and whether
// a later attempt succeeded.
func (s *scenario) rejections() (map[string][]history.Op, map[string]bool) {
	rejected, succeeded := map[string][]history.Op{}, map[string]bool{}
	for _, op := range s.cl.History().Ops {
		if !op.Write() {
			continue
		}
		t := cluster.Target(&op)
		switch {
		case op.Injected:
			rejected[t] = append(rejected[t], op)
		case op.OK():
			succeeded[t] = true
		}
	}
	return rejected, succeeded
}

func (s *scenario) rejectedBeforeSuccess(n int) error {
	rejected, succeeded := s.rejections()
	if len(succeeded) == 0 {
		return fmt.Errorf("no write of the operator succeeded")
	}
	for t := range succeeded {
		if len(rejected[t]) != n {
			return fmt.Errorf("write %s was rejected %d times, not %d", t, len(rejected[t]), n)
		}
	}
	return nil
}

func (s *scenario) backoffSpread(ms int) error {
	rejected, _ := s.rejections()
	if len(rejected) == 0 {
		return fmt.Errorf("no write was rejected")
	}
	for t, ops := range rejected {
		if spread := ops[len(ops)-1].Call - ops[0].Call; spread*1000 < float64(ms) {
			return fmt.Errorf("the %d rejected attempts of %s came within %.1fms: no back-off", len(ops), t, spread*1000)
		}
	}
	return nil
}

func (s *scenario) killedAtLeast(n int) error {
	so, err := s.simOnly()
	if err != nil {
		return err
	}
	if k := so.Kills(); k < n {
		return fmt.Errorf("the operator was killed %d times, want at least %d", k, n)
	}
	return nil
}

func (s *scenario) standbyWrote() error {
	for _, op := range s.cl.History().Ops {
		if op.Replica == 1 && op.Write() && op.OK() {
			return nil
		}
	}
	return fmt.Errorf("the standby replica never wrote")
}
