package simulator

import (
	"time"

	"k8s.io/utils/clock"
)

var _ clock.WithTickerAndDelayedExecution = (*virtualClock)(nil)

// virtualClock implements k8s.io/utils/clock on the simulation's time: timers
// and tickers are simulation events, so a reconciler that selects on them
// without blocking (or a model that registers AfterFunc) sees them fire in
// virtual time.
type virtualClock struct{ s *Sim }

func (c *virtualClock) Now() time.Time { return c.s.now }

func (c *virtualClock) Since(t time.Time) time.Duration { return c.s.now.Sub(t) }

func (c *virtualClock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

func (c *virtualClock) NewTimer(d time.Duration) clock.Timer {
	t := &virtualTimer{s: c.s, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// AfterFunc runs f as a simulation event after d (on the simulation's
// goroutine, not a new one).
func (c *virtualClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &virtualTimer{s: c.s, fn: f}
	t.Reset(d)
	return t
}

// Sleep cannot block the simulation's only goroutine; it panics so the
// mistake shows at once. Reconcilers return ctrl.Result{RequeueAfter: d}.
func (c *virtualClock) Sleep(d time.Duration) {
	panic("simulator: clock.Sleep(" + d.String() + ") would block the only goroutine; return a RequeueAfter instead")
}

func (c *virtualClock) Tick(d time.Duration) <-chan time.Time { return c.NewTicker(d).C() }

func (c *virtualClock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("simulator: non-positive interval for NewTicker")
	}
	t := &virtualTicker{s: c.s, d: d, ch: make(chan time.Time, 1)}
	t.arm()
	return t
}

// virtualTimer fires once: it sends on ch (dropping the value if the buffer
// is full) or calls fn. gen invalidates events of earlier Resets.
type virtualTimer struct {
	s      *Sim
	ch     chan time.Time
	fn     func()
	gen    int
	active bool
}

func (t *virtualTimer) C() <-chan time.Time { return t.ch }

func (t *virtualTimer) Stop() bool {
	was := t.active
	t.active = false
	t.gen++
	return was
}

func (t *virtualTimer) Reset(d time.Duration) bool {
	was := t.Stop()
	t.active = true
	gen := t.gen
	t.s.Schedule(d, "clock timer", func() {
		if gen != t.gen || !t.active {
			return
		}
		t.active = false
		if t.fn != nil {
			t.fn()
			return
		}
		select {
		case t.ch <- t.s.now:
		default:
		}
	})
	return was
}

// virtualTicker sends on ch every d of virtual time, dropping ticks a slow
// reader missed, as time.Ticker does.
type virtualTicker struct {
	s       *Sim
	d       time.Duration
	ch      chan time.Time
	stopped bool
}

func (t *virtualTicker) C() <-chan time.Time { return t.ch }

func (t *virtualTicker) Stop() { t.stopped = true }

func (t *virtualTicker) arm() {
	t.s.Schedule(t.d, "clock ticker", func() {
		if t.stopped {
			return
		}
		select {
		case t.ch <- t.s.now:
		default:
		}
		t.arm()
	})
}
