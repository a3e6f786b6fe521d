package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// With two upgrades in one run each verdict line shows its own duration
// (first phase to Completed/Failed) and its own reconciles.
func TestUpgradeLineIsPerUpgrade(t *testing.T) {
	phase := func(at float64, name, p string) eventlog.Event {
		return eventlog.Event{T: at, Event: eventlog.Phase, Namespace: "ns", Name: name, Phase: p}
	}
	res := Summary{Elapsed: 90 * time.Second, Reconciles: 50, ReconcilesBy: map[string]int{"ns/a": 20, "ns/b": 30},
		Events: []eventlog.Event{phase(5, "a", "Pending"), phase(10, "b", "Pending"), phase(40, "a", "Completed"), phase(60, "b", "Failed"), phase(61, "b", "Failed")}}
	assert.Equal(t, "ns/a: Completed after 35s (20 reconciles)", res.upgradeLine("ns/a", "Completed"))
	assert.Equal(t, "ns/b: Failed after 50s (30 reconciles)", res.upgradeLine("ns/b", "Failed"))
	assert.Equal(t, "ns/c: Pending after 1m30s", (Summary{Elapsed: 90 * time.Second, Reconciles: -1}).upgradeLine("ns/c", "Pending"))
}
