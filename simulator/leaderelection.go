package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Leader election timings: controller-runtime's manager defaults
// (pkg/manager/internal.go defaultLeaseDuration, defaultRenewDeadline,
// defaultRetryPeriod), which it passes to client-go's leader elector.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// LeaderElectionJitterFactor is client-go's leaderelection.JitterFactor:
// a candidate waits RetryPeriod plus up to this factor of it between
// attempts to acquire.
const LeaderElectionJitterFactor = 1.2

// LeaderElectionConfig is client-go's leaderelection.LeaderElectionConfig
// with a resourcelock.LeaseLock, for one candidate (one process).
type LeaderElectionConfig struct {
	// Lease is the Lease the candidates contend for (LeaseLock.LeaseMeta).
	Lease types.NamespacedName
	// Identity is this candidate's holderIdentity
	// (ResourceLockConfig.Identity; controller-runtime uses
	// hostname_uuid, so a restarted process is a new identity).
	Identity string
	// Client makes the lock's API calls. Give each candidate its own
	// (Sim.ClientFor) so that faults can cut one process off.
	Client client.Client
	// LeaseDuration is how long a candidate waits, by its own clock, after
	// last observing a change of the lease record before it may take the
	// lease. Zero means DefaultLeaseDuration.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader retries renewing before it
	// gives up leading. Zero means DefaultRenewDeadline.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between attempts. Zero means
	// DefaultRetryPeriod.
	RetryPeriod time.Duration
	// ReleaseOnCancel releases the lease (empties the holder, duration 1 s)
	// when leading ends without the process dying.
	ReleaseOnCancel bool
	// Callbacks are run synchronously, in virtual time.
	Callbacks LeaderCallbacks
}

// LeaderCallbacks is client-go's leaderelection.LeaderCallbacks. As in
// client-go, OnStoppedLeading runs whenever Run ends (leadership lost or
// Cancel), also when the candidate never led. controller-runtime's manager
// starts its controllers in OnStartedLeading and exits the process
// ("leader election lost") in OnStoppedLeading.
type LeaderCallbacks struct {
	OnStartedLeading func()
	OnStoppedLeading func()
	// OnNewLeader is called when the candidate observes a holder other
	// than the last one it reported, itself included.
	OnNewLeader func(identity string)
}

// LeaderElector is client-go's leaderelection.LeaderElector in virtual
// time, on a coordination.k8s.io/v1 Lease in the simulator's store. Its
// loops are simulation events, not goroutines: the acquire loop retries
// every RetryPeriod with client-go's jitter (drawn from Sim.Rand), the
// renew loop polls every RetryPeriod and gives up RenewDeadline after the
// start of a poll that never succeeded. A candidate judges expiry by its
// own clock — LeaseDuration after it last saw the record change — never by
// the holder's renewTime. Because RenewDeadline+RetryPeriod <
// LeaseDuration with the defaults, a leader that cannot renew stops before
// any other candidate can take the lease.
type LeaderElector struct {
	s   *Sim
	cfg LeaderElectionConfig

	observedRecord    rl.LeaderElectionRecord
	observedRawRecord []byte
	observedTime      time.Time
	reportedLeader    string
	lease             *coordinationv1.Lease // LeaseLock.lease: the last read or written

	running, leading bool
	// run counts Run and Cancel/Kill calls; events of an older run are dropped.
	run int
	// pollStart is when the renew loop's current poll began.
	pollStart time.Time
	// paused holds the loops' events that fall due between Pause and
	// Resume (held, in due order).
	paused bool
	held   []heldEvent
}

type heldEvent struct {
	what string
	fn   func()
}

// NewLeaderElector mirrors leaderelection.NewLeaderElector: it refuses
// the configurations client-go refuses.
func (s *Sim) NewLeaderElector(cfg LeaderElectionConfig) (*LeaderElector, error) {
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.RenewDeadline == 0 {
		cfg.RenewDeadline = DefaultRenewDeadline
	}
	if cfg.RetryPeriod == 0 {
		cfg.RetryPeriod = DefaultRetryPeriod
	}
	switch {
	case cfg.LeaseDuration < 0 || cfg.RenewDeadline < 0 || cfg.RetryPeriod < 0:
		return nil, fmt.Errorf("leader election of %s: durations must be greater than zero", cfg.Lease)
	case cfg.LeaseDuration <= cfg.RenewDeadline:
		return nil, fmt.Errorf("leader election of %s: leaseDuration must be greater than renewDeadline", cfg.Lease)
	case cfg.RenewDeadline <= time.Duration(LeaderElectionJitterFactor*float64(cfg.RetryPeriod)):
		return nil, fmt.Errorf("leader election of %s: renewDeadline must be greater than retryPeriod*JitterFactor", cfg.Lease)
	case cfg.Identity == "":
		return nil, fmt.Errorf("leader election of %s: Lock identity is empty", cfg.Lease)
	case cfg.Client == nil:
		return nil, fmt.Errorf("leader election of %s: give the candidate %s a client", cfg.Lease, cfg.Identity)
	}
	return &LeaderElector{s: s, cfg: cfg}, nil
}

// Identity is the candidate's holderIdentity.
func (le *LeaderElector) Identity() string { return le.cfg.Identity }

// Leading reports whether the candidate is between OnStartedLeading and
// OnStoppedLeading (its controllers run).
func (le *LeaderElector) Leading() bool { return le.leading }

// IsLeader mirrors LeaderElector.IsLeader: the last observed record names
// this candidate.
func (le *LeaderElector) IsLeader() bool {
	return le.observedRecord.HolderIdentity == le.cfg.Identity
}

// GetLeader mirrors LeaderElector.GetLeader: the last observed holder.
func (le *LeaderElector) GetLeader() string { return le.observedRecord.HolderIdentity }

// Run mirrors LeaderElector.Run: acquire, then OnStartedLeading and renew
// until renewing fails, then OnStoppedLeading. Its first attempt is made
// now; Run returns at once (the loops are events).
func (le *LeaderElector) Run() {
	if le.running {
		return
	}
	le.running = true
	le.run++
	le.acquire(le.run)
}

// Cancel is the cancellation of Run's context (the manager stops): the
// loops end, the lease is released if held and ReleaseOnCancel is set, and
// OnStoppedLeading runs, as client-go's deferred calls do.
func (le *LeaderElector) Cancel() {
	if !le.running {
		return
	}
	le.stop()
}

// Kill is the death of the process (SIGKILL, OOM, a crash): nothing of the
// elector runs any more — no release, no callback. The lease stays held by
// this identity until the other candidates see it expire. A restarted
// process is a new candidate: make a new elector with a new Identity.
func (le *LeaderElector) Kill() {
	le.running, le.leading = false, false
	le.run++
	le.paused, le.held = false, nil
}

// Pause stops the candidate's process without killing it (SIGSTOP, a long
// GC or CPU-throttling stop): none of its loops runs until Resume — no
// renewal, no acquisition, no renew deadline — and it still believes what
// it believed: a leader still leads. Its clock does not stop: client-go's
// timers (wait.UntilWithContext's period, PollUntilContextTimeout's retry
// ticker and its context.WithTimeout deadline) are on the monotonic clock,
// which runs on while the process is stopped, so they are all overdue on
// Resume.
func (le *LeaderElector) Pause() { le.paused = true }

// Resume continues a paused candidate: the loop events that fell due
// while it was paused run now, in due order, each as an event of its own
// (scheduled after whatever else of the process was resumed first).
// What the renew loop does then is client-go's: a leader whose renew poll
// was waiting for its period starts a new poll now (tryAcquireOrRenew:
// the lease it last observed has expired by its own clock, so it reads
// the lease; held by another candidate, the attempt fails and the new
// poll retries until its renew deadline, RenewDeadline from now — only
// then does it stop leading); a poll whose deadline passed during the
// pause ends without another attempt (renewRetry).
func (le *LeaderElector) Resume() {
	if !le.paused {
		return
	}
	le.paused = false
	held := le.held
	le.held = nil
	for _, h := range held {
		le.s.Schedule(0, h.what, h.fn)
	}
}

// after and at schedule an event of the elector's loops; one that falls
// due while the candidate is paused is held until Resume.
func (le *LeaderElector) after(d time.Duration, what string, fn func()) {
	le.at(le.s.Now().Add(d), what, fn)
}

func (le *LeaderElector) at(t time.Time, what string, fn func()) {
	le.s.scheduleAt(t, what, func() {
		if le.paused {
			le.held = append(le.held, heldEvent{what: what, fn: fn})
			return
		}
		fn()
	})
}

// acquire mirrors LeaderElector.acquire: tryAcquireOrRenew now and then
// every RetryPeriod jittered by JitterFactor (wait.JitterUntil, sliding),
// until it succeeds.
func (le *LeaderElector) acquire(run int) {
	if le.run != run {
		return
	}
	ok := le.tryAcquireOrRenew()
	le.maybeReportTransition()
	if !ok {
		wait := le.cfg.RetryPeriod + time.Duration(le.s.Rand().Float64()*LeaderElectionJitterFactor*float64(le.cfg.RetryPeriod))
		le.after(wait, "leader election of "+le.cfg.Identity, func() { le.acquire(run) })
		return
	}
	le.leading = true
	if le.cfg.Callbacks.OnStartedLeading != nil {
		le.cfg.Callbacks.OnStartedLeading()
	}
	if le.run == run { // the callback may have killed the process
		le.pollStart = le.s.Now()
		le.renew(run)
	}
}

// renew mirrors LeaderElector.renew: each poll (wait.PollUntilContextTimeout,
// immediate) calls tryAcquireOrRenew every RetryPeriod until it succeeds;
// the next poll starts RetryPeriod after a success (wait.Until). A poll
// that has not succeeded RenewDeadline after it began ends leading; an
// attempt due at that instant loses to the deadline.
func (le *LeaderElector) renew(run int) {
	if le.run != run {
		return
	}
	ok := le.tryAcquireOrRenew()
	le.maybeReportTransition()
	name := "lease renewal of " + le.cfg.Identity
	if ok {
		le.after(le.cfg.RetryPeriod, name, func() {
			le.pollStart = le.s.Now()
			le.renew(run)
		})
		return
	}
	deadline := le.pollStart.Add(le.cfg.RenewDeadline)
	if next := le.s.Now().Add(le.cfg.RetryPeriod); next.Before(deadline) {
		le.after(le.cfg.RetryPeriod, name, func() { le.renewRetry(run) })
		return
	}
	le.at(deadline, "renew deadline of "+le.cfg.Identity, func() {
		if le.run == run {
			le.stop()
		}
	})
}

// renewRetry is a poll's next attempt. Scheduled before the poll's
// deadline, it runs after it only when the candidate was paused across
// the deadline: then the poll's context has timed out and
// wait.loopConditionUntilContext returns ctx.Err() before calling the
// condition again — leading ends without another attempt.
func (le *LeaderElector) renewRetry(run int) {
	if le.run != run {
		return
	}
	if !le.s.Now().Before(le.pollStart.Add(le.cfg.RenewDeadline)) {
		le.stop()
		return
	}
	le.renew(run)
}

// stop ends Run: the deferred release (ReleaseOnCancel) and
// OnStoppedLeading.
func (le *LeaderElector) stop() {
	wasLeading := le.leading
	le.running, le.leading = false, false
	le.run++
	if wasLeading && le.cfg.ReleaseOnCancel {
		le.release()
	}
	if le.cfg.Callbacks.OnStoppedLeading != nil {
		le.cfg.Callbacks.OnStoppedLeading()
	}
}

// tryAcquireOrRenew mirrors LeaderElector.tryAcquireOrRenew: the leader's
// optimistic update of the lease it last saw; else get (or create) the
// lease, note when its record last changed, give up if another holder's
// lease is still valid by that observation, and update it to hold it.
func (le *LeaderElector) tryAcquireOrRenew() bool {
	now := metav1.NewTime(le.s.Now())
	record := rl.LeaderElectionRecord{
		HolderIdentity:       le.cfg.Identity,
		LeaseDurationSeconds: int(le.cfg.LeaseDuration / time.Second),
		RenewTime:            now,
		AcquireTime:          now,
	}
	// 1. fast path: the leader updates the lease it last saw.
	if le.IsLeader() && le.isLeaseValid(now.Time) {
		record.AcquireTime = le.observedRecord.AcquireTime
		record.LeaderTransitions = le.observedRecord.LeaderTransitions
		if le.update(record) == nil {
			le.setObservedRecord(record)
			return true
		}
	}
	// 2. obtain or create the record.
	old, raw, err := le.get()
	if err != nil {
		if !apierrors.IsNotFound(err) || le.create(record) != nil {
			return false
		}
		le.setObservedRecord(record)
		return true
	}
	// 3. the observer's clock: observedTime moves only when the record changes.
	if !bytes.Equal(le.observedRawRecord, raw) {
		le.setObservedRecord(*old)
		le.observedRawRecord = raw
	}
	if old.HolderIdentity != "" && le.isLeaseValid(now.Time) && !le.IsLeader() {
		return false
	}
	// 4. hold it.
	if le.IsLeader() {
		record.AcquireTime = old.AcquireTime
		record.LeaderTransitions = old.LeaderTransitions
	} else {
		record.LeaderTransitions = old.LeaderTransitions + 1
	}
	if le.update(record) != nil {
		return false
	}
	le.setObservedRecord(record)
	return true
}

// release mirrors LeaderElector.release and tryRelease: if the last
// observed record names this candidate, write a record with no holder and
// a one-second duration, retrying on conflict.
func (le *LeaderElector) release() bool {
	for {
		old, _, err := le.get()
		if err != nil {
			return false
		}
		if !le.IsLeader() {
			return true
		}
		now := metav1.NewTime(le.s.Now())
		record := rl.LeaderElectionRecord{LeaderTransitions: old.LeaderTransitions, LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now}
		if err := le.update(record); err != nil {
			if apierrors.IsConflict(err) {
				continue
			}
			return false
		}
		le.setObservedRecord(record)
		return true
	}
}

// isLeaseValid mirrors LeaderElector.isLeaseValid.
func (le *LeaderElector) isLeaseValid(now time.Time) bool {
	return le.observedTime.Add(time.Second * time.Duration(le.observedRecord.LeaseDurationSeconds)).After(now)
}

// setObservedRecord mirrors LeaderElector.setObservedRecord: observedTime
// is the observer's own clock.
func (le *LeaderElector) setObservedRecord(r rl.LeaderElectionRecord) {
	le.observedRecord = r
	le.observedTime = le.s.Now()
}

// maybeReportTransition mirrors LeaderElector.maybeReportTransition.
func (le *LeaderElector) maybeReportTransition() {
	if le.observedRecord.HolderIdentity == le.reportedLeader {
		return
	}
	le.reportedLeader = le.observedRecord.HolderIdentity
	if le.cfg.Callbacks.OnNewLeader != nil {
		le.cfg.Callbacks.OnNewLeader(le.reportedLeader)
	}
}

// get mirrors LeaseLock.Get: the record and its JSON (the raw record
// tryAcquireOrRenew compares; its times have one-second precision).
func (le *LeaderElector) get() (*rl.LeaderElectionRecord, []byte, error) {
	var l coordinationv1.Lease
	if err := le.cfg.Client.Get(le.s.ctx(), le.cfg.Lease, &l); err != nil {
		return nil, nil, err
	}
	le.lease = &l
	record := rl.LeaseSpecToLeaderElectionRecord(&l.Spec)
	raw, err := json.Marshal(*record)
	if err != nil {
		return nil, nil, err
	}
	return record, raw, nil
}

// create mirrors LeaseLock.Create.
func (le *LeaderElector) create(r rl.LeaderElectionRecord) error {
	l := &coordinationv1.Lease{Spec: rl.LeaderElectionRecordToLeaseSpec(&r)}
	l.Namespace, l.Name = le.cfg.Lease.Namespace, le.cfg.Lease.Name
	if err := le.cfg.Client.Create(le.s.ctx(), l); err != nil {
		return err
	}
	le.lease = l
	return nil
}

// update mirrors LeaseLock.Update: the lease last read or written, with
// its resourceVersion, so a concurrent change conflicts.
func (le *LeaderElector) update(r rl.LeaderElectionRecord) error {
	if le.lease == nil {
		return fmt.Errorf("lease not initialized, call get or create first")
	}
	l := le.lease.DeepCopy()
	l.Spec = rl.LeaderElectionRecordToLeaseSpec(&r)
	if err := le.cfg.Client.Update(le.s.ctx(), l); err != nil {
		return err
	}
	le.lease = l
	return nil
}
