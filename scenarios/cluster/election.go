package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Elected is implemented by the clusters whose operator replicas ran
// under leader election (SimOnly.AddStandbyReplica): the simulator's
// (faults.Replica) and the real backend's out-of-process ones
// (real_election.go). The checks read what each backend can attribute to
// a replica: the simulator records every call of every replica; a real
// operator process's calls are not recorded, so its image writes are
// read from its own log ("image written"), its status patches not at all.
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
// "image written" line must come after the same process's last "acquired
// lease" line and before any other process's next one. The log time of a
// write is when its PATCH had returned, so a write that a resumed old
// leader made after the new leader acquired is caught; a status patch is
// not logged and is not checked here (the judge checks what the phases
// claimed, from the event log).
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

// writesUnderLease walks the processes' acquisitions and image writes in
// time (times shown from start): each write must be by the process that
// acquired the Lease last.
func writesUnderLease(evs []event, start time.Time) (string, error) {
	var holder *electedProc
	var acq []string
	writes := 0
	for _, ev := range evs {
		switch ev.msg {
		case logAcquired:
			holder = ev.e
			acq = append(acq, fmt.Sprintf("replica %d.%d at %s", ev.e.slot, ev.e.incarnation, ev.at.Sub(start).Round(time.Millisecond)))
		case logWritten:
			writes++
			if holder != ev.e {
				held := "no process"
				if holder != nil {
					held = fmt.Sprintf("replica %d.%d", holder.slot, holder.incarnation)
				}
				return "", fmt.Errorf("operator replica %d.%d logged the write %s at %s while %s held the Lease (acquisitions: %s)",
					ev.e.slot, ev.e.incarnation, ev.what, ev.at.Sub(start).Round(time.Millisecond), held, strings.Join(acq, ", "))
			}
		}
	}
	if writes == 0 {
		return "", fmt.Errorf("no operator process logged an image write")
	}
	return fmt.Sprintf("%d image writes from the processes' logs, each by the last process to acquire the Lease (acquisitions: %s); status patches are not logged, so not attributed", writes, strings.Join(acq, ", ")), nil
}
