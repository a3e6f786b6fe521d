package realbench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// OperatorSends are the moments the operator logged for one upgrade's
// handoff, read from its JSON log (operator/controller: "status written"
// and "image written", each with "sent", the time the request was sent,
// RFC 3339 with nanoseconds): the status patch that first recorded the
// dependent component Upgrading (the decision: its dependencies rolled
// out), and the dependent's image write. Zero when absent.
type OperatorSends struct {
	DependentUpgrading time.Time
	DependentImage     time.Time
}

// ReadOperatorSends reads an operator log (one zap JSON object a line, as
// cmd/upgrade-operator writes it) and returns, by the upgrade's namespace,
// the first status write whose "components" ("name=Phase,…") shows
// dependent Upgrading and the first "image written" of component
// dependent. Lines that are not JSON objects are skipped (a process may
// print other text); a "sent" that does not parse is an error naming the
// line.
func ReadOperatorSends(r io.Reader, dependent string) (map[string]OperatorSends, error) {
	out := map[string]OperatorSends{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		var l struct {
			Msg        string `json:"msg"`
			Namespace  string `json:"namespace"`
			Components string `json:"components"`
			Component  string `json:"component"`
			Sent       string `json:"sent"`
		}
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &l) != nil || l.Sent == "" {
			continue
		}
		var upgrading, image bool
		switch l.Msg {
		case "status written":
			upgrading = hasComponentPhase(l.Components, dependent, "Upgrading")
		case "image written":
			image = l.Component == dependent
		}
		if !upgrading && !image {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, l.Sent)
		if err != nil {
			return nil, fmt.Errorf("operator log line %d: sent %q: %w", n, l.Sent, err)
		}
		s := out[l.Namespace]
		if upgrading && s.DependentUpgrading.IsZero() {
			s.DependentUpgrading = at
		}
		if image && s.DependentImage.IsZero() {
			s.DependentImage = at
		}
		out[l.Namespace] = s
	}
	return out, sc.Err()
}

// hasComponentPhase reports whether components ("worker=Rolled,api=Upgrading")
// has name at phase.
func hasComponentPhase(components, name, phase string) bool {
	for c := range strings.SplitSeq(components, ",") {
		if c == name+"="+phase {
			return true
		}
	}
	return false
}

// HandoffParts splits the handoffs of a run in three, each over the
// upgrades that have all four moments, in seconds:
//   - Decision: last old worker pod deleted (seen by the driver) → the
//     status patch recording the API Upgrading sent; negative when the
//     operator saw the deletion before the driver did.
//   - Fence: that status patch sent → the API image write sent: the
//     patch's round trip (it carries the optimistic lock that makes the
//     write follow the current spec) and the next pass.
//   - Write: the API image write sent → seen by the driver: the write's
//     round trip and the watch event's delivery.
//
// The three add up to the handoff of each upgrade.
type HandoffParts struct {
	Decision Stats `json:"decision"`
	Fence    Stats `json:"fence"`
	Write    Stats `json:"write"`
}

// SplitHandoffs computes HandoffParts from each upgrade's Moments (seconds
// since start) and the operator's sends, both keyed by namespace.
func SplitHandoffs(start time.Time, moments map[string]Moments, sends map[string]OperatorSends) HandoffParts {
	var decision, fence, write []float64
	for ns, m := range moments {
		s, ok := sends[ns]
		if !ok || s.DependentUpgrading.IsZero() || s.DependentImage.IsZero() || m.WorkerGone < 0 || m.APIWrite < 0 {
			continue
		}
		upgrading, image := s.DependentUpgrading.Sub(start).Seconds(), s.DependentImage.Sub(start).Seconds()
		decision = append(decision, upgrading-m.WorkerGone)
		fence = append(fence, image-upgrading)
		write = append(write, m.APIWrite-image)
	}
	return HandoffParts{Decision: Summarize(decision), Fence: Summarize(fence), Write: Summarize(write)}
}
