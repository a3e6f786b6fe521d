package simulator

import (
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// hasLabels answers as the selector upstream's calculateStatus builds
// from the template's labels, on seeded random label sets.
func TestHasLabelsMatchesTheTemplateSelector(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	set := func() map[string]string {
		m := map[string]string{}
		for range rng.Intn(4) {
			m[[]string{"app", "tier", "pod-template-hash"}[rng.Intn(3)]] = []string{"a", "b", ""}[rng.Intn(3)]
		}
		if rng.Intn(4) == 0 {
			return nil
		}
		return m
	}
	matched := 0
	for range 2000 {
		want, have := set(), set()
		exp := labels.Set(want).AsSelectorPreValidated().Matches(labels.Set(have))
		if got := hasLabels(have, want); got != exp {
			t.Fatalf("hasLabels(%v, %v) = %t, the selector says %t", have, want, got, exp)
		}
		if exp {
			matched++
		}
	}
	if matched == 0 || matched == 2000 {
		t.Fatalf("%d of 2000 matched: the cases do not exercise both answers", matched)
	}
}
