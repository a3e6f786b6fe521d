package app

import "testing"

func TestNodesTag(t *testing.T) {
	for _, tc := range []struct {
		tags []string
		want int
		err  bool
	}{
		{nil, 0, false},
		{[]string{"@real", "@nodes-2"}, 2, false},
		{[]string{"@nodes-x"}, 0, true},
		{[]string{"@nodes-0"}, 0, true},
	} {
		got, err := nodesTag(tc.tags)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("nodesTag(%q) = %d, %v; want %d, error %v", tc.tags, got, err, tc.want, tc.err)
		}
	}
}
