package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lunadas/upgrade-operator/simulator"
)

// tenure is a replica's acquisition of the Lease (faults.ReplicaHooks.Led).
type tenure struct {
	replica int
	from    time.Duration
}

// StandbyWrote implements Elected: replica 1 (the standby) made a write
// that succeeded.
func (s *Sim) StandbyWrote() error {
	for _, op := range s.History().Ops {
		if op.Replica == 1 && op.Write() && op.OK() {
			return nil
		}
	}
	return fmt.Errorf("the standby replica never wrote")
}

// FrozenLeaderRestarted implements Elected: the replica lease-lost
// stalled is alive again as a later incarnation (faults.Replica exits it
// on "leader election lost" and restarts it).
func (s *Sim) FrozenLeaderRestarted(context.Context) (bool, error) {
	if s.stalled < 0 {
		return false, fmt.Errorf("no leader was stalled (fault lease-lost)")
	}
	r := s.replicas[s.stalled]
	return r.Incarnation > 1 && r.Alive, nil
}

// WritesUnderLease implements Elected from the recorded calls: every
// write that succeeded came from the replica that had last acquired the
// Lease when the write was called.
func (s *Sim) WritesUnderLease() (string, error) {
	var acq []string
	for _, t := range s.tenures {
		acq = append(acq, fmt.Sprintf("replica %d at %s", t.replica, simulator.FormatElapsed(t.from)))
	}
	writes := 0
	for _, op := range s.History().Ops {
		if !op.Write() || !op.OK() {
			continue
		}
		writes++
		holder := -1
		for _, t := range s.tenures {
			if t.from.Seconds() <= op.Call {
				holder = t.replica
			}
		}
		if holder != op.Replica {
			return "", fmt.Errorf("replica %d wrote %s/%s at %.3fs while replica %d held the Lease (acquisitions: %s)",
				op.Replica, op.Kind, op.Name, op.Call, holder, strings.Join(acq, ", "))
		}
	}
	if writes == 0 {
		return "", fmt.Errorf("no replica wrote")
	}
	return fmt.Sprintf("%d writes recorded, each by the last replica to acquire the Lease (acquisitions: %s)", writes, strings.Join(acq, ", ")), nil
}
