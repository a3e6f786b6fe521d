package fidelity

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Scenario is one scenario's event logs from both backends.
type Scenario struct {
	Name      string
	Sim, Real []eventlog.Event
	// Diffs, when not nil, are the scenario's differences, compared from
	// sequences rather than event logs (the StatefulSet and DaemonSet
	// controller scenarios of scenarios/fidelity/workloads, whose real side is a
	// committed transcript of sequences); Sim and Real are then empty.
	Diffs []Difference
}

// Differences are the scenario's differences: Diffs, else Compare(Sim, Real).
func (s Scenario) Differences() []Difference {
	if s.Diffs != nil {
		return s.Diffs
	}
	return Compare(s.Sim, s.Real)
}

// Agrees reports whether every sequence of s agrees.
func (s Scenario) Agrees() bool {
	for _, d := range s.Differences() {
		if !d.Agree() {
			return false
		}
	}
	return true
}

// WriteReport prints the agreement table, the disagreements with their
// first differing state, and the phase durations with their ratio.
func WriteReport(w io.Writer, scenarios []Scenario) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSEQUENCE\tSIM STATES\tREAL STATES\tAGREE (ignoring timing)")
	agree, refine, both, total := 0, 0, 0, 0
	perKind := map[string]*Tally{}
	var diffs []string
	for _, s := range scenarios {
		for _, d := range s.Differences() {
			total++
			t := perKind[d.Kind]
			if t == nil {
				t = &Tally{}
				perKind[d.Kind] = t
			}
			t.Add(d)
			switch {
			case d.Agree():
				agree++
			case d.RealRefines || d.SimRefines || d.BothRefine:
				refine++
				if d.BothRefine {
					both++
				}
				fallthrough
			default:
				diff := fmt.Sprintf("%s / %s (%s), state %d:\n    sim:  %s\n    real: %s", name(s.Name), d.Entity, d.Verdict(), d.Index+1, d.SimState, d.RealAt)
				if d.Unmatched > 0 {
					diff += fmt.Sprintf("\n    orders part at sim state %d, which the real sequence lacks after the states before it: %s", d.Unmatched, d.UnmatchedState)
				}
				diffs = append(diffs, diff)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", name(s.Name), d.Entity, d.Sim, d.Real, d.Verdict())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d of %d sequences agree state for state; %d more differ only in grain (one backend adds intermediate states; in %d of them each adds its own, the shared states in one order); %d disagree in order.\n",
		agree, total, refine, both, total-agree-refine)
	fmt.Fprintln(w, "By kind (sequences: agree / differ in grain / disagree in order):")
	for _, k := range []string{KindDeployment, eventlog.KindStatefulSet, eventlog.KindDaemonSet, KindUpgrade} {
		if t := perKind[k]; t != nil {
			fmt.Fprintf(w, "  %-18s %3d: %d / %d / %d\n", k, t.Total(), t.Agree, t.Grain, t.Order)
		}
	}
	if len(diffs) > 0 {
		fmt.Fprintln(w, "\nDisagreements (first differing state):")
		for _, d := range diffs {
			fmt.Fprintln(w, "  "+d)
		}
	}
	fmt.Fprintln(w, "\nPhase durations:")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tUPGRADE\tPHASE\tSIM s\tREAL s\tREAL/SIM")
	for _, s := range scenarios {
		sim, real := PhaseDurations(s.Sim), PhaseDurations(s.Real)
		for i := 0; i < len(sim) || i < len(real); i++ {
			var a, b PhaseSpan
			if i < len(sim) {
				a = sim[i]
			}
			if i < len(real) {
				b = real[i]
			}
			upgrade, phase := a.Upgrade, a.Phase
			if upgrade == "" {
				upgrade, phase = b.Upgrade, b.Phase
			}
			ratio := "-"
			if a.Phase == b.Phase && a.Seconds > 0 {
				ratio = fmt.Sprintf("%.2f", b.Seconds/a.Seconds)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name(s.Name), upgrade, phase, secs(a), secs(b), ratio)
		}
	}
	return tw.Flush()
}

// name shortens a scenario name for the tables.
func name(s string) string {
	if len(s) > 56 {
		return s[:55] + "…"
	}
	return s
}

func secs(p PhaseSpan) string {
	if p.Phase == "" {
		return "-"
	}
	return fmt.Sprintf("%.3f", p.Seconds)
}

// Tally counts differences by class.
type Tally struct {
	Agree, Grain, Order int
}

// Add counts d: equal sequences, a difference in grain (one or each
// backend adds intermediate states) or in order.
func (t *Tally) Add(d Difference) {
	switch {
	case d.Agree():
		t.Agree++
	case d.Grain():
		t.Grain++
	default:
		t.Order++
	}
}

// Total is how many differences were counted.
func (t Tally) Total() int { return t.Agree + t.Grain + t.Order }

// WriteSequences prints, for every sequence of s that does not agree, the
// simulator's and the real cluster's states side by side (one state a
// line, "-" where one side has ended): what `make fidelity
// ARGS=-fidelity.dump=REGEXP` shows for the scenarios REGEXP matches. A
// scenario compared from sequences (Diffs) has no states to show.
func WriteSequences(w io.Writer, s Scenario) error {
	if s.Diffs != nil {
		return nil
	}
	sim, real := bySequence(Sequences(s.Sim)), bySequence(Sequences(s.Real))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, d := range s.Differences() {
		if d.Agree() {
			continue
		}
		fmt.Fprintf(tw, "%s / %s (%s)\tSIM\tREAL\n", s.Name, d.Entity, d.Verdict())
		a, b := sim[d.Entity].States, real[d.Entity].States
		for i := 0; i < len(a) || i < len(b); i++ {
			fmt.Fprintf(tw, "  %d\t%s\t%s\n", i+1, at(a, i), at(b, i))
		}
	}
	return tw.Flush()
}
