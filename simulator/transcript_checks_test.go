package simulator

import (
	"fmt"
	"regexp"
	"strings"
)

func init() {
	transcriptChecks = map[string][]func(string) error{
		"rolling_surge1_unavailable0.txt": {
			has(`deploy web gen=2 og=1 rep=3 upd=3 ready=3 avail=3`, "generation not yet observed, status still complete"),
			has(`deploy web gen=2 og=2 rep=4 upd=1 ready=3 avail=3`, "the surge window"),
			has(`rep=3 upd=3 ready=3 avail=3 unavail=0 term=[1-9]`, "terminating pods while rep == upd == avail == 3"),
			lacks(` rep=([5-9]|\d\d) `, "more than spec+maxSurge pods counted"),
			lacks(` avail=[0-2] `, "availability below spec-maxUnavailable"),
			lastDeploy(`term=0 Progressing=True/NewReplicaSetAvailable`),
		},
		"rolling_surge0_unavailable1.txt": {
			lacks(` rep=([4-9]|\d\d) `, "surge with maxSurge 0"),
			lacks(` avail=[01] `, "availability below spec-maxUnavailable"),
			lastDeploy(`rep=3 upd=3 ready=3 avail=3 unavail=0 term=0 Progressing=True/NewReplicaSetAvailable`),
		},
		"recreate.txt": {
			oldPodsGoneBeforeNewPods,
			lastDeploy(`rep=2 upd=2 ready=2 avail=2 unavail=0 term=0 Progressing=True/NewReplicaSetAvailable`),
		},
		"bad_image_deadline.txt": {
			has(`app:ErrImagePull`, "pull error"),
			has(`app:ImagePullBackOff`, "pull back-off"),
			has(`t=91.000s deploy web .* Progressing=False/ProgressDeadlineExceeded`, "deadline 30 s after the last progress, re-checked 1 s late"),
			lacks(`pod web-\S+ Running ready terminating`, "an old pod removed while the new one never became available"),
		},
		"scale_from_zero_bad_image.txt": {
			has(`app:ErrImagePull`, "pull error"),
			lacks(`ProgressDeadlineExceeded`, "a deadline on the scaling path"),
			lastDeploy(`rep=2 upd=2 ready=0 avail=0 unavail=2`),
		},
		"min_ready_seconds.txt": {
			has(`rep=4 upd=1 ready=4 avail=3`, "a ready pod not yet available"),
			has(`t=132.000s rs web-\S+ replicas=2`, "the first old pod goes 10 s after the new one is ready"),
		},
		"crashloop.txt": {
			has(`app:CrashLoopBackOff app:restarts=5`, "crash-loop back-off"),
			has(`Progressing=False/ProgressDeadlineExceeded`, "deadline"),
			lacks(`pod web-\S+ Running ready terminating`, "the old pod removed"),
		},
		"never_ready.txt": {
			has(`pod web-\S+ Running\n`, "the new pod runs"),
			lacks(`pod web-\S+ Running ready`, "a ready new pod"),
			has(`Progressing=False/ProgressDeadlineExceeded`, "deadline"),
		},
		"paused.txt": {
			noLinesBetween("> pause", "> resume", `rs web-`, "ReplicaSet scaled while paused"),
			has(`Progressing=Unknown/DeploymentPaused`, "paused condition"),
			has(`Progressing=Unknown/DeploymentResumed`, "resumed condition"),
		},
		"percentages.txt": {
			lacks(` rep=(1[4-9]|[2-9]\d) `, "more than 10+3 pods"),
			lacks(` avail=[0-7] `, "fewer than 10-2 available"),
		},
		"invalid_image_name.txt": {
			has(`app:InvalidImageName`, "invalid image name"),
			lacks(`ErrImagePull`, "a pull of an unparsable reference"),
		},
		"create_container_config_error.txt": {
			has(`t=60.000s pod web-\S+ Pending app:CreateContainerConfigError`, "the config error"),
			has(`t=100.000s pod web-\S+ Running`, "start on the first retry after the ConfigMap exists"),
		},
		"scale_during_rollout.txt": {
			has(`t=130.000s rs web-\S+ replicas=14\nt=130.000s rs web-\S+ replicas=9\n`, "13 → 23 spread 8:5 as 14:9"),
			lastDeploy(`gen=3 og=3 rep=20 upd=20 ready=20 avail=20 unavail=0 term=0`),
		},
		"long_grace_single_replica.txt": {
			has(`t=62\.00\ds deploy worker .*rep=1 upd=1 ready=1 avail=1 unavail=0 term=1 Progressing=True/NewReplicaSetAvailable`, "complete by the counters while the old pod runs"),
			has(`t=122.000s pod worker-\S+ deleted`, "the old pod exits at the end of its 60 s grace period"),
		},
	}
}

func has(re, what string) func(string) error {
	r := regexp.MustCompile(re)
	return func(out string) error {
		if !r.MatchString(out) {
			return fmt.Errorf("expected %s: no line matches %q", what, re)
		}
		return nil
	}
}

func lacks(re, what string) func(string) error {
	r := regexp.MustCompile(re)
	return func(out string) error {
		if l := r.FindString(out); l != "" {
			return fmt.Errorf("unexpected %s: %q matches", what, re)
		}
		return nil
	}
}

// lastDeploy checks the last Deployment status line.
func lastDeploy(re string) func(string) error {
	r := regexp.MustCompile(re)
	return func(out string) error {
		var last string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, " deploy ") {
				last = l
			}
		}
		if !r.MatchString(last) {
			return fmt.Errorf("last deployment status %q does not match %q", last, re)
		}
		return nil
	}
}

func noLinesBetween(from, to, re, what string) func(string) error {
	r := regexp.MustCompile(re)
	return func(out string) error {
		i, j := strings.Index(out, from), strings.Index(out, to)
		if i < 0 || j < i {
			return fmt.Errorf("markers %q / %q not found in order", from, to)
		}
		if r.MatchString(out[i:j]) {
			return fmt.Errorf("unexpected %s", what)
		}
		return nil
	}
}

// oldPodsGoneBeforeNewPods: after the image change, no pod is created until
// every terminating pod has been deleted (Recreate).
func oldPodsGoneBeforeNewPods(out string) error {
	_, run, _ := strings.Cut(out, "> run")
	lines := strings.Split(run, "\n")
	lastDeleted, firstCreated := -1, -1
	for i, l := range lines {
		if strings.Contains(l, " pod ") && strings.HasSuffix(l, " deleted") {
			lastDeleted = i
		}
		if firstCreated < 0 && strings.HasSuffix(l, "Pending unscheduled") {
			firstCreated = i
		}
	}
	if lastDeleted < 0 || firstCreated < 0 || firstCreated < lastDeleted {
		return fmt.Errorf("a new pod was created (line %d) before the last old pod was deleted (line %d)", firstCreated, lastDeleted)
	}
	return nil
}
