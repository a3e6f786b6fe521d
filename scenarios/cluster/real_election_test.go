package cluster

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// The lines as the operator binary writes them (zap JSON with
// --zap-time-encoding=rfc3339nano, klog text, the untimed last line).
const electionLog = `{"level":"info","ts":"2026-12-03T00:35:50.487343048Z","logger":"leaderelection","msg":"Successfully acquired lease","lock":"ns/upgrade-operator.lunadas.dev"}
{"level":"info","ts":"2026-12-03T00:35:50.781836904Z","msg":"image written","component":"worker","deployment":"ns/job-worker","image":"job-worker:v2","workloadResourceVersion":"810","sent":"2026-12-03T00:35:50.77Z"}
{"level":"debug","ts":"2026-12-03T00:35:50.79Z","msg":"status written","namespace":"ns","name":"upgrade-v2","phase":"Progressing","resourceVersion":"812","sent":"2026-12-03T00:35:50.785Z"}
I1203 00:36:30.874201   4242 leaderelection.go:272] successfully acquired lease ns/upgrade-operator.lunadas.dev
{"level":"info","ts":"2026-12-03T00:36:31.0Z","msg":"Reconciler error"}
upgrade-operator: leader election lost
`

func TestReadLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "operator-0.log")
	require.NoError(t, os.WriteFile(path, []byte(electionLog), 0o600))
	lines, err := readLog(path)
	require.NoError(t, err)
	require.Len(t, lines, 4)
	assert.Equal(t, logAcquired, lines[0].msg)
	assert.Equal(t, time.Date(2026, 12, 3, 0, 35, 50, 487343048, time.UTC), lines[0].at.UTC())
	assert.Equal(t, logWritten, lines[1].msg)
	assert.Equal(t, "ns/job-worker job-worker:v2", lines[1].what)
	assert.Equal(t, uint64(810), lines[1].rv)
	assert.Equal(t, time.Date(2026, 12, 3, 0, 35, 50, 770000000, time.UTC), lines[1].sent.UTC())
	assert.Equal(t, logStatus, lines[2].msg)
	assert.Equal(t, "status ns/upgrade-v2 Progressing at resourceVersion 812", lines[2].what)
	assert.Equal(t, uint64(812), lines[2].rv)
	assert.Equal(t, logAcquired, lines[3].msg)
	assert.Equal(t, time.Date(time.Now().Year(), 12, 3, 0, 36, 30, 874201000, time.Local), lines[3].at)
	assert.True(t, logHas(path, logLost))
	assert.False(t, logHas(path, "Starting workers"))
}

func TestWritesUnderLease(t *testing.T) {
	start := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	old, standby := &electedProc{slot: 0, incarnation: 1}, &electedProc{slot: 1, incarnation: 1}
	acquired := func(e *electedProc, s int) event { return event{e, logLine{at: at(s), msg: logAcquired}} }
	// a write sent at s, logged at logged, committed at resourceVersion rv
	wrote := func(e *electedProc, s, logged int, rv uint64) event {
		return event{e, logLine{at: at(logged), sent: at(s), rv: rv, msg: logWritten, what: "ns/job-api job-api:v2"}}
	}
	patched := func(e *electedProc, s, logged int, rv uint64) event {
		return event{e, logLine{at: at(logged), sent: at(s), rv: rv, msg: logStatus, what: "status ns/upgrade-v2 Progressing"}}
	}

	what, err := writesUnderLease([]event{acquired(old, 1), wrote(old, 2, 2, 10), patched(old, 3, 3, 11), acquired(standby, 20), wrote(standby, 30, 30, 40)}, start)
	require.NoError(t, err)
	assert.Contains(t, what, "2 image writes and 1 status writes")
	assert.Contains(t, what, "replica 1.1 at 20s")

	// a status patch frozen in flight: sent and committed under the old
	// tenure, logged once the process runs again
	_, err = writesUnderLease([]event{acquired(old, 1), wrote(old, 2, 2, 10), acquired(standby, 20), wrote(standby, 30, 30, 40), patched(old, 3, 61, 11)}, start)
	require.NoError(t, err)

	// the old leader, resumed, writes after the standby took the lease
	_, err = writesUnderLease([]event{acquired(old, 1), acquired(standby, 20), wrote(old, 31, 31, 50)}, start)
	assert.ErrorContains(t, err, "operator replica 0.1 sent the write ns/job-api job-api:v2 at 31s while replica 1.1 held the Lease")
	// or patches the status
	_, err = writesUnderLease([]event{acquired(old, 1), wrote(old, 2, 2, 10), acquired(standby, 20), patched(old, 31, 31, 51)}, start)
	assert.ErrorContains(t, err, "operator replica 0.1 sent the write status ns/upgrade-v2 Progressing at 31s while replica 1.1 held the Lease")
	// sent in time but committed after the new leader's write
	_, err = writesUnderLease([]event{acquired(old, 1), wrote(old, 19, 40, 60), acquired(standby, 20), patched(standby, 21, 21, 55)}, start)
	assert.ErrorContains(t, err, "operator replica 0.1's write ns/job-api job-api:v2 (resourceVersion 60) committed after replica 1.1's write status ns/upgrade-v2 Progressing (resourceVersion 55)")
	// a write before any acquisition
	_, err = writesUnderLease([]event{wrote(old, 1, 1, 5)}, start)
	assert.ErrorContains(t, err, "while no process held the Lease")
	_, err = writesUnderLease([]event{acquired(old, 1)}, start)
	assert.ErrorContains(t, err, "no operator process logged an image write")
	_, err = writesUnderLease([]event{acquired(old, 1), wrote(old, 2, 2, 0)}, start)
	assert.ErrorContains(t, err, "without a resourceVersion")
}

// In process the real backend is one replica: the standby and lease-lost
// are refused in one line naming -real.operator=process.
func TestRealInProcessRefusesElection(t *testing.T) {
	r := &Real{suite: &RealSuite{}, start: time.Now()}
	r.faults = faults.NewBoundary(1, r.Elapsed, nil)
	err := r.AddStandbyReplica(t.Context())
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "-real.operator=process")
	fs, perr := faults.ParseFaults("lease-lost@0s:for=30s")
	require.NoError(t, perr)
	err = r.Inject(t.Context(), fs[0])
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "-real.operator=process")
	assert.Empty(t, r.Fired())
}
