package simulator

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var testLease = types.NamespacedName{Namespace: "kube-system", Name: "lock"}

// electionRig runs candidates for testLease and fails the test the moment
// two of them lead at once. A cut candidate's API calls time out.
type electionRig struct {
	t       *testing.T
	s       *Sim
	cut     map[string]bool
	leading map[string]bool
	started map[string][]time.Duration // when each identity started leading
	stopped map[string][]time.Duration
}

func newElectionRig(t *testing.T, seed int64) *electionRig {
	r := &electionRig{t: t, s: New(Options{Seed: seed}), cut: map[string]bool{}, leading: map[string]bool{},
		started: map[string][]time.Duration{}, stopped: map[string][]time.Duration{}}
	r.s.SetAPIInterceptor(func(req APIRequest) error {
		if r.cut[req.Client] {
			return apierrors.NewTimeoutError("network cut (test)", 1)
		}
		return nil
	})
	return r
}

// candidate makes an elector for id; onStop (may be nil) runs after it
// stops leading.
func (r *electionRig) candidate(id string, release bool, onStop func()) *LeaderElector {
	r.t.Helper()
	le, err := r.s.NewLeaderElector(LeaderElectionConfig{Lease: testLease, Identity: id, Client: r.s.ClientFor(id), ReleaseOnCancel: release,
		Callbacks: LeaderCallbacks{
			OnStartedLeading: func() {
				for other, on := range r.leading {
					if on {
						r.t.Errorf("at %s %s starts leading while %s leads", FormatElapsed(r.s.Elapsed()), id, other)
					}
				}
				r.leading[id] = true
				r.started[id] = append(r.started[id], r.s.Elapsed())
			},
			OnStoppedLeading: func() {
				if r.leading[id] {
					r.stopped[id] = append(r.stopped[id], r.s.Elapsed())
				}
				r.leading[id] = false
				if onStop != nil {
					onStop()
				}
			},
		}})
	if err != nil {
		r.t.Fatal(err)
	}
	return le
}

// kill kills le's process: it leads no more, and says nothing.
func (r *electionRig) kill(le *LeaderElector) {
	le.Kill()
	r.leading[le.Identity()] = false
}

func (r *electionRig) at(d time.Duration, what string, fn func()) {
	r.s.Schedule(d-r.s.Elapsed(), what, fn)
}

func (r *electionRig) runTo(d time.Duration) {
	r.t.Helper()
	if _, err := r.s.RunFor(context.Background(), d-r.s.Elapsed()); err != nil {
		r.t.Fatal(err)
	}
}

func (r *electionRig) lease() coordinationv1.Lease {
	r.t.Helper()
	var l coordinationv1.Lease
	if err := r.s.Client().Get(context.Background(), testLease, &l); err != nil {
		r.t.Fatal(err)
	}
	return l
}

func TestLeaderElectorCreatesTheLeaseAndRenewsIt(t *testing.T) {
	r := newElectionRig(t, 1)
	a, b := r.candidate("a", false, nil), r.candidate("b", false, nil)
	a.Run()
	b.Run()
	r.runTo(31 * time.Second)
	if got := r.started["a"]; len(got) != 1 || got[0] != 0 {
		t.Fatalf("a started leading at %v, want once at 0s", got)
	}
	if len(r.started["b"]) != 0 || b.GetLeader() != "a" {
		t.Fatalf("b led at %v and observes leader %q; want never, and a", r.started["b"], b.GetLeader())
	}
	l := r.lease()
	if ptr.Deref(l.Spec.HolderIdentity, "") != "a" || ptr.Deref(l.Spec.LeaseTransitions, -1) != 0 ||
		ptr.Deref(l.Spec.LeaseDurationSeconds, 0) != 15 {
		t.Fatalf("lease spec %+v: want holder a, 0 transitions, 15 s", l.Spec)
	}
	// Renewed every RetryPeriod: the last renewal at 30 s; acquired at 0 s.
	if renewed := l.Spec.RenewTime.Sub(DefaultStart); renewed != 30*time.Second {
		t.Fatalf("lease renewed last at %s, want 30s", renewed)
	}
	if !l.Spec.AcquireTime.Time.Equal(DefaultStart) {
		t.Fatalf("lease acquired at %s, want at the start", l.Spec.AcquireTime)
	}
}

func TestLeaderElectorTakesOnlyAnExpiredLease(t *testing.T) {
	r := newElectionRig(t, 2)
	a, b := r.candidate("a", false, nil), r.candidate("b", false, nil)
	a.Run()
	b.Run()
	r.at(19*time.Second, "kill a", func() { r.kill(a) }) // a renewed last at 18 s
	r.runTo(60 * time.Second)
	got := r.started["b"]
	// b must wait LeaseDuration after the attempt that saw the 18 s renewal
	// (18–22.4 s), then until an attempt of its own (every 2–4.4 s).
	if len(got) != 1 || got[0] < 33*time.Second || got[0] >= 42*time.Second {
		t.Fatalf("b started leading at %v, want once in [33s, 42s)", got)
	}
	l := r.lease()
	if ptr.Deref(l.Spec.HolderIdentity, "") != "b" || ptr.Deref(l.Spec.LeaseTransitions, 0) != 1 {
		t.Fatalf("lease spec %+v: want holder b after 1 transition", l.Spec)
	}
}

// A candidate judges expiry by when it saw the record change, not by the
// holder's renewTime: one that starts long after the holder died still
// waits a full LeaseDuration.
func TestLeaderElectorJudgesExpiryByItsOwnClock(t *testing.T) {
	r := newElectionRig(t, 3)
	a, b := r.candidate("a", false, nil), r.candidate("b", false, nil)
	a.Run()
	r.at(time.Second, "kill a", func() { r.kill(a) })
	r.at(60*time.Second, "start b", b.Run)
	r.runTo(90 * time.Second)
	if got := r.started["b"]; len(got) != 1 || got[0] < 75*time.Second || got[0] >= 80*time.Second {
		t.Fatalf("b started leading at %v, want once in [75s, 80s): 15 s after it first saw the lease", got)
	}
}

func TestLeaderElectorReleaseOnCancel(t *testing.T) {
	for _, release := range []bool{true, false} {
		t.Run(fmt.Sprintf("release=%v", release), func(t *testing.T) {
			r := newElectionRig(t, 4)
			a, b := r.candidate("a", release, nil), r.candidate("b", false, nil)
			a.Run()
			b.Run()
			r.at(10*time.Second, "cancel a", a.Cancel)
			r.runTo(60 * time.Second)
			if got := r.stopped["a"]; len(got) != 1 || got[0] != 10*time.Second {
				t.Fatalf("a stopped leading at %v, want once at 10s", got)
			}
			got := r.started["b"]
			lo, hi := 10*time.Second, 15*time.Second // b's next attempt takes the released lease
			if !release {
				lo, hi = 25*time.Second, 34*time.Second
			}
			if len(got) != 1 || got[0] < lo || got[0] >= hi {
				t.Fatalf("b started leading at %v, want once in [%s, %s)", got, lo, hi)
			}
		})
	}
}

// A leader cut off from the API server stops leading RenewDeadline after
// its failing poll began (at most RetryPeriod+RenewDeadline after its last
// renewal), before any other candidate can take the lease; a shorter cut
// keeps it leading. A stopped leader's process restarts as a new
// candidate. The rig fails the test if two ever lead at once.
func TestLeaderElectorNeverTwoLeaders(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		for _, cut := range []time.Duration{5 * time.Second, 11 * time.Second, 13 * time.Second, 30 * time.Second} {
			r := newElectionRig(t, seed)
			var restart func(name string, n int) *LeaderElector
			restart = func(name string, n int) *LeaderElector {
				id := fmt.Sprintf("%s_%d", name, n)
				var le *LeaderElector
				le = r.candidate(id, true, func() {
					r.s.Schedule(time.Second, "restart "+name, func() { restart(name, n+1) })
				})
				le.Run()
				return le
			}
			for _, name := range []string{"a", "b", "c"} {
				restart(name, 1)
			}
			start := time.Duration(20+seed%7) * time.Second
			var leader string
			r.at(start, "cut the leader", func() {
				for id, on := range r.leading {
					if on {
						leader = id
					}
				}
				r.cut[leader] = true
				r.s.Schedule(cut, "mend", func() { r.cut[leader] = false })
			})
			r.runTo(start + 90*time.Second)
			stopped := r.stopped[leader]
			switch {
			case cut < DefaultRenewDeadline && len(stopped) != 0:
				t.Errorf("seed %d: a %s cut stopped the leader %s at %v", seed, cut, leader, stopped)
			case cut >= DefaultRetryPeriod+DefaultRenewDeadline && (len(stopped) != 1 || stopped[0] > start+DefaultRetryPeriod+DefaultRenewDeadline):
				t.Errorf("seed %d: a %s cut at %s stopped the leader %s at %v, want once by %s", seed, cut, start, leader, stopped, start+12*time.Second)
			}
			others := 0
			for id, at := range r.started {
				if id != leader && len(at) > 0 {
					others++
				}
			}
			if cut >= DefaultRetryPeriod+DefaultRenewDeadline && others == 0 {
				t.Errorf("seed %d: no other candidate led after a %s cut of %s", seed, cut, leader)
			}
		}
	}
}

// A leader paused (SIGSTOP) past the lease keeps believing it leads: the
// standby takes the lease while it is stopped, and on resume the paused
// leader learns it lost only by a failed renew poll — it leads on until
// that poll's renew deadline, RenewDeadline after the resume (client-go's
// renew), although the standby has led for longer already. The rig's
// two-leaders check does not count the paused leader: this is the window
// the operator's lease guard closes. A pause shorter than the lease is survived: the resumed leader
// renews at once.
func TestLeaderElectorPausedLeaderLeadsUntilItsNextRenewFails(t *testing.T) {
	r := newElectionRig(t, 5)
	var lostAt time.Duration
	a := r.candidate("a", true, func() { lostAt = r.s.Elapsed() })
	b := r.candidate("b", false, nil)
	a.Run()
	b.Run()
	r.at(11*time.Second, "pause a", func() { a.Pause(); r.leading["a"] = false }) // renewed last at 10 s
	r.runTo(40 * time.Second)
	if got := r.started["b"]; len(got) != 1 || got[0] < 25*time.Second || got[0] >= 35*time.Second {
		t.Fatalf("b started leading at %v, want once in [25s, 35s)", got)
	}
	if !a.Leading() || lostAt != 0 {
		t.Fatalf("paused a: Leading() %v, stopped at %s; want still leading", a.Leading(), lostAt)
	}
	r.at(41*time.Second, "resume a", a.Resume)
	r.runTo(50 * time.Second)
	if !a.Leading() || a.GetLeader() != "b" {
		t.Fatalf("at 50 s a leads %v and observes %q; want leading (its poll's deadline is 51 s), observing b", a.Leading(), a.GetLeader())
	}
	r.runTo(60 * time.Second)
	if a.Leading() || lostAt != 51*time.Second {
		t.Fatalf("a stopped leading at %s (Leading() %v); want at 51s, RenewDeadline after the resume", lostAt, a.Leading())
	}
	if l := r.lease(); ptr.Deref(l.Spec.HolderIdentity, "") != "b" {
		t.Fatalf("lease holder %q: want b (a's release must not touch another's lease)", ptr.Deref(l.Spec.HolderIdentity, ""))
	}

	short := newElectionRig(t, 5)
	c, d := short.candidate("c", false, nil), short.candidate("d", false, nil)
	c.Run()
	d.Run()
	short.at(11*time.Second, "pause c", c.Pause)
	short.at(21*time.Second, "resume c", c.Resume) // 10 s: less than the lease
	short.runTo(60 * time.Second)
	if len(short.started["d"]) != 0 || len(short.stopped["c"]) != 0 || !c.Leading() {
		t.Fatalf("d led at %v, c stopped at %v: want c leading throughout", short.started["d"], short.stopped["c"])
	}
}

// A leader paused in the middle of a failing renew poll, across the
// poll's deadline, ends leading on resume without another attempt: the
// poll's context timed out while it was stopped
// (wait.loopConditionUntilContext checks ctx.Err() first).
func TestLeaderElectorPausedAcrossItsRenewDeadlineStopsOnResume(t *testing.T) {
	r := newElectionRig(t, 6)
	a := r.candidate("a", false, nil)
	a.Run()
	r.at(11*time.Second, "cut a", func() { r.cut["a"] = true }) // the poll of 12 s fails
	r.at(13*time.Second, "pause a", a.Pause)                    // its retry at 14 s is held
	r.at(30*time.Second, "resume a", func() { r.cut["a"] = false; a.Resume() })
	r.runTo(40 * time.Second)
	if got := r.stopped["a"]; len(got) != 1 || got[0] != 30*time.Second {
		t.Fatalf("a stopped leading at %v, want once at 30s (the resume)", got)
	}
	if l := r.lease(); !l.Spec.RenewTime.Time.Equal(DefaultStart.Add(10 * time.Second)) {
		t.Fatalf("lease renewed last at %s, want 10s: no attempt after the deadline", l.Spec.RenewTime.Sub(DefaultStart))
	}
}

func TestNewLeaderElectorRefusesWhatClientGoRefuses(t *testing.T) {
	s := New(Options{})
	c := s.Client()
	for what, cfg := range map[string]LeaderElectionConfig{
		"lease duration not above renew deadline": {Identity: "a", Client: c, LeaseDuration: 10 * time.Second},
		"renew deadline not above 1.2 retries":    {Identity: "a", Client: c, RenewDeadline: 2 * time.Second},
		"negative retry period":                   {Identity: "a", Client: c, RetryPeriod: -time.Second},
		"no identity":                             {Client: c},
		"no client":                               {Identity: "a"},
	} {
		if _, err := s.NewLeaderElector(cfg); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
	if _, err := s.NewLeaderElector(LeaderElectionConfig{Identity: "a", Client: c}); err != nil {
		t.Errorf("controller-runtime's defaults refused: %v", err)
	}
}
