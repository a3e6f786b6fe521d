package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Elected is implemented by the clusters whose operator replicas ran
// under leader election (SimOnly.AddStandbyReplica): the simulator's
// (faults.Replica) and the real backend's out-of-process ones
// (real_election.go). The checks read what each backend can attribute to
// a replica: the simulator records every call of every replica; a real
// operator process's calls are not recorded, so its image and status
// writes are read from its own log ("image written", "status written").
type Elected interface {
	// StandbyWrote is nil once a replica other than the first leader
	// wrote.
	StandbyWrote() error
	// FrozenLeaderRestarted holds once the leader that lease-lost stalled
	// has exited and its replica runs again as a new process.
	FrozenLeaderRestarted(ctx context.Context) (bool, error)
	// WritesUnderLease checks that every write it can attribute came from
	// the replica that held the Lease at that moment (the last to acquire
	// it); what says what was checked.
	WritesUnderLease() (what string, err error)
}

var (
	_ Elected = (*Sim)(nil)
	_ Elected = (*Real)(nil)
)

// electing reports whether r runs two operator processes under election.
func (r *Real) electing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.el != nil
}

func (r *Real) election() (*election, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.el == nil {
		return nil, fmt.Errorf("no leader election: the step \"a second operator replica is on standby under leader election\" comes first")
	}
	return r.el, nil
}

// StandbyWrote implements Elected: a process other than the first to
// acquire the Lease logged an image write.
func (r *Real) StandbyWrote() error {
	el, err := r.election()
	if err != nil {
		return err
	}
	evs, err := el.events()
	if err != nil {
		return err
	}
	var first *electedProc
	for _, ev := range evs {
		switch {
		case ev.msg == logAcquired && first == nil:
			first = ev.e
		case ev.msg == logWritten && first != nil && ev.e != first:
			return nil
		}
	}
	return fmt.Errorf("no operator process but the first leader (%v) logged an image write (logs in %s)", first, r.logs)
}

// FrozenLeaderRestarted implements Elected.
func (r *Real) FrozenLeaderRestarted(context.Context) (bool, error) {
	el, err := r.election()
	if err != nil {
		return false, err
	}
	el.mu.Lock()
	defer el.mu.Unlock()
	f := el.frozen
	if f == nil {
		return false, fmt.Errorf("no leader was frozen (fault lease-lost)")
	}
	if f.p.Exited() == nil {
		return false, nil
	}
	now := el.live[f.slot]
	return now.incarnation > f.incarnation && now.p.Exited() == nil, nil
}

// WritesUnderLease implements Elected from the processes' logs: each
// "image written" and "status written" line must have been sent by the
// process that had last acquired the Lease ("acquired lease" lines), and
// in resourceVersion order (etcd's commit order) no write of an earlier
// holder may follow one of a later holder. The send time catches a resumed
// old leader that wrote after the new one acquired; the resourceVersion
// order catches a write that was sent in time but committed after the new
// leader's, and lets a write frozen in flight (sent before the freeze,
// logged after it) pass, as it committed under the old tenure.
func (r *Real) WritesUnderLease() (string, error) {
	el, err := r.election()
	if err != nil {
		return "", err
	}
	evs, err := el.events()
	if err != nil {
		return "", err
	}
	what, err := writesUnderLease(evs, r.start)
	if err != nil {
		return "", fmt.Errorf("%w (logs in %s)", err, r.logs)
	}
	return what, nil
}

// writesUnderLease checks the processes' acquisitions, image and status
// writes (times shown from start; a write's time is when it was sent, its
// log time when the line has no send time): each write must be by the
// process that acquired the Lease last before it was sent, and the
// tenures of the writes must not go back in resourceVersion order.
func writesUnderLease(evs []event, start time.Time) (string, error) {
	type acquisition struct {
		at time.Time
		e  *electedProc
	}
	var acqs []acquisition
	var acq []string
	for _, ev := range evs {
		if ev.msg == logAcquired {
			acqs = append(acqs, acquisition{ev.at, ev.e})
			acq = append(acq, fmt.Sprintf("replica %d.%d at %s", ev.e.slot, ev.e.incarnation, ev.at.Sub(start).Round(time.Millisecond)))
		}
	}
	since := func(t time.Time) string { return t.Sub(start).Round(time.Millisecond).String() }
	name := func(e *electedProc) string { return fmt.Sprintf("replica %d.%d", e.slot, e.incarnation) }
	type write struct {
		event
		tenure int
	}
	var ws []write
	images, statuses := 0, 0
	for _, ev := range evs {
		if ev.msg != logWritten && ev.msg != logStatus {
			continue
		}
		if ev.msg == logWritten {
			images++
		} else {
			statuses++
		}
		sent := ev.at
		if !ev.sent.IsZero() {
			sent = ev.sent
		}
		tenure := -1
		for i, a := range acqs {
			if !a.at.After(sent) {
				tenure = i
			}
		}
		if tenure < 0 || acqs[tenure].e != ev.e {
			held := "no process"
			if tenure >= 0 {
				held = name(acqs[tenure].e)
			}
			return "", fmt.Errorf("operator %s sent the write %s at %s while %s held the Lease (acquisitions: %s)",
				name(ev.e), ev.what, since(sent), held, strings.Join(acq, ", "))
		}
		ws = append(ws, write{ev, tenure})
	}
	if images == 0 {
		return "", fmt.Errorf("no operator process logged an image write")
	}
	for _, w := range ws {
		if w.rv == 0 {
			return "", fmt.Errorf("operator %s logged the write %s without a resourceVersion", name(w.e), w.what)
		}
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].rv < ws[j].rv })
	for i := 1; i < len(ws); i++ {
		if prev, w := ws[i-1], ws[i]; w.tenure < prev.tenure {
			return "", fmt.Errorf("operator %s's write %s (resourceVersion %d) committed after %s's write %s (resourceVersion %d), which acquired the Lease after it (acquisitions: %s)",
				name(w.e), w.what, w.rv, name(prev.e), prev.what, prev.rv, strings.Join(acq, ", "))
		}
	}
	return fmt.Sprintf("%d image writes and %d status writes from the processes' logs, each sent by the last process to acquire the Lease and committed in the order of the tenures (acquisitions: %s)", images, statuses, strings.Join(acq, ", ")), nil
}
