package simulator

import (
	"context"
	"fmt"
	"time"
)

// RunResult says how a Run ended.
type RunResult struct {
	// Events is the number of events processed by this call.
	Events int
	// Elapsed is the virtual time since Options.Start when the call returned.
	Elapsed time.Duration
	// Stopped is true when stop() returned true.
	Stopped bool
	// Idle is true when no event was left to run.
	Idle bool
}

// LimitError is Run's error when the next event lies beyond the limit.
type LimitError struct {
	// Limit is the limit given to Run.
	Limit time.Duration
	// Next describes the next event, due At since Options.Start.
	Next string
	At   time.Duration
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("virtual time limit %s reached before %q (next event at %s): the run did not stop in time", e.Limit, e.Next, e.At)
}

// Run processes events in (virtual time, sequence) order until stop()
// returns true (checked before the first event and after each one; nil
// never stops), no event is left, or the next event lies beyond limit of
// virtual time since Options.Start — then it returns an error naming the
// limit and leaves that event scheduled. A cancelled ctx also ends the run.
func (s *Sim) Run(ctx context.Context, stop func() bool, limit time.Duration) (RunResult, error) {
	deadline := s.start.Add(limit)
	prev := s.runCtx
	s.setRunCtx(ctx)
	defer s.setRunCtx(prev)
	var res RunResult
	for {
		res.Elapsed = s.Elapsed()
		if stop != nil && stop() {
			res.Stopped = true
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("simulation interrupted at virtual %s: %w", s.Elapsed(), err)
		}
		next := s.events.peek()
		if next == nil {
			res.Idle = true
			return res, nil
		}
		if next.at.After(deadline) {
			return res, &LimitError{Limit: limit, Next: next.what, At: next.at.Sub(s.start)}
		}
		s.step()
		res.Events++
	}
}

// RunFor processes every event due within d of virtual time from now, then
// advances the clock to now+d. It is Run with a relative horizon and no
// stop condition, for scripts that advance time in steps.
func (s *Sim) RunFor(ctx context.Context, d time.Duration) (RunResult, error) {
	return s.RunUntil(ctx, s.now.Add(d))
}

// RunUntil processes every event due at or before t, then advances the clock
// to t (if it lies in the future).
func (s *Sim) RunUntil(ctx context.Context, t time.Time) (RunResult, error) {
	prev := s.runCtx
	s.setRunCtx(ctx)
	defer s.setRunCtx(prev)
	var res RunResult
	for {
		if err := ctx.Err(); err != nil {
			res.Elapsed = s.Elapsed()
			return res, fmt.Errorf("simulation interrupted at virtual %s: %w", s.Elapsed(), err)
		}
		next := s.events.peek()
		if next == nil || next.at.After(t) {
			break
		}
		s.step()
		res.Events++
	}
	if t.After(s.now) {
		s.now = t
	}
	res.Elapsed = s.Elapsed()
	res.Idle = len(s.events) == 0
	return res, nil
}

// step pops the next event, advances the clock to it and runs it.
func (s *Sim) step() {
	e := s.events.pop()
	if e.at.After(s.now) {
		s.now = e.at
	}
	e.run()
	// Run and out of the heap, nothing refers to e: kept for the next
	// scheduleAt (its closure or delivery dropped now).
	*e = event{}
	s.freeEvents = append(s.freeEvents, e)
	s.shared.endEvent()
}
