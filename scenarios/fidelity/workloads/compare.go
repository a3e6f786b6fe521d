package workloads

import (
	"fmt"
	"strings"

	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
)

// Compare lines up the real and the simulated sequences (Format output)
// entity by entity with the fidelity report's comparison
// (fidelity.CompareSequences): an entity agrees when both sequences are
// equal, or when they differ only in grain — one backend, or each, adds
// intermediate states, the states they share in one order (the real
// controllers' informer lag and the kwok stages' spread in wall time add
// states where the simulator acts at one instant; with Parallel pod
// management the simulator's pods move at one instant where the real ones
// are milliseconds apart). Beyond the report it requires, since every
// scenario ends settled, that both backends have every entity and that its
// last states are equal. kind is the scenario workload's kind (Sequence.Kind
// of the parsed sequences). It returns the differences (for the report's
// tally) and an error naming the entities that disagree.
func Compare(real, sim, kind string) ([]fidelity.Difference, error) {
	r, s := Parse(real, kind), Parse(sim, kind)
	last := func(seqs []fidelity.Sequence) map[string]string {
		m := map[string]string{}
		for _, q := range seqs {
			if len(q.States) > 0 {
				m[q.Entity] = q.States[len(q.States)-1]
			}
		}
		return m
	}
	lr, ls := last(r), last(s)
	diffs := fidelity.CompareSequences(s, r)
	var bad []string
	for _, d := range diffs {
		var why string
		switch {
		case d.Sim == 0 || d.Real == 0:
			why = "only one backend has it"
		case lr[d.Entity] != ls[d.Entity]:
			why = "the last states differ"
		case !d.Agree() && !d.Grain():
			why = fmt.Sprintf("the orders part at simulated state %d (%s)", d.Unmatched, d.UnmatchedState)
		default:
			continue
		}
		bad = append(bad, fmt.Sprintf("== %s: %s\n-- real:\n%s\n-- simulator:\n%s", d.Entity, why, states(r, d.Entity), states(s, d.Entity)))
	}
	if len(bad) > 0 {
		return diffs, fmt.Errorf("%s", strings.Join(bad, "\n"))
	}
	return diffs, nil
}

// Verdict says one difference in a line, for the test log.
func Verdict(d fidelity.Difference) string {
	return fmt.Sprintf("%s: %s (%d real states, %d simulated)", d.Entity, d.Verdict(), d.Real, d.Sim)
}

func states(seqs []fidelity.Sequence, entity string) string {
	for _, q := range seqs {
		if q.Entity == entity {
			return strings.Join(q.States, "\n")
		}
	}
	return "(none)"
}

// Parse reads Format output ("#" lines are comments) into sequences of
// kind kind, in the order written.
func Parse(s, kind string) []fidelity.Sequence {
	var out []fidelity.Sequence
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "== "):
			out = append(out, fidelity.Sequence{Entity: strings.TrimPrefix(l, "== "), Kind: kind})
		case l != "" && !strings.HasPrefix(l, "#") && len(out) > 0:
			q := &out[len(out)-1]
			q.States = append(q.States, l)
		}
	}
	return out
}
