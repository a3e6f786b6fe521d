package starlingx

import "time"

// Event is a notable change of the model, for transcripts and tests.
type Event struct {
	Time    time.Time
	Kind    string // EventStrategyState, EventSwact, EventReleaseDeployed, EventKubeActive, EventStep
	Subject string // strategy uuid, host name, release id, version
	Detail  string // new state, "controller-1 -> controller-0", step outcome
}

// Event kinds.
const (
	EventStrategyState   = "strategy-state"
	EventSwact           = "swact"
	EventReleaseDeployed = "release-deployed"
	EventKubeActive      = "kube-active"
	EventStep            = "step"
	EventDeployState     = "deploy-state"
)

func (s *System) record(kind, subject, detail string) {
	s.events = append(s.events, Event{Time: s.now, Kind: kind, Subject: subject, Detail: detail})
}

// Events returns every event recorded since the model was created.
func (s *System) Events() []Event { return append([]Event(nil), s.events...) }
