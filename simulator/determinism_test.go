package simulator

import (
	"os"
	"strings"
	"testing"
)

// TestSameSeedSameRun: a script with random stage delays and generated pod
// names replays byte for byte from its seed, and a different seed changes it.
func TestSameSeedSameRun(t *testing.T) {
	data, err := os.ReadFile("testdata/transcripts/jitter.txt")
	if err != nil {
		t.Fatal(err)
	}
	script, _, _ := strings.Cut(string(data), transcriptSep)
	a, errA := runTranscript(script)
	b, errB := runTranscript(script)
	c, errC := runTranscript(strings.Replace(script, "\nseed 7\n", "\nseed 8\n", 1))
	if errA != nil || errB != nil || errC != nil {
		t.Fatal(errA, errB, errC)
	}
	if a != b {
		t.Errorf("same seed, different runs:\n%s", lineDiff(a, b))
	}
	if a == c {
		t.Errorf("seeds 7 and 8 gave the same run")
	}
}

// TestSameSeedSameRunWorkloads: the StatefulSet and DaemonSet transcripts
// (pod names of a DaemonSet are generated from the seed) replay byte for
// byte, and a DaemonSet's pod names change with the seed.
func TestSameSeedSameRunWorkloads(t *testing.T) {
	for _, f := range []string{"sts_rolling_ordered.txt", "sts_partition.txt", "sts_parallel.txt", "sts_ondelete.txt",
		"ds_surge.txt", "ds_unavailable.txt", "ds_ondelete.txt"} {
		data, err := os.ReadFile("testdata/transcripts/" + f)
		if err != nil {
			t.Fatal(err)
		}
		script, _, _ := strings.Cut(string(data), transcriptSep)
		a, errA := runTranscript("seed 7\n" + script)
		b, errB := runTranscript("seed 7\n" + script)
		c, errC := runTranscript("seed 8\n" + script)
		if errA != nil || errB != nil || errC != nil {
			t.Fatal(f, errA, errB, errC)
		}
		if a != b {
			t.Errorf("%s: same seed, different runs:\n%s", f, lineDiff(a, b))
		}
		if strings.HasPrefix(f, "ds_") && a == c {
			t.Errorf("%s: seeds 7 and 8 gave the same run", f)
		}
	}
}
