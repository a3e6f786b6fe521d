package realbench

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// operatorLog is an excerpt of a real benchoperator log (fields the
// parser does not read shortened), with a plain-text line and a second
// upgrade that never reached the handoff.
const operatorLog = `{"level":"info","ts":"2026-12-03T09:16:00Z","msg":"Starting workers","worker count":4}
not json: a process may print this
{"level":"info","msg":"status written","namespace":"ns-0","phase":"Progressing","components":"worker=Upgrading,api=Pending","sent":"2026-12-03T09:16:02.030000000Z"}
{"level":"info","msg":"image written","namespace":"ns-0","component":"worker","sent":"2026-12-03T09:16:02.064000000Z"}
{"level":"info","msg":"status written","namespace":"ns-0","phase":"Progressing","components":"worker=Rolled,api=Upgrading","sent":"2026-12-03T09:16:09.237000000Z"}
{"level":"info","msg":"image written","namespace":"ns-0","component":"api","sent":"2026-12-03T09:16:09.280000000Z"}
{"level":"info","msg":"status written","namespace":"ns-0","phase":"Progressing","components":"worker=Rolled,api=Upgrading","sent":"2026-12-03T09:16:10.000000000Z"}
{"level":"info","msg":"status written","namespace":"ns-1","phase":"Progressing","components":"worker=Upgrading,api=Pending","sent":"2026-12-03T09:16:02.500000000Z"}
`

func TestReadOperatorSendsTakesTheFirstDecisionAndWrite(t *testing.T) {
	got, err := ReadOperatorSends(strings.NewReader(operatorLog), "api")
	require.NoError(t, err)
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339Nano, s); return v }
	assert.Equal(t, map[string]OperatorSends{
		"ns-0": {DependentUpgrading: at("2026-12-03T09:16:09.237Z"), DependentImage: at("2026-12-03T09:16:09.280Z")},
	}, got, "the worker's own Upgrading and image write are not the dependent's; the later repeat does not move the decision")
}

func TestReadOperatorSendsRefusesAnUnreadableSendTime(t *testing.T) {
	_, err := ReadOperatorSends(strings.NewReader(`{"msg":"image written","namespace":"n","component":"api","sent":"yesterday"}`), "api")
	assert.ErrorContains(t, err, `line 1: sent "yesterday"`)
}

func TestSplitHandoffsAddsUpToEachHandoff(t *testing.T) {
	start := time.Date(2026, 12, 3, 9, 15, 0, 0, time.UTC)
	sec := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	moments := map[string]Moments{
		"a": {WorkerGone: 10.000, APIWrite: 10.150},
		"b": {WorkerGone: 20.000, APIWrite: 20.090},
		"c": {WorkerGone: 30, APIWrite: -1}, // never written: left out
	}
	sends := map[string]OperatorSends{
		"a": {DependentUpgrading: sec(10.010), DependentImage: sec(10.110)},
		"b": {DependentUpgrading: sec(19.995), DependentImage: sec(20.060)}, // the operator saw the deletion first
		"c": {DependentUpgrading: sec(30.1), DependentImage: sec(30.2)},
	}
	p := SplitHandoffs(start, moments, sends)
	require.Equal(t, 2, p.Decision.N)
	assert.InDelta(t, -0.005, p.Decision.Min, 1e-9)
	assert.InDelta(t, 0.010, p.Decision.Max, 1e-9)
	assert.InDelta(t, 0.065, p.Fence.Min, 1e-9)
	assert.InDelta(t, 0.100, p.Fence.Max, 1e-9)
	assert.InDelta(t, 0.030, p.Write.Min, 1e-9)
	assert.InDelta(t, 0.040, p.Write.Max, 1e-9)
	for ns, m := range moments {
		if m.APIWrite < 0 {
			continue
		}
		s := sends[ns]
		sum := s.DependentUpgrading.Sub(start).Seconds() - m.WorkerGone + s.DependentImage.Sub(s.DependentUpgrading).Seconds() + m.APIWrite - s.DependentImage.Sub(start).Seconds()
		assert.InDelta(t, m.Handoff(), sum, 1e-9, ns)
	}
}
