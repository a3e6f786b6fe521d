package simulator

import (
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WatchEvent is one committed change to the store.
type WatchEvent struct {
	// Type is watch.Added, watch.Modified or watch.Deleted.
	Type watch.EventType
	// Object is the new version (for Deleted, the last one). Subscribers
	// share it: treat it as read-only.
	Object client.Object
	// Old is the previous version; nil for Added.
	Old client.Object
	// Time is the virtual time of the commit.
	Time time.Time
}

// Subscribe registers fn to be called with every committed change, in
// commit order, synchronously inside the write that made it. fn must not
// write to the store; Schedule the reaction instead.
func (s *Sim) Subscribe(fn func(WatchEvent)) { s.subs = append(s.subs, fn) }
