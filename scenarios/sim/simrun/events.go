package simrun

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/scenarios/render/console"
)

// KubeEvent is a Kubernetes event the operator emitted during a run.
type KubeEvent struct {
	At     time.Duration // virtual time since the start of the run
	Object string        // namespace/name of the regarding object
	Type   string        // Normal or Warning
	Reason string
	Note   string
}

// eventSink is an events.EventRecorder that keeps events in memory, stamped
// with the simulator's virtual clock.
type eventSink struct {
	clock  clock.PassiveClock
	start  time.Time
	events []console.KubeEvent
}

var _ events.EventRecorder = (*eventSink)(nil)

// Eventf implements events.EventRecorder.
func (s *eventSink) Eventf(regarding runtime.Object, _ runtime.Object, eventtype, reason, _ string, note string, args ...interface{}) {
	name := ""
	if o, ok := regarding.(client.Object); ok {
		name = o.GetNamespace() + "/" + o.GetName()
	}
	s.events = append(s.events, console.KubeEvent{At: s.clock.Now().Sub(s.start), Object: name, Type: eventtype, Reason: reason, Note: fmt.Sprintf(note, args...)})
}
