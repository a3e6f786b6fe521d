package app

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// rejections returns, per write target, the injected failures and whether
// a later attempt succeeded.
func (s *scenario) rejections() (map[string][]judge.Op, map[string]bool) {
	rejected, succeeded := map[string][]judge.Op{}, map[string]bool{}
	for _, op := range s.cl.History().Ops {
		if !op.Write() {
			continue
		}
		t := faults.OpTarget(&op)
		switch {
		case op.Injected:
			rejected[t] = append(rejected[t], op)
		case op.OK():
			succeeded[t] = true
		}
	}
	return rejected, succeeded
}

func (s *scenario) rejectedBeforeSuccess(n int) error {
	rejected, succeeded := s.rejections()
	if len(succeeded) == 0 {
		return fmt.Errorf("no write of the operator succeeded")
	}
	for t := range succeeded {
		if len(rejected[t]) != n {
			return fmt.Errorf("write %s was rejected %d times, not %d", t, len(rejected[t]), n)
		}
	}
	return nil
}

func (s *scenario) backoffSpread(ms int) error {
	rejected, _ := s.rejections()
	if len(rejected) == 0 {
		return fmt.Errorf("no write was rejected")
	}
	for t, ops := range rejected {
		if spread := ops[len(ops)-1].Call - ops[0].Call; spread*1000 < float64(ms) {
			return fmt.Errorf("the %d rejected attempts of %s came within %.1fms: no back-off", len(ops), t, spread*1000)
		}
	}
	return nil
}

// injectedCalls checks that exactly n of the operator's calls were failed
// by an injected fault (so a backend that did not inject fails the step).
func (s *scenario) injectedCalls(n int) error {
	k := 0
	for _, op := range s.cl.History().Ops {
		if op.Injected {
			k++
		}
	}
	if k != n {
		return fmt.Errorf("%d calls of the operator were failed by an injected fault, not %d", k, n)
	}
	return nil
}

func (s *scenario) killedAtLeast(n int) error {
	k := 0
	for _, f := range s.cl.Fired() {
		if f.Fault.Kind == faults.Crash {
			k++
		}
	}
	if k < n {
		return fmt.Errorf("the operator was killed %d times, want at least %d", k, n)
	}
	return nil
}

func (s *scenario) standbyWrote() error {
	e, ok := s.cl.(cluster.Elected)
	if !ok {
		return fmt.Errorf("the %s backend runs no replicas under leader election: %w", s.cfg.Backend.Name(), cluster.ErrUnsupported)
	}
	return e.StandbyWrote()
}

// faultNoteMatches waits until the line of a fired fault (or of a fault
// actor's event: a re-apply refused) matches the regular expression re:
// what the actor did, in the words of make simulate's transcript.
func (s *scenario) faultNoteMatches(ctx context.Context, re string, secs int) error {
	rx, err := regexp.Compile(re)
	if err != nil {
		return fmt.Errorf("step's regular expression %q: %w", re, err)
	}
	var notes []string
	err = s.cl.Eventually(ctx, "a fault's note matches "+re, time.Duration(secs)*time.Second, func(context.Context) (bool, error) {
		notes = notes[:0]
		for _, f := range s.cl.Fired() {
			line := f.Note
			if f.Fault.Kind != "" {
				line = f.Fault.String() + ": " + f.Note
			}
			notes = append(notes, line)
			if rx.MatchString(f.Note) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%w; the faults' lines: %q", err, notes)
	}
	return nil
}
