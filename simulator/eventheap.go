package simulator

import (
	"container/heap"
	"time"
)

// event is one scheduled action: fn runs at virtual time at; seq breaks ties
// so events scheduled earlier run first. A watch delivery (Controller.deliver,
// the most frequent event) is held in the event itself instead of a closure:
// fn is nil and to is set — events are reused, so it allocates nothing.
type event struct {
	at   time.Time
	seq  uint64
	what string
	fn   func()
	to   *Controller
	d    delivery
	// kick: the event is to's worker start (kick), due in epoch d.epoch.
	kick bool
}

// delivery is a watch event on its way to a controller: w's event ev, sent
// in the controller's epoch (a crash in between drops it).
type delivery struct {
	w     boundWatch
	ev    WatchEvent
	epoch int
}

// run runs the event's action.
func (e *event) run() {
	if e.fn != nil {
		e.fn()
		return
	}
	if e.kick {
		if e.to.epoch == e.d.epoch {
			e.to.work()
		}
		return
	}
	e.to.arrive(&e.d)
}

// eventHeap is a min-heap of events ordered by (at, seq).
type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }

func (h eventHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}

func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *eventHeap) Push(x any) { *h = append(*h, x.(*event)) }

func (h *eventHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return e
}

func (h *eventHeap) push(e *event) { heap.Push(h, e) }

func (h *eventHeap) pop() *event { return heap.Pop(h).(*event) }

func (h eventHeap) peek() *event {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}
