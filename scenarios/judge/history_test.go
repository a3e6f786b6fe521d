package judge

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/render/timeline"
)

// builder writes histories by hand: facts get consecutive resourceVersions,
// as one etcd assigns them; ops a span of the recording sequence.
type builder struct {
	h   History
	seq int64
	rv  uint64
}

var spec = &UpgradeSpec{Name: "u", Worker: "w", WorkerImage: "w:2", API: "a", APIImage: "a:2"}

func (b *builder) fact(kind, name, dep string, images ...string) *builder {
	b.seq++
	b.rv++
	e := eventlog.Event{Event: kind, Namespace: "ns", Name: name, Deployment: dep, Images: images, RV: strconv.FormatUint(b.rv, 10)}
	if len(images) > 0 {
		e.Image = images[0]
	}
	// event log v2: the template hash of images is "h-<images>"
	if h := "h-" + strings.Join(images, ","); kind == eventlog.DeploymentWrite {
		e.HashAfter = h
	} else if strings.HasPrefix(kind, "Pod") {
		e.Hash = h
	}
	if kind == eventlog.DeploymentStatus {
		e.Status = &eventlog.Counters{Spec: 1}
	}
	b.h.Facts = append(b.h.Facts, Fact{Event: e, Seq: b.seq})
	return b
}

func (b *builder) phase(name, phase string, gen int64) *builder {
	b.fact(eventlog.Phase, name, "")
	f := &b.h.Facts[len(b.h.Facts)-1]
	f.Phase, f.Generation = phase, gen
	return b
}

// write records a successful operator write committed at the next rv,
// with its own fact, as the simulator records both.
func (b *builder) write(replica int, dep string, images ...string) *builder {
	b.seq++
	call := b.seq
	b.fact(eventlog.DeploymentWrite, dep, dep, images...)
	b.seq++
	b.h.Ops = append(b.h.Ops, Op{ID: len(b.h.Ops) + 1, Replica: replica, Verb: "patch", Kind: "Deployment", Namespace: "ns", Name: dep,
		CallSeq: call, ReturnSeq: b.seq, RV: strconv.FormatUint(b.rv, 10), Images: images, Replicas: 1, Upgrade: spec})
	return b
}

func (b *builder) status(prev, next string) *builder {
	b.seq++
	call := b.seq
	b.phase("u", next, 1)
	b.seq++
	b.h.Ops = append(b.h.Ops, Op{ID: len(b.h.Ops) + 1, Verb: "patch", Sub: "status", Kind: "ApplicationUpgrade", Namespace: "ns", Name: "u",
		CallSeq: call, ReturnSeq: b.seq, RV: strconv.FormatUint(b.rv, 10), Phase: next, PrevPhase: prev, Upgrade: spec})
	return b
}

// upgrade is a one-replica rollout of w from w:1 to w:2; the old pod
// terminates before it is deleted. stop cuts it short after that many steps.
func upgrade(stop int) *builder {
	b := &builder{}
	b.fact(eventlog.DeploymentWrite, "w", "w", "w:1").fact(eventlog.DeploymentStatus, "w", "w", "w:1").
		fact(eventlog.DeploymentWrite, "a", "a", "a:1").fact(eventlog.DeploymentStatus, "a", "a", "a:1").
		fact(eventlog.PodCreated, "w-old", "w", "w:1").fact(eventlog.PodReady, "w-old", "w").
		fact(eventlog.PodCreated, "a-old", "a", "a:1").fact(eventlog.PodReady, "a-old", "a").
		phase("u", "Pending", 1)
	steps := []func(){
		func() { b.status("Pending", "UpgradingWorkers") },
		func() { b.write(0, "w", "w:2").status("UpgradingWorkers", "WaitingForWorkers") },
		func() { b.fact(eventlog.PodCreated, "w-new", "w", "w:2").fact(eventlog.PodReady, "w-new", "w") },
		func() { b.fact(eventlog.PodDeleting, "w-old", "w") },
		func() { b.fact(eventlog.PodDeleted, "w-old", "w") },
		func() { b.status("WaitingForWorkers", "UpgradingAPI") },
		func() { b.write(0, "a", "a:2").status("UpgradingAPI", "WaitingForAPI") },
	}
	for i, s := range steps {
		if i == stop {
			break
		}
		s()
	}
	return b
}

func TestSafeHistoryIsLinearizable(t *testing.T) {
	r := Check(upgrade(-1).h)
	assert.Equal(t, porcupine.Ok, r.Linearizable, r.Illegal)
	assert.Empty(t, r.Violations)
	assert.True(t, r.OK())
	assert.NoError(t, r.Err())
}

func TestAPIWriteWhileOldWorkerPodTerminates(t *testing.T) {
	b := upgrade(4) // the old pod is terminating, not yet deleted
	b.write(0, "a", "a:2")
	r := Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, "old pod w-old (hash h-w:1, w:1) of w still exists (terminating)")
	require.Error(t, r.Err())
	assert.Contains(t, r.Err().Error(), "invariant ordering")
}

func TestUpgradingAPIClaimedTooEarly(t *testing.T) {
	b := upgrade(3) // new pod ready, the old one still running
	b.status("WaitingForWorkers", "UpgradingAPI")
	r := Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, "phase UpgradingAPI claimed while the worker is not fully rolled out")
}

// TestLateWatchEventsFallInPlace: on a real cluster the watch delivers a
// pod's deletion after the operator's write returned; resourceVersions
// put the deletion first, so a correct run stays legal — and the reverse
// (deletion committed after the write, delivered before it returned)
// stays illegal.
func TestLateWatchEventsFallInPlace(t *testing.T) {
	b := upgrade(5)
	b.status("WaitingForWorkers", "UpgradingAPI")
	// move the PodDeleted fact's arrival after the API write's return
	b.write(0, "a", "a:2")
	var del Fact
	for i, f := range b.h.Facts {
		if f.Event.Event == eventlog.PodDeleted {
			del = f
			b.h.Facts = append(b.h.Facts[:i], b.h.Facts[i+1:]...)
			break
		}
	}
	del.Seq = b.seq + 1
	b.h.Facts = append(b.h.Facts, del)
	r := Check(b.h)
	assert.Equal(t, porcupine.Ok, r.Linearizable, r.Illegal)

	bad := upgrade(4)
	bad.write(0, "a", "a:2")
	bad.seq -= 3 // the deletion commits after the write but arrives before it returned
	bad.fact(eventlog.PodDeleted, "w-old", "w")
	bad.seq += 3
	r = Check(bad.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
}

func TestInvariants(t *testing.T) {
	b := upgrade(-1)
	b.write(0, "a", "a:2") // the same image again
	b.phase("u", "UpgradingAPI", 1)
	b.write(1, "w", "w:3")
	b.write(0, "w", "w:4")
	var got []string
	for _, v := range Invariants(b.h) {
		got = append(got, v.Check)
	}
	assert.ElementsMatch(t, []string{CheckOneWrite, CheckPhaseMonotone, CheckSingleWriter}, got)
}

func TestPhaseRestartOnANewGenerationIsMonotone(t *testing.T) {
	b := &builder{}
	b.phase("u", "Failed", 1).phase("u", "Pending", 2).phase("u", "UpgradingWorkers", 2)
	assert.Empty(t, Invariants(b.h))
}

func TestWriteArtifacts(t *testing.T) {
	b := upgrade(4)
	b.write(0, "a", "a:2")
	r := Check(b.h)
	dir := t.TempDir()
	require.NoError(t, r.WriteArtifacts(dir, b.h, "seed 1"))
	for _, f := range []string{VisualizationFile, EventLogFile, OpsFile, VerdictFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Positive(t, st.Size(), f)
	}
	verdict, _ := os.ReadFile(filepath.Join(dir, VerdictFile))
	assert.Contains(t, string(verdict), "seed 1")
	assert.Contains(t, string(verdict), "Illegal")

	b.h.Faults = []timeline.Span{{Label: "conflict@1:n=5:per=target", Start: 1, End: 3}}
	require.NoError(t, r.WriteArtifacts(dir, b.h, "seed 1"))
	svg, _ := os.ReadFile(filepath.Join(dir, TimelineFile))
	assert.Contains(t, string(svg), "conflict@1:n=5:per=target", "the timeline shades the faults that fired")
}

func TestRecorderLiveFollowsTheWatch(t *testing.T) {
	r := NewRecorder(time.Time{}, time.Now)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: "5"}}
	r.Observe(watch.Added, pod, time.Time{})
	key := LiveKey("*v1.Pod", "ns", "p")
	assert.Equal(t, map[string]string{key: "5"}, r.Live())
	pod.ResourceVersion = "7"
	r.Observe(watch.Modified, pod, time.Time{})
	assert.Equal(t, "7", r.Live()[key])
	r.Observe(watch.Deleted, pod, time.Time{})
	assert.Empty(t, r.Live())
}

func TestIncompleteHistoryFails(t *testing.T) {
	h := upgrade(-1).h
	h.Incomplete = "the watch lagged"
	r := Check(h)
	assert.False(t, r.OK())
	assert.Contains(t, r.Failed(), CheckComplete)
}

// TestVisualizationAnnotatesPodsAndWrites: a failing history's porcupine
// HTML carries each pod's lifecycle (old ones marked) and every template
// write as annotations.
func TestVisualizationAnnotatesPodsAndWrites(t *testing.T) {
	b := upgrade(4)
	b.write(0, "a", "a:2")
	r := Check(b.h)
	require.False(t, r.OK())
	ann := Annotations(b.h)
	var descs []string
	for _, a := range ann {
		descs = append(descs, a.Tag+": "+a.Description)
	}
	assert.Contains(t, descs, "pods of w: w-old (OLD, hash h-w:1)")
	assert.Contains(t, descs, "pods of w: w-new (new, hash h-w:2)")
	assert.Contains(t, descs, "template writes: a a:2")
	dir := t.TempDir()
	require.NoError(t, r.WriteArtifacts(dir, b.h, "seed 1"))
	html, err := os.ReadFile(filepath.Join(dir, VisualizationFile))
	require.NoError(t, err)
	assert.Contains(t, string(html), "w-old (OLD, hash h-w:1)")
}

// ambiguous fails every call after making it.
type ambiguous struct{}

var errLost = errors.New("the response was lost")

func (ambiguous) Inject(*Op) error { return &CommitThenFail{Err: errLost} }
func (ambiguous) After(*Op)        {}

func TestCommitThenFailMakesTheCallThenFailsIt(t *testing.T) {
	inner := fake.NewClientBuilder().Build()
	r := NewRecorder(time.Time{}, time.Now)
	c := r.WrapClient(inner, 0, ambiguous{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	err := c.Create(t.Context(), cm)
	require.ErrorIs(t, err, errLost, "the operator is told the write failed")
	require.NoError(t, inner.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}), "yet it committed")
	ops := r.History().Ops
	require.Len(t, ops, 1)
	assert.True(t, ops[0].Injected)
	assert.False(t, ops[0].OK())
}
