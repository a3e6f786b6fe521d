package workloads

import (
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	real := "== a status\ns1\ns1b\ns2\n== a pods\np1\n"
	for _, tc := range []struct {
		name, sim string
		ok        bool
	}{
		{"equal", "== a pods\np1\n== a status\ns1\ns1b\ns2\n", true},
		{"real refines", "== a status\ns1\ns2\n== a pods\np1\n", true},
		{"last state differs", "== a status\ns1\ns1b\n== a pods\np1\n", false},
		{"order differs", "== a status\ns2\ns1\ns2\n== a pods\np1\n", false},
		{"entity missing", "== a status\ns1\ns1b\ns2\n", false},
		{"extra sim state", "== a status\ns1\nsX\ns2\n== a pods\np1\n", false},
	} {
		_, err := Compare(real, tc.sim, false)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Compare error %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	// concurrent: the revision counters alone may refine.
	realSts := "== db status\nobserved rep 4 ready 4 avail 4 cur 2 upd 0 rev r1/r2\nobserved rep 3 ready 3 avail 3 cur 2 upd 0 rev r1/r2\nobserved rep 4 ready 3 avail 3 cur 2 upd 1 rev r1/r2\nobserved rep 4 ready 4 avail 4 cur 2 upd 2 rev r1/r2\n"
	simSts := "== db status\nobserved rep 4 ready 4 avail 4 cur 2 upd 0 rev r1/r2\nobserved rep 2 ready 2 avail 2 cur 2 upd 0 rev r1/r2\nobserved rep 4 ready 4 avail 4 cur 2 upd 2 rev r1/r2\n"
	if _, err := Compare(realSts, simSts, false); err == nil {
		t.Error("not concurrent: a replica count the real run never had must differ")
	}
	if _, err := Compare(realSts, simSts, true); err != nil {
		t.Errorf("concurrent: the revision counters refine: %v", err)
	}
	if _, err := Compare(realSts, strings.Replace(simSts, "cur 2 upd 2", "cur 1 upd 2", 1), true); err == nil {
		t.Error("concurrent: a different last state must differ")
	}
}
