package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/real/operatorproc"
)

// The lines the operator binary logs that the election reads back:
// client-go's tools/leaderelection (leaderelection.go, acquire: "successfully
// acquired lease"), controller-runtime's manager (pkg/manager/internal.go,
// OnStoppedLeading: the process exits with "leader election lost") and the
// operator's own write logs (operator/controller: "image written" in
// applicationupgrade_write.go, "status written" in
// applicationupgrade_status.go, at V(1) unless a phase changed: electionArgs
// turns V(1) on).
const (
	logAcquired = "uccessfully acquired lease"
	logLost     = "leader election lost"
	logWritten  = "image written"
	logStatus   = "status written"
)

// electedProc is one operator process under leader election: replica slot
// (0 or 1, a pod of a two-replica Deployment) and its incarnation there.
type electedProc struct {
	slot, incarnation int
	p                 *operatorproc.Process
}

func (e *electedProc) String() string {
	return fmt.Sprintf("replica %d incarnation %d (pid %d, log %s)", e.slot, e.incarnation, e.p.Pid(), e.p.Log())
}

// election runs the operator binary as two replicas on one Lease
// (--leader-elect, the Lease in the scenario's namespace) and restarts a
// process that exits on "leader election lost" faults.RestartDelay later,
// as the kubelet restarts a pod's container (the delay's sources are
// cited there). Any other exit is the scenario's failure (failed).
type election struct {
	r    *Real
	stop chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	procs  []*electedProc // every process started, in order
	live   [2]*electedProc
	failed error
	frozen *electedProc // the leader lease-lost froze
}

// electionArgs are the flags of a replica: leader election on the Lease
// manager.DefaultLeaderElectionID in the scenario's namespace, log times
// to the nanosecond (zap's rfc3339nano) so writes can be placed among
// lease acquisitions, and V(1) on so every status write is logged.
func (r *Real) electionArgs() []string {
	return []string{"--leader-elect", "--leader-election-namespace=" + r.ns,
		"--leader-election-id=" + manager.DefaultLeaderElectionID, "--zap-time-encoding=rfc3339nano", "--zap-log-level=debug"}
}

// AddStandbyReplica implements SimOnly out of process: the operator
// process running now is stopped and two processes start under leader
// election on one Lease; it returns once one of them leads and has
// started its ApplicationUpgrade workers. The in-process manager is one
// replica and refuses.
func (r *Real) AddStandbyReplica(ctx context.Context) error {
	if !r.OutOfProcess() {
		return fmt.Errorf("a second operator replica needs the operator out of process (-real.operator=process; tag the scenario @process): %w", ErrUnsupported)
	}
	r.mu.Lock()
	already := r.el != nil
	r.mu.Unlock()
	if already {
		return fmt.Errorf("a standby replica is already running")
	}
	if err := r.stopOperator(); err != nil {
		return fmt.Errorf("stop the single operator process before the election: %w", err)
	}
	el := &election{r: r, stop: make(chan struct{})}
	r.mu.Lock()
	r.el = el
	r.mu.Unlock()
	for slot := range el.live {
		if err := el.start(slot); err != nil {
			return err
		}
		el.wg.Add(1)
		go el.supervise(slot)
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		if err := el.err(); err != nil {
			return false, err
		}
		l, err := el.leader()
		if err != nil || l == nil {
			return false, err
		}
		return logHas(l.p.Log(), "Starting workers", "applicationupgrade"), nil
	})
}

// start runs a new process in slot, its log operator-N.log.
func (el *election) start(slot int) error {
	r := el.r
	r.mu.Lock()
	n := r.procs
	r.procs++
	r.mu.Unlock()
	p, err := startProcess(r.suite.Operator, r.suite.Kubeconfig, r.ns, filepath.Join(r.logs, fmt.Sprintf("operator-%d.log", n)), r.electionArgs()...)
	if err != nil {
		return err
	}
	el.mu.Lock()
	defer el.mu.Unlock()
	inc := 1
	if old := el.live[slot]; old != nil {
		inc = old.incarnation + 1
	}
	e := &electedProc{slot: slot, incarnation: inc, p: p}
	el.live[slot] = e
	el.procs = append(el.procs, e)
	return nil
}

// supervise restarts slot's process each time it exits on losing the
// lease, until stop; another exit fails the election.
func (el *election) supervise(slot int) {
	defer el.wg.Done()
	for {
		el.mu.Lock()
		e := el.live[slot]
		el.mu.Unlock()
		select {
		case <-el.stop:
			return
		case <-e.p.Done():
		}
		if !logHas(e.p.Log(), logLost) {
			el.fail(fmt.Errorf("operator %s exited without losing its lease: %w", e, e.p.Exited()))
			return
		}
		select {
		case <-el.stop:
			return
		case <-time.After(faults.RestartDelay): // the kubelet's restart, not a synchronisation
		}
		if err := el.start(slot); err != nil {
			el.fail(fmt.Errorf("restart operator replica %d: %w", slot, err))
			return
		}
	}
}

func (el *election) fail(err error) {
	el.mu.Lock()
	defer el.mu.Unlock()
	if el.failed == nil {
		el.failed = err
	}
}

func (el *election) err() error {
	el.mu.Lock()
	defer el.mu.Unlock()
	return el.failed
}

// close stops the supervisors, then every live process (SIGTERM; a frozen
// one is continued first by operatorproc.Stop).
func (el *election) close() error {
	close(el.stop)
	el.wg.Wait()
	el.mu.Lock()
	live := el.live
	el.mu.Unlock()
	var errs []error
	for _, e := range live {
		if e == nil {
			continue
		}
		if err := e.p.Stop(stopGrace); err != nil && !logHas(e.p.Log(), logLost) {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, el.err())...)
}

// leader is the live process that leads now: of the running processes
// whose log says they acquired the lease, the one that acquired it last
// (a resumed old leader has not yet noticed its loss); nil while none has.
func (el *election) leader() (*electedProc, error) {
	el.mu.Lock()
	live := el.live
	el.mu.Unlock()
	var best *electedProc
	var bestAt time.Time
	for _, e := range live {
		if e == nil || e.p.Exited() != nil {
			continue
		}
		lines, err := readLog(e.p.Log())
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			if l.msg == logAcquired && (best == nil || l.at.After(bestAt)) {
				best, bestAt = e, l.at
			}
		}
	}
	return best, nil
}

// freezeLeader is lease-lost on the real backend: the leading process is
// stopped with SIGSTOP for the fault's window (its network and its
// timers stall: it neither renews nor writes), then continued with
// SIGCONT; controller-runtime then finds its lease lost and exits, and
// supervise restarts it.
func (r *Real) freezeLeader(ctx context.Context, f faults.Fault) error {
	r.mu.Lock()
	el := r.el
	r.mu.Unlock()
	if el == nil {
		return refuse(BackendReal, f, "no leader election: the step \"a second operator replica is on standby under leader election\" comes first")
	}
	if f.At > 0 {
		return refuse(BackendReal, f, "a step's fault fires at once (@0s) on a real cluster: nothing schedules it later")
	}
	l, err := el.leader()
	if err != nil {
		return err
	}
	if l == nil {
		return fmt.Errorf("fault %s: no operator process has acquired the lease yet", f)
	}
	var lease coordinationv1.Lease
	key := types.NamespacedName{Namespace: r.ns, Name: manager.DefaultLeaderElectionID}
	if err := r.suite.client.Get(ctx, key, &lease); err != nil {
		return fmt.Errorf("fault %s: read the Lease %s: %w", f, key, err)
	}
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	d := f.Dur("for")
	if err := l.p.Freeze(); err != nil {
		return err
	}
	el.mu.Lock()
	el.frozen = l
	el.mu.Unlock()
	r.faults.Record(f, d, fmt.Sprintf("operator %s, the Lease's holder %q, frozen with SIGSTOP for %s", l, holder, d))
	time.AfterFunc(d, func() { _ = l.p.Thaw() }) // the fault's window, not a synchronisation
	return nil
}

// klogHeader starts a klog text line: severity, MMDD hh:mm:ss.uuuuuu.
var klogHeader = regexp.MustCompile(`^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{6}`)

// logLine is one line of an operator process's log that the election reads.
type logLine struct {
	at  time.Time
	msg string // logAcquired, logLost, logWritten or logStatus
	// what names a write: its workload and image, or the phase and
	// resourceVersion a status write claimed
	what string
	// sent is when a write was sent (zero when the line does not say), rv
	// the resourceVersion it returned (0 when the line does not say)
	sent time.Time
	rv   uint64
}

// readLog reads the acquisitions, losses, image and status writes of a log. The
// operator logs through zap as JSON (ts in rfc3339nano: electionArgs);
// client-go's leader election may log through klog's text format instead
// ("I1203 00:41:02.123456 ..." in local time, the year left out).
func readLog(path string) ([]logLine, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var kind string
		for _, k := range []string{logAcquired, logLost, logWritten, logStatus} {
			if strings.Contains(line, k) {
				kind = k
			}
		}
		if kind == "" {
			continue
		}
		l := logLine{msg: kind}
		if strings.HasPrefix(line, "{") {
			var j map[string]any
			if json.Unmarshal([]byte(line), &j) != nil {
				continue
			}
			ts, _ := j["ts"].(string)
			if l.at, err = time.Parse(time.RFC3339Nano, ts); err != nil {
				return nil, fmt.Errorf("%s: a line with a time that is not rfc3339nano: %q", path, line)
			}
			if kind == logWritten || kind == logStatus {
				if sent, ok := j["sent"].(string); ok {
					if l.sent, err = time.Parse(time.RFC3339Nano, sent); err != nil {
						return nil, fmt.Errorf("%s: a write whose send time is not rfc3339nano: %q", path, line)
					}
				}
				rvKey := "resourceVersion" // the upgrade's, of a status write
				if kind == logWritten {
					rvKey = "workloadResourceVersion"
				}
				if rv, ok := j[rvKey].(string); ok && rv != "" {
					if l.rv, err = strconv.ParseUint(rv, 10, 64); err != nil {
						return nil, fmt.Errorf("%s: a write whose resourceVersion is not a number: %q", path, line)
					}
				}
			}
			switch kind {
			case logWritten:
				l.what = fmt.Sprintf("%v %v", j["deployment"], j["image"])
			case logStatus:
				l.what = fmt.Sprintf("status %v/%v %v at resourceVersion %v", j["namespace"], j["name"], j["phase"], j["resourceVersion"])
			}
		} else if klogHeader.MatchString(line) {
			at, err := time.ParseInLocation("0102 15:04:05.000000", line[1:21], time.Local)
			if err != nil {
				return nil, fmt.Errorf("%s: a klog line with a time that does not parse: %q", path, line)
			}
			l.at = at.AddDate(time.Now().Year(), 0, 0)
		} else {
			// untimed: the binary's last line ("upgrade-operator: leader
			// election lost"), which logHas reads
			continue
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// logHas reports whether a line of the log at path holds every one of subs.
func logHas(path string, subs ...string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		all := true
		for _, s := range subs {
			all = all && bytes.Contains(line, []byte(s))
		}
		if all {
			return true
		}
	}
	return false
}

// event is an acquisition or a write of one process, in time.
type event struct {
	e *electedProc
	logLine
}

// events are every process's acquisitions and writes, in time.
func (el *election) events() ([]event, error) {
	el.mu.Lock()
	procs := append([]*electedProc(nil), el.procs...)
	el.mu.Unlock()
	var evs []event
	for _, e := range procs {
		lines, err := readLog(e.p.Log())
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			if l.msg != logLost {
				evs = append(evs, event{e, l})
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	return evs, nil
}
