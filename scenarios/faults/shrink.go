// Shrink (formerly package shrink) reduces a failing fault schedule to a
// small one that still fails the same way: it drops faults one at a time while the run
// still fails (a greedy delta debugging to a 1-minimal schedule), then
// lowers what is left (fewer failing calls, shorter windows, a restart
// sooner). Seed and scenario are kept, so the result replays with one
// command.

package faults

import (
	"strconv"
	"time"
)

// ShrinkResult is a shrunk schedule and the work it took.
type ShrinkResult struct {
	Schedule Schedule
	// Runs is how many candidate schedules were run.
	Runs int
}

// Shrink returns the smallest schedule it finds for which fails holds;
// fails(s) must hold. fails is called with candidates only (each a fresh
// copy); it should return true when the candidate fails the same way.
func Shrink(s Schedule, fails func(Schedule) bool) ShrinkResult {
	res := ShrinkResult{Schedule: clone(s)}
	try := func(c Schedule) bool {
		res.Runs++
		if fails(c) {
			res.Schedule = c
			return true
		}
		return false
	}
	if len(s.Faults) > 0 {
		empty := clone(s)
		empty.Faults = nil
		if try(empty) {
			return res
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range res.Schedule.Faults {
			c := clone(res.Schedule)
			c.Faults = append(c.Faults[:i], c.Faults[i+1:]...)
			if try(c) {
				changed = true
				break
			}
		}
	}
	for i := range res.Schedule.Faults {
		for _, k := range []string{"n", "for", "down", "lag", "recreate"} {
			for _, v := range smaller(res.Schedule.Faults[i], k) {
				c := clone(res.Schedule)
				c.Faults[i].Args[k] = v
				if try(c) {
					break
				}
			}
		}
	}
	return res
}

// smaller are smaller values of f's parameter k, most aggressive first.
func smaller(f Fault, k string) []string {
	v, ok := f.Args[k]
	if !ok {
		return nil
	}
	if k == "n" {
		if n := f.Int("n"); n > 1 {
			return []string{"1", strconv.Itoa(n / 2)}
		}
		return nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > time.Second {
		return []string{time.Second.String(), (d / 2).Round(time.Millisecond).String()}
	}
	return nil
}

func clone(s Schedule) Schedule {
	c := s
	c.Faults = make([]Fault, len(s.Faults))
	for i, f := range s.Faults {
		c.Faults[i] = cloneFault(f)
	}
	return c
}

func cloneFault(f Fault) Fault {
	c := f
	c.Args = make(map[string]string, len(f.Args))
	for k, v := range f.Args {
		c.Args[k] = v
	}
	return c
}
