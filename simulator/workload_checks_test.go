package simulator

import (
	"fmt"
	"regexp"
	"strings"
)

// Assertions on the StatefulSet and DaemonSet transcripts (added to
// transcriptChecks after transcript_checks_test.go's init, files being
// initialised in name order).
func init() {
	transcriptChecks["sts_rolling_ordered.txt"] = []func(string) error{
		oldPodGoneBeforeSameName,
		has(`sts db gen=2 og=1 rep=3 ready=3 avail=3 cur=3 upd=3`, "the new generation not yet observed, status still complete"),
		has(`pod db-2 Running ready rev=(\S+) .*\n(.*\n)*.*pod db-1 Running ready terminating`, "db-1 deleted only after the new db-2 is ready"),
		has(`pod db-1 Running ready rev=(\S+) .*\n(.*\n)*.*pod db-0 Running ready terminating`, "db-0 deleted only after the new db-1 is ready"),
		has(`sts db gen=2 og=2 rep=3 ready=3 avail=3 cur=2 upd=0 rev=(\S+)/(\S+)`, "the update revision, with db-2 terminating still counted in rep and ready"),
		lastLine(` sts db `, `rep=3 ready=3 avail=3 cur=3 upd=3 rev=(\S+)/(\S+)$`),
		completeOnlyAfterLastOldPodDeleted(`sts db gen=2 og=2 rep=3 ready=3 avail=3 cur=3 upd=3`),
	}
	transcriptChecks["sts_partition.txt"] = []func(string) error{
		oldPodGoneBeforeSameName,
		noLinesBetween("> set image=v2", "> set partition=0", `pod db-0 .*terminating`, "db-0 (below the partition) replaced"),
		has(`t=44.000s sts db gen=2 og=2 rep=3 ready=3 avail=3 cur=1 upd=2 `, "the staged rollout stops with currentRevision != updateRevision"),
		lastLine(` sts db `, `gen=3 og=3 rep=3 ready=3 avail=3 cur=3 upd=3`),
	}
	transcriptChecks["sts_parallel.txt"] = []func(string) error{
		oldPodGoneBeforeSameName,
		has(`t=30.000s pod db-3 Running ready terminating.*\nt=30.000s pod db-2 Running ready terminating`, "the two highest ordinals deleted together (maxUnavailable 2)"),
		lacks(`t=3[0-6]\.\d+s pod db-[01] .*terminating`, "a low ordinal deleted before the new high ones are available"),
		completeOnlyAfterLastOldPodDeleted(`sts db gen=2 og=2 rep=4 ready=4 avail=4 cur=4 upd=4`),
	}
	transcriptChecks["sts_ondelete.txt"] = []func(string) error{
		noLinesBetween("> set image=v2", "> delete-pod db-1", `terminating`, "a pod replaced by the controller under OnDelete"),
		has(`sts db gen=2 og=2 rep=3 ready=3 avail=3 cur=3 upd=0 `, "updateRevision moves, no pod updated"),
		has(`pod db-1 Running ready rev=db-c7c57cc95`, "the deleted pod back at the update revision"),
		lastLine(` sts db `, `cur=2 upd=1 rev=(\S+)/(\S+)$`),
		lacks(`pod db-[02] .*terminating`, "a pod nobody deleted replaced"),
	}
	transcriptChecks["ds_ondelete.txt"] = []func(string) error{
		noLinesBetween("> set image=v2", "> delete-pod-on", `terminating`, "a pod replaced by the controller under OnDelete"),
		has(`pod agent-\S+ Running ready rev=74bd4ff866 node=kwok-node-1`, "the deleted pod back at the new revision on its node"),
		lacks(`node=kwok-node-0\n(.*\n)*.*terminating.*node=kwok-node-0`, "the other node's pod replaced"),
		lastLine(` ds agent `, `upd=1 ready=2 avail=2 unavail=0`),
	}
	transcriptChecks["ds_surge.txt"] = []func(string) error{
		oldDaemonPodGoesAfterNewReady,
		has(`ds agent gen=2 og=2 desired=2 current=2 upd=0 ready=2 avail=2 unavail=0`, "the new revision: no node's oldest pod is updated"),
		lacks(`unavail=[12]`, "an unavailable node with maxUnavailable 0"),
		completeOnlyAfterLastOldPodDeleted(`ds agent gen=2 og=2 desired=2 current=2 upd=2 ready=2 avail=2 unavail=0`),
	}
	transcriptChecks["ds_unavailable.txt"] = []func(string) error{
		atMostOnePodPerNode,
		has(`ds agent gen=2 og=2 desired=2 current=2 upd=1 ready=1 avail=1 unavail=1`, "one node unavailable at a time"),
		lacks(`unavail=2 mis=0\n(.*\n)*.*> set`, "both nodes unavailable after the first settle"),
		completeOnlyAfterLastOldPodDeleted(`ds agent gen=2 og=2 desired=2 current=2 upd=2 ready=2 avail=2 unavail=0`),
	}
}

func lastLine(contains, re string) func(string) error {
	r := regexp.MustCompile(re)
	return func(out string) error {
		var last string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, contains) {
				last = l
			}
		}
		if !r.MatchString(last) {
			return fmt.Errorf("last %q line %q does not match %q", contains, last, re)
		}
		return nil
	}
}

// completeOnlyAfterLastOldPodDeleted: after the update, the status line
// saying "every replica updated and available" first appears after the
// last old pod's final deletion — the counters do not say done while an
// old pod terminates (StatefulSet: terminating pods are not updated;
// DaemonSet: a node's oldest pod, the terminating old one, is counted).
func completeOnlyAfterLastOldPodDeleted(complete string) func(string) error {
	return func(out string) error {
		_, run, _ := strings.Cut(out, "> run")
		lines := strings.Split(run, "\n")
		lastDeleted, firstComplete := -1, -1
		for i, l := range lines {
			if strings.Contains(l, " pod ") && strings.HasSuffix(l, " deleted") {
				lastDeleted = i
			}
			if firstComplete < 0 && strings.Contains(l, complete) {
				firstComplete = i
			}
		}
		if lastDeleted < 0 || firstComplete < lastDeleted {
			return fmt.Errorf("status complete (%q, line %d) before the last old pod was deleted (line %d)", complete, firstComplete, lastDeleted)
		}
		return nil
	}
}

var podLine = regexp.MustCompile(`^t=\S+ pod (\S+) (.*)$`)

// oldPodGoneBeforeSameName: a StatefulSet's pod-N is created only when no
// pod of that name exists (identity: the old pod-N is deleted first).
func oldPodGoneBeforeSameName(out string) error {
	live := map[string]bool{}
	for i, l := range strings.Split(out, "\n") {
		m := podLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		switch {
		case m[2] == "deleted":
			delete(live, m[1])
		case strings.HasPrefix(m[2], "Pending unscheduled"):
			if live[m[1]] {
				return fmt.Errorf("line %d: pod %s created while a pod of that name still exists", i+1, m[1])
			}
			live[m[1]] = true
		}
	}
	return nil
}

// oldDaemonPodGoesAfterNewReady: with surge, a node's old pod starts
// terminating only once a new pod on that node is ready.
func oldDaemonPodGoesAfterNewReady(out string) error {
	_, run, _ := strings.Cut(out, "> set image=v2")
	newReady := map[string]bool{}
	rev := regexp.MustCompile(`rev=(\S+) node=(\S+)`)
	var newHash string
	for i, l := range strings.Split(run, "\n") {
		m, r := podLine.FindStringSubmatch(l), rev.FindStringSubmatch(l)
		if m == nil || r == nil {
			continue
		}
		if newHash == "" && strings.HasPrefix(m[2], "Pending") {
			newHash = r[1]
		}
		if r[1] == newHash && strings.Contains(m[2], "ready") {
			newReady[r[2]] = true
		}
		if r[1] != newHash && strings.Contains(m[2], "terminating") && !newReady[r[2]] {
			return fmt.Errorf("line %d: old pod on %s terminating before a new pod there is ready", i+1, r[2])
		}
	}
	return nil
}

// atMostOnePodPerNode: without surge, a node never holds two live pods.
func atMostOnePodPerNode(out string) error {
	rev := regexp.MustCompile(`node=(\S+)`)
	nodeOf, live := map[string]string{}, map[string]int{}
	for i, l := range strings.Split(out, "\n") {
		m := podLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[2] == "deleted" {
			live[nodeOf[m[1]]]--
			continue
		}
		if r := rev.FindStringSubmatch(l); r != nil && nodeOf[m[1]] == "" {
			nodeOf[m[1]] = r[1]
			if live[r[1]]++; live[r[1]] > 1 {
				return fmt.Errorf("line %d: two pods on %s", i+1, r[1])
			}
		}
	}
	return nil
}
