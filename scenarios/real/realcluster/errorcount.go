package realcluster

import (
	"bytes"
	"io"
	"sync"
)

// ReconcilerErrorMarker is what controller-runtime logs when a Reconcile
// returns an error (internal/controller: "Reconciler error").
const ReconcilerErrorMarker = "Reconciler error"

// ErrorCounter is an io.Writer for the manager's logger that passes every
// write on to W and counts the log entries containing
// ReconcilerErrorMarker, so a run can report how many reconciles failed
// (routine optimistic-lock conflicts should not show up here). Safe for
// concurrent use.
type ErrorCounter struct {
	W  io.Writer
	mu sync.Mutex
	n  int
}

// Write counts the marker's occurrences in p and writes p to W.
func (c *ErrorCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.n += bytes.Count(p, []byte(ReconcilerErrorMarker))
	c.mu.Unlock()
	return c.W.Write(p)
}

// Count is how many "Reconciler error" entries were written so far.
func (c *ErrorCounter) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
