package simulator

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestAPIInterceptorFailsCallsWithoutEffect(t *testing.T) {
	ctx := context.Background()
	s, c := newTestSim()
	w := newWidget("w")
	mustCreate(t, c, w)
	conflicts := 0
	s.SetAPIInterceptor(func(r APIRequest) error {
		if r.Client == "client" && r.Verb == "update" && r.Name == "w" && conflicts < 2 {
			conflicts++
			return apierrors.NewConflict(schema.GroupResource{Resource: "widgets"}, r.Name, errors.New(errModified))
		}
		return nil
	})
	rv := w.ResourceVersion
	w.Spec.Size = 3
	for i := range 2 {
		if err := c.Update(ctx, w); !apierrors.IsConflict(err) {
			t.Fatalf("attempt %d: %v, want injected Conflict", i, err)
		}
	}
	got := newWidget("w")
	_ = c.Get(ctx, client.ObjectKeyFromObject(w), got)
	if got.ResourceVersion != rv || got.Spec.Size != 0 {
		t.Fatalf("failed updates changed the object: rv %s size %d", got.ResourceVersion, got.Spec.Size)
	}
	if err := c.Update(ctx, w); err != nil || w.Spec.Size != 3 {
		t.Fatalf("third attempt: %v", err)
	}
	s.SetAPIInterceptor(nil)
}

func TestSetDeliveryDropsAndDelays(t *testing.T) {
	s, c := newTestSim()
	r := &recorder{s: s}
	ctrl := s.AddController("test", r, Watch{Object: &widget{}})
	ctrl.SetDelivery(func(ev WatchEvent) (time.Duration, bool) {
		return 3 * time.Second, ev.Object.GetName() == "lost"
	})
	mustCreate(t, c, newWidget("lost"))
	mustCreate(t, c, newWidget("late"))
	runFor(t, s, time.Minute)
	wantCalls(t, r.calls, "t=3.000s late")
}

func TestAmbiguousWriteCommitsThenFails(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestSim()
	c := s.ClientFor("operator")
	w := newWidget("w")
	mustCreate(t, c, w)
	var seen []string
	s.Subscribe(func(ev WatchEvent) { seen = append(seen, string(ev.Type)+" "+ev.Object.GetName()) })
	timeout := apierrors.NewTimeoutError("request timed out", 1)
	s.SetAPIInterceptor(func(r APIRequest) error {
		if r.Client == "operator" && (r.Verb == "update" || r.Verb == "get") {
			return Ambiguous(timeout)
		}
		return nil
	})
	w.Spec.Size = 3
	if err := c.Update(ctx, w); !apierrors.IsTimeout(err) {
		t.Fatalf("update: %v, want the injected timeout", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), newWidget("w")); !apierrors.IsTimeout(err) {
		t.Fatalf("get: %v, want the injected timeout (a read has nothing to commit)", err)
	}
	s.SetAPIInterceptor(nil)
	got := newWidget("w")
	if err := s.Client().Get(ctx, client.ObjectKeyFromObject(w), got); err != nil || got.Spec.Size != 3 {
		t.Fatalf("the ambiguous update was not committed: %v size %d", err, got.Spec.Size)
	}
	if len(seen) != 1 || seen[0] != "MODIFIED w" {
		t.Fatalf("watch events %q, want the committed update's", seen)
	}
}

func TestClientForNamesTheCaller(t *testing.T) {
	s, _ := newTestSim()
	var callers []string
	s.SetAPIInterceptor(func(r APIRequest) error { callers = append(callers, r.Client+" "+r.Verb); return nil })
	mustCreate(t, s.ClientFor("someone"), newWidget("a"))
	mustCreate(t, s.Client(), newWidget("b"))
	if s.ClientFor("someone") != s.ClientFor("someone") {
		t.Fatal("ClientFor gives a new client for the same name")
	}
	if len(callers) != 2 || callers[0] != "someone create" || callers[1] != "client create" {
		t.Fatalf("callers %q", callers)
	}
}

func TestInjectDeliversThroughTheWatches(t *testing.T) {
	s, c := newTestSim()
	r := &recorder{s: s}
	ctrl := s.AddController("test", r, Watch{Object: &widget{}})
	ctrl.SetDelivery(func(WatchEvent) (time.Duration, bool) { return 0, true })
	var held []WatchEvent
	s.Subscribe(func(ev WatchEvent) { held = append(held, ev) })
	mustCreate(t, c, newWidget("w"))
	runFor(t, s, time.Second)
	wantCalls(t, r.calls)
	s.Schedule(2*time.Second, "informer catches up", func() {
		for _, ev := range held {
			ctrl.Inject(ev)
		}
	})
	runFor(t, s, time.Minute)
	wantCalls(t, r.calls, "t=3.000s w")
	ctrl.Crash()
	ctrl.Inject(held[0])
	runFor(t, s, time.Minute)
	wantCalls(t, r.calls, "t=3.000s w")
}
