package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cucumber/godog"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
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

	sc.Step(`^the API is neither written nor claimed while an old worker pod exists(?: or terminates)?$`, s.neverEarly)
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
	sc.Step(`^(\d+) calls of the operator were failed by the fault$`, s.injectedCalls)
	sc.Step(`^the standby replica took over and wrote$`, s.standbyWrote)
	sc.Step(`^a fault's note matches "([^"]+)" within (\d+) seconds$`, s.faultNoteMatches)
}

func (s *scenario) phaseStays(ctx context.Context, phase string, seconds int) error {
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	return s.cl.Consistently(ctx, fmt.Sprintf("upgrade %s stays %s", name, phase), time.Duration(seconds)*time.Second, func(ctx context.Context) (bool, error) {
		st, err := s.readStatus(ctx, name)
		if err != nil {
			return false, err
		}
		return st.phase == phase, nil
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
	name, err := s.upgradeName(name)
	if err != nil {
		return err
	}
	st, err := s.readStatus(ctx, name)
	if err != nil {
		return err
	}
	if !strings.Contains(st.message, text) {
		return fmt.Errorf("message %q does not contain %q", st.message, text)
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
	// the Deployment as namespace/name, and the container whose image failed
	if up := s.upgrades[u.Name]; up != nil && up.workerContainer != "" {
		if want := fmt.Sprintf("container %q", up.workerContainer); !strings.Contains(u.Status.Message, want) {
			return fmt.Errorf("message %q does not name the worker's %s", u.Status.Message, want)
		}
	}
	return s.messageContains(ctx, "", s.cl.Namespace()+"/"+s.role(roleWorker).name)
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
		st, err := s.readStatus(ctx, name)
		if err != nil {
			return false, err
		}
		seen = fmt.Sprintf("%s (%s)", st.phase, st.message)
		return st.phase == string(upgradesv1alpha1.PhasePending) && strings.Contains(st.message, other), nil
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
