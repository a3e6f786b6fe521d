package workloads

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompare(t *testing.T) {
	real := "== a status\ns1\ns1b\ns2\n== a pods\np1\n"
	for _, tc := range []struct {
		name, sim string
		ok        bool
	}{
		{"equal", "== a pods\np1\n== a status\ns1\ns1b\ns2\n", true},
		{"real refines", "== a status\ns1\ns2\n== a pods\np1\n", true},
		{"each adds its own, shared in one order", "== a status\ns1\nsX\ns2\n== a pods\np1\n", true},
		{"last state differs", "== a status\ns1\ns1b\n== a pods\np1\n", false},
		{"order differs", "== a status\ns2\ns1\ns2\n== a pods\np1\n", false},
		{"entity missing", "== a status\ns1\ns1b\ns2\n", false},
		{"nothing shared", "== a status\nx\ny\n== a pods\np1\n", false},
	} {
		_, err := Compare(real, tc.sim, "StatefulSet")
		if (err == nil) != tc.ok {
			t.Errorf("%s: Compare error %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	// Parallel pod management: replicas / ready / available interleave
	// differently; the states both have come in one order: grain.
	realSts := "== db status\nobserved rep 4 ready 4 avail 4 cur 2 upd 0 rev r1/r2\nobserved rep 3 ready 3 avail 3 cur 2 upd 0 rev r1/r2\nobserved rep 4 ready 3 avail 3 cur 2 upd 1 rev r1/r2\nobserved rep 4 ready 4 avail 4 cur 2 upd 2 rev r1/r2\n"
	simSts := "== db status\nobserved rep 4 ready 4 avail 4 cur 2 upd 0 rev r1/r2\nobserved rep 2 ready 2 avail 2 cur 2 upd 0 rev r1/r2\nobserved rep 4 ready 4 avail 4 cur 2 upd 2 rev r1/r2\n"
	diffs, err := Compare(realSts, simSts, "StatefulSet")
	require.NoError(t, err)
	require.Len(t, diffs, 1)
	assert.Equal(t, "each refines the other", diffs[0].Verdict())
	assert.Equal(t, "StatefulSet", diffs[0].Kind)
	_, err = Compare(realSts, "== db status\nobserved rep 4 ready 4 avail 4 cur 2 upd 2 rev r1/r2\nobserved rep 4 ready 4 avail 4 cur 2 upd 0 rev r1/r2\nobserved rep 4 ready 4 avail 4 cur 2 upd 2 rev r1/r2\n", "StatefulSet")
	assert.Error(t, err, "a revision count going back where the real one went forward differs in order")
}

// Format and Parse round-trip.
func TestFormatParse(t *testing.T) {
	s := "== a pods\np1\np2\n== a status\ns1\n"
	assert.Equal(t, s, Format(Parse("# comment\n"+s, "DaemonSet")))
}
