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
