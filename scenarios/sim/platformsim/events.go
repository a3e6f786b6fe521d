package platformsim

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
)

// KubeEvent is an event the operator emitted, at virtual time At since the
// start of the run.
type KubeEvent struct {
	At      time.Duration
	Type    string // Normal or Warning
	Reason  string
	Message string
}

// eventSink is an events.EventRecorder keeping events in memory.
type eventSink struct {
	clock  clock.PassiveClock
	start  time.Time
	events []KubeEvent
}

var _ events.EventRecorder = (*eventSink)(nil)

// Eventf implements events.EventRecorder.
func (s *eventSink) Eventf(_ runtime.Object, _ runtime.Object, eventtype, reason, _ string, note string, args ...interface{}) {
	s.events = append(s.events, KubeEvent{At: s.clock.Now().Sub(s.start), Type: eventtype, Reason: reason, Message: fmt.Sprintf(note, args...)})
}

// Events returns the events emitted so far.
func (e *Env) Events() []KubeEvent { return append([]KubeEvent(nil), e.events.events...) }
