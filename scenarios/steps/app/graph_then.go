package app

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// deploymentOf is the Deployment of component name of any graph upgrade
// of the scenario (the name itself when no upgrade says otherwise).
func (s *scenario) deploymentOf(component string) string {
	for _, name := range s.order {
		if g := s.graphs[name]; g != nil {
			if c, ok := g.component(component); ok {
				return c.WorkloadName()
			}
		}
	}
	return component
}

// writtenInOrder: the operator's first writes of the components'
// Deployments happened in the order listed (by resourceVersion).
func (s *scenario) writtenInOrder(list string) error {
	want := strings.Split(list, ", ")
	facts := s.cl.History().Facts
	type first struct {
		name string
		at   float64
		idx  int
	}
	var got []first
	idx := 0
	replay(facts, func(m *moment) {
		idx++
		for _, c := range want {
			if m.rewrite(s.deploymentOf(c)) && !slices.ContainsFunc(got, func(f first) bool { return f.name == c }) {
				got = append(got, first{c, m.Event.T, idx})
			}
		}
	})
	sort.SliceStable(got, func(i, j int) bool { return got[i].idx < got[j].idx })
	var order []string
	for _, f := range got {
		order = append(order, fmt.Sprintf("%s@%.1fs", f.name, f.at))
	}
	names := make([]string, len(got))
	for i, f := range got {
		names[i] = f.name
	}
	if !slices.Equal(names, want) {
		return fmt.Errorf("components first written in the order %s, want %s", strings.Join(order, ", "), list)
	}
	return nil
}

// edges are the callee/caller Deployment pairs of every graph upgrade applied.
func (s *scenario) edges() []judge.Pair {
	var out []judge.Pair
	for _, name := range s.order {
		g := s.graphs[name]
		if g == nil || s.refused[name] != nil {
			continue
		}
		for _, c := range g.components {
			for _, d := range c.DependsOn {
				if dep, ok := g.component(d); ok {
					out = append(out, judge.Pair{Namespace: s.cl.Namespace(), Worker: dep.WorkloadName(), API: c.WorkloadName(),
						WorkerKind: string(dep.Kind()), APIKind: string(c.Kind())})
				}
			}
		}
	}
	return out
}

// graphNeverEarly is judge.Ordering on every dependency edge; at least
// one dependent must have been written, or the rule was not exercised.
func (s *scenario) graphNeverEarly() error {
	events := s.cl.History().Events()
	writes := 0
	edges := s.edges()
	if len(edges) == 0 {
		return fmt.Errorf("no graph upgrade with a dependency was applied")
	}
	for _, p := range edges {
		rep := judge.Ordering(events, p)
		if len(rep.Violations) > 0 {
			return fmt.Errorf("%s written while an old pod of %s existed: %s", p.API, p.Worker, rep.Violations[0])
		}
		writes += rep.APIWrites
	}
	if writes == 0 {
		return fmt.Errorf("no dependent component was written, so the ordering was not exercised")
	}
	return nil
}

// span is the time from the operator's first write of a Deployment to
// the moment it has no old pod left, in seconds; -1 when absent.
func (s *scenario) span(deployment string) (start, end float64) {
	start, end = -1, -1
	replay(s.cl.History().Facts, func(m *moment) {
		e := m.Event
		switch {
		case start < 0 && m.rewrite(deployment):
			start = e.T
		case start >= 0 && end < 0 && e.Deployment == deployment && e.Event == eventlog.PodDeleted && m.oldPods(deployment) == 0:
			end = e.T
		}
	})
	return start, end
}

func (s *scenario) overlapped(a, b string) error {
	as, ae := s.span(s.deploymentOf(a))
	bs, be := s.span(s.deploymentOf(b))
	if as < 0 || ae < 0 || bs < 0 || be < 0 {
		return fmt.Errorf("no complete rollout of %s (%.1fs–%.1fs) or %s (%.1fs–%.1fs) was recorded", a, as, ae, b, bs, be)
	}
	if as >= be || bs >= ae {
		return fmt.Errorf("%s rolled out %.1fs–%.1fs and %s %.1fs–%.1fs: one after the other", a, as, ae, b, bs, be)
	}
	return nil
}

// writtenAfterBoth: at the moment caller's Deployment was first
// rewritten, both callees had been rewritten and had no old pod left.
func (s *scenario) writtenAfterBoth(caller, a, b string) error {
	c, deps := s.deploymentOf(caller), []string{s.deploymentOf(a), s.deploymentOf(b)}
	var errs []string
	written := false
	replay(s.cl.History().Facts, func(m *moment) {
		if written || !m.rewrite(c) {
			return
		}
		written = true
		for _, d := range deps {
			switch {
			case m.Writes[d] < 2:
				errs = append(errs, fmt.Sprintf("t=%.3fs: %s written before %s was", m.Event.T, caller, d))
			case m.oldPods(d) > 0:
				errs = append(errs, fmt.Sprintf("t=%.3fs: %s written while %d old pods of %s existed", m.Event.T, caller, m.oldPods(d), d))
			}
		}
	})
	if !written {
		return fmt.Errorf("%s was never written", caller)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// took is the time from upgrade name's first recorded phase to its
// Completed phase.
func (s *scenario) took(name string) (time.Duration, error) {
	phases := s.phaseFacts(name)
	if len(phases) == 0 || phases[len(phases)-1].Phase != "Completed" {
		return 0, fmt.Errorf("upgrade %s did not complete", name)
	}
	return time.Duration((phases[len(phases)-1].T - phases[0].T) * float64(time.Second)), nil
}

// tookLessThan compares two upgrades' durations and reports both (the
// figure of a wide wave against a single component).
func (s *scenario) tookLessThan(wide string, factor int, one string) error {
	tw, err := s.took(wide)
	if err != nil {
		return err
	}
	t1, err := s.took(one)
	if err != nil {
		return err
	}
	n := 0
	if g := s.graphs[wide]; g != nil {
		n = len(g.components)
	}
	clock := "virtual"
	if s.cl.Backend() != "sim" {
		clock = "wall-clock"
	}
	fmt.Fprintf(os.Stderr, "graph timing (%s, %s): %q (1 component) %.1fs; %q (%d components in one wave) %.1fs; ratio %.2f\n",
		s.cl.Backend(), clock, one, t1.Seconds(), wide, n, tw.Seconds(), tw.Seconds()/t1.Seconds())
	if tw >= time.Duration(factor)*t1 {
		return fmt.Errorf("%s took %s, %s took %s: not less than %d times as long", wide, tw, one, t1, factor)
	}
	return nil
}

func (s *scenario) neverWritten(list string) error {
	for _, c := range names(list) {
		if ws := s.operatorWrites(s.deploymentOf(c)); len(ws) > 0 {
			return fmt.Errorf("the operator wrote %s (op #%d, %s)", c, ws[0].ID, strings.Join(ws[0].Images, ","))
		}
	}
	return nil
}
