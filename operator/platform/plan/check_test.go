package plan

import (
	"testing"

	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// assertValidPlan checks what every plan must satisfy: each step allowed
// from the state before it (replayed here, not trusted from Compute), no
// step repeated or without effect, and the last state at target.
func assertValidPlan(t *testing.T, from, to release.Composite, steps []DeployStep, cat release.Catalog, mode SystemMode) {
	t.Helper()
	state := from
	seen := map[string]bool{}
	for i, s := range steps {
		if seen[s.String()] {
			t.Fatalf("step %d %s repeats an earlier step in %v", i, s, steps)
		}
		seen[s.String()] = true
		if err := Allowed(state, s, cat, mode); err != nil {
			t.Fatalf("step %d %s is not allowed from %s: %v", i, s, state, err)
		}
		next := s.Apply(state)
		if next.Equal(state) {
			t.Fatalf("step %d %s changes nothing", i, s)
		}
		state = next
	}
	if !state.Platform.Equal(to.Platform) || (!to.Kubernetes.IsZero() && state.Kubernetes != to.Kubernetes) {
		t.Fatalf("plan %v from %s ends at %s, not at the target %s", steps, from, state, to)
	}
}
