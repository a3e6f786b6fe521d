package simulator

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// recorder is a reconcile.Reconciler that records when it ran and answers
// from a script.
type recorder struct {
	s      *Sim
	calls  []string
	answer func(n int, req reconcile.Request) (reconcile.Result, error)
}

func (r *recorder) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.calls = append(r.calls, FormatElapsed(r.s.Elapsed())+" "+req.Name)
	if r.answer == nil {
		return reconcile.Result{}, nil
	}
	return r.answer(len(r.calls), req)
}

func runFor(t *testing.T, s *Sim, d time.Duration) {
	t.Helper()
	if _, err := s.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

func wantCalls(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("reconciles %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reconciles %q, want %q", got, want)
		}
	}
}

func newWidget(name string) *widget {
	return &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestWatchTriggersReconcileAndDedups(t *testing.T) {
	s, c := newTestSim()
	r := &recorder{s: s}
	toOwner := func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: "owner-of-" + o.GetName()}}}
	}
	ctrl := s.AddController("test", r, Watch{Object: &widget{}}, Watch{Object: &corev1.Pod{}, Map: toOwner})
	w := newWidget("a")
	mustCreate(t, c, w)
	w.Spec.Size = 1
	_ = c.Update(context.Background(), w) // same instant: deduplicated
	runFor(t, s, time.Second)
	s.Schedule(2*time.Second, "create pod", func() { mustCreate(t, c, testPod("p", "n")) })
	runFor(t, s, 5*time.Second)
	wantCalls(t, r.calls, "t=0.000s a", "t=3.000s owner-of-p")
	if ctrl.Reconciles() != 2 {
		t.Errorf("Reconciles() = %d, want 2", ctrl.Reconciles())
	}
}

func TestRequeueAfterRunsInVirtualTime(t *testing.T) {
	s, c := newTestSim()
	r := &recorder{s: s, answer: func(n int, _ reconcile.Request) (reconcile.Result, error) {
		if n < 3 {
			return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
		}
		return reconcile.Result{}, nil
	}}
	s.AddController("test", r, Watch{Object: &widget{}})
	mustCreate(t, c, newWidget("a"))
	res, err := s.Run(context.Background(), nil, time.Hour)
	if err != nil || !res.Idle {
		t.Fatalf("run: %v idle=%v", err, res.Idle)
	}
	wantCalls(t, r.calls, "t=0.000s a", "t=30.000s a", "t=60.000s a")
}

func TestErrorBackoffDoublesAndResets(t *testing.T) {
	s, c := newTestSim()
	fail := map[int]bool{1: true, 2: true, 3: true, 4: true, 6: true}
	r := &recorder{s: s, answer: func(n int, _ reconcile.Request) (reconcile.Result, error) {
		if fail[n] {
			return reconcile.Result{}, errors.New("transient")
		}
		if n == 5 {
			return reconcile.Result{RequeueAfter: time.Second}, nil
		}
		return reconcile.Result{}, nil
	}}
	s.AddController("test", r, Watch{Object: &widget{}})
	mustCreate(t, c, newWidget("a"))
	runFor(t, s, time.Minute)
	// 5, 10, 20, 40 ms between failures; success at 75 ms resets the back-off,
	// so the failure after the 1 s requeue retries after 5 ms again.
	wantCalls(t, r.calls, "t=0.000s a", "t=0.005s a", "t=0.015s a", "t=0.035s a", "t=0.075s a", "t=1.075s a", "t=1.080s a")
	if got := []time.Duration{Backoff(0), Backoff(1), Backoff(17), Backoff(40)}; got[0] != 5*time.Millisecond ||
		got[1] != 10*time.Millisecond || got[2] != 655360*time.Millisecond || got[3] != 1000*time.Second {
		t.Errorf("Backoff = %v", got)
	}
}

func TestTerminalErrorIsNotRetried(t *testing.T) {
	s, c := newTestSim()
	r := &recorder{s: s, answer: func(int, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, reconcile.TerminalError(errors.New("bad spec"))
	}}
	s.AddController("test", r, Watch{Object: &widget{}})
	mustCreate(t, c, newWidget("a"))
	runFor(t, s, time.Minute)
	wantCalls(t, r.calls, "t=0.000s a")
}

func TestWatchDelayAndReconcileDuration(t *testing.T) {
	s, c := newTestSim()
	r := &recorder{s: s}
	s.AddController("test", r, Watch{Object: &widget{}}).SetWatchDelay(2 * time.Second).SetReconcileDuration(time.Second)
	mustCreate(t, c, newWidget("a"))
	mustCreate(t, c, newWidget("b"))
	runFor(t, s, time.Minute)
	wantCalls(t, r.calls, "t=2.000s a", "t=3.000s b")
}

func TestCrashAndRestart(t *testing.T) {
	ctx := context.Background()
	s, c := newTestSim()
	r := &recorder{s: s, answer: func(int, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
	}}
	ctrl := s.AddController("test", r, Watch{Object: &widget{}})
	mustCreate(t, c, newWidget("a"))
	runFor(t, s, time.Second)
	ctrl.Crash()
	mustCreate(t, c, newWidget("b")) // not seen: the process is down
	runFor(t, s, 30*time.Second)     // the pending requeue of a is gone
	wantCalls(t, r.calls, "t=0.000s a")
	ctrl.Restart() // initial list: both objects
	runFor(t, s, time.Second)
	wantCalls(t, r.calls, "t=0.000s a", "t=31.000s a", "t=31.000s b")
	if ctrl.Crashed() {
		t.Error("Crashed() after Restart")
	}
	_ = ctx
}

// A paused controller runs no reconcile; what fell due meanwhile (a
// requeue, a watch event) is kept and worked off on Resume, in due order,
// with the queue it had: a paused process is not a dead one.
func TestPauseHoldsReconcilesUntilResume(t *testing.T) {
	s, c := newTestSim()
	r := &recorder{s: s, answer: func(int, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
	}}
	ctrl := s.AddController("test", r, Watch{Object: &widget{}})
	mustCreate(t, c, newWidget("a"))
	runFor(t, s, time.Second)
	ctrl.Pause()
	mustCreate(t, c, newWidget("b")) // seen, queued, not reconciled
	runFor(t, s, 29*time.Second)     // a's requeue at 10 s falls due, held
	wantCalls(t, r.calls, "t=0.000s a")
	if !ctrl.Paused() || ctrl.Crashed() {
		t.Fatalf("Paused() %v, Crashed() %v: want paused, not crashed", ctrl.Paused(), ctrl.Crashed())
	}
	ctrl.Resume()
	runFor(t, s, time.Second)
	wantCalls(t, r.calls, "t=0.000s a", "t=30.000s b", "t=30.000s a")
	runFor(t, s, 10*time.Second) // requeues run again
	wantCalls(t, r.calls, "t=0.000s a", "t=30.000s b", "t=30.000s a", "t=40.000s b", "t=40.000s a")

	ctrl.Pause() // a restart (a new process) is not paused
	ctrl.Crash()
	ctrl.Restart()
	if ctrl.Paused() {
		t.Error("Paused() after Restart")
	}
}

func TestCrashDuringReconcileFailsLaterCalls(t *testing.T) {
	s, c := newTestSim()
	var ctrl *Controller
	var afterCrash error
	r := &recorder{s: s, answer: func(n int, req reconcile.Request) (reconcile.Result, error) {
		ctrl.Crash()
		afterCrash = c.Get(context.Background(), req.NamespacedName, &widget{})
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}}
	ctrl = s.AddController("test", r, Watch{Object: &widget{}})
	mustCreate(t, c, newWidget("a"))
	runFor(t, s, time.Minute)
	if !errors.Is(afterCrash, errProcessKilled) {
		t.Errorf("API call after the crash: %v, want errProcessKilled", afterCrash)
	}
	wantCalls(t, r.calls, "t=0.000s a") // the RequeueAfter of the killed reconcile is lost
}

func TestRunLimitAndStop(t *testing.T) {
	s := New(Options{})
	n := 0
	var tick func()
	tick = func() { n++; s.Schedule(time.Second, "tick", tick) }
	s.Schedule(0, "tick", tick)
	if _, err := s.Run(context.Background(), nil, 10*time.Second); err == nil {
		t.Fatal("endless run did not hit the limit")
	}
	if n != 11 || s.Elapsed() != 10*time.Second {
		t.Errorf("ran %d ticks to %s, want 11 to 10s", n, s.Elapsed())
	}
	res, err := s.Run(context.Background(), func() bool { return n >= 15 }, time.Hour)
	if err != nil || !res.Stopped || n != 15 {
		t.Errorf("stop: %v stopped=%v n=%d", err, res.Stopped, n)
	}
}

func TestVirtualClock(t *testing.T) {
	s := New(Options{})
	clk := s.Clock()
	timer := clk.NewTimer(3 * time.Second)
	after := clk.After(time.Second)
	ticker := clk.NewTicker(2 * time.Second)
	var fired []string
	probe := func() {
		select {
		case <-after:
			fired = append(fired, FormatElapsed(s.Elapsed())+" after")
		default:
		}
		select {
		case <-timer.C():
			fired = append(fired, FormatElapsed(s.Elapsed())+" timer")
		default:
		}
		select {
		case <-ticker.C():
			fired = append(fired, FormatElapsed(s.Elapsed())+" tick")
		default:
		}
	}
	for i := 1; i <= 4; i++ {
		s.Schedule(time.Duration(i)*time.Second+time.Millisecond, "probe", probe) // just after each second
	}
	runFor(t, s, 5*time.Second)
	ticker.Stop()
	wantCalls(t, fired, "t=1.001s after", "t=2.001s tick", "t=3.001s timer", "t=4.001s tick")
	if !clk.Now().Equal(DefaultStart.Add(5*time.Second)) || clk.Since(DefaultStart) != 5*time.Second {
		t.Errorf("Now %s", clk.Now())
	}
	defer func() {
		if recover() == nil {
			t.Error("Sleep did not panic")
		}
	}()
	clk.Sleep(time.Second)
}
