package workloads

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Compare lines up the real and the simulated sequences (Recorder.Format
// output) entity by entity. An entity agrees when both sequences are
// equal, or when the real one refines the simulator's: every simulated
// state appears in the real sequence in order, the last states are equal,
// and the real one only adds intermediate states — what the real
// controllers' informer lag and the kwok stages' spread in wall time add
// where the simulator acts at one instant (e.g. a DaemonSet's status
// written while only one of two new pods is in its cache). With
// concurrent (a Parallel StatefulSet, whose pods move at one instant in the
// simulator and milliseconds apart for real), a status that agrees neither
// way is compared once more on its revision counters alone (current,
// updated, revisions: what the update decided), replicas / ready /
// available dropped. It returns a verdict per entity and an error naming
// the entities that disagree.
func Compare(real, sim string, concurrent bool) ([]string, error) {
	r, s := sequences(real), sequences(sim)
	names := map[string]bool{}
	for k := range r {
		names[k] = true
	}
	for k := range s {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var verdicts, bad []string
	for _, k := range sorted {
		a, b := r[k], s[k]
		switch {
		case strings.Join(a, "\n") == strings.Join(b, "\n"):
			verdicts = append(verdicts, fmt.Sprintf("%s: equal (%d states)", k, len(a)))
		case refines(a, b):
			verdicts = append(verdicts, fmt.Sprintf("%s: real refines sim (%d real states, %d simulated)", k, len(a), len(b)))
		case concurrent && strings.HasSuffix(k, " status") && refines(revisionCounters(a), revisionCounters(b)):
			verdicts = append(verdicts, fmt.Sprintf("%s: real refines sim on the revision counters only (%d real states, %d simulated; replicas/ready/available interleave)", k, len(a), len(b)))
		default:
			verdicts = append(verdicts, fmt.Sprintf("%s: DIFFER", k))
			bad = append(bad, fmt.Sprintf("== %s\n-- real:\n%s\n-- simulator:\n%s", k, strings.Join(a, "\n"), strings.Join(b, "\n")))
		}
	}
	if len(bad) > 0 {
		return verdicts, fmt.Errorf("%s", strings.Join(bad, "\n"))
	}
	return verdicts, nil
}

// refines: real's last state is sim's and sim appears in real in order.
func refines(real, sim []string) bool {
	return len(real) > 0 && len(sim) > 0 && real[len(real)-1] == sim[len(sim)-1] && subsequence(sim, real)
}

var replicaCounters = regexp.MustCompile(`rep \d+ ready \d+ avail \d+ `)

// revisionCounters drops a StatefulSet status state's replicas, ready and
// available counts, collapsing the duplicates that leaves.
func revisionCounters(states []string) []string {
	var out []string
	for _, s := range states {
		s = replicaCounters.ReplaceAllString(s, "")
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// subsequence reports whether a appears in b in order.
func subsequence(a, b []string) bool {
	i := 0
	for _, x := range b {
		if i < len(a) && a[i] == x {
			i++
		}
	}
	return i == len(a)
}

// sequences parses Recorder.Format output.
func sequences(s string) map[string][]string {
	out := map[string][]string{}
	var cur string
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "== "):
			cur = strings.TrimPrefix(l, "== ")
			out[cur] = out[cur][:0:0]
		case l != "" && !strings.HasPrefix(l, "#"):
			out[cur] = append(out[cur], l)
		}
	}
	return out
}
