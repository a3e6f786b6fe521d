package workloads

import "testing"

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
		_, err := Compare(real, tc.sim)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Compare error %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
