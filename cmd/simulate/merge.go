package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// newMergeCommand is `simulate merge FILE...`: the shard results of one
// sweep (`simulate --seeds N --shard i/n`, any number of shards) merged
// into the summary and exit code of the unsharded run. Files that do not
// cover the sweep's seeds exactly once are refused with one line.
func newMergeCommand(stdout io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "merge FILE...",
		Short: "Merge the JSON results of a sharded --seeds sweep into the unsharded run's summary",
		Long: "Reads the results of `simulate --seeds N --shard i/n` (one JSON object per file; - is stdin) and\n" +
			"prints the summary `simulate --seeds N` prints for the same seeds, exiting with its code (0, or\n" +
			"3 when a run broke a property). The files must be shards of one sweep (same seeds, scenarios,\n" +
			"manifests and flags) that together cover every seed exactly once. -o json prints the merged\n" +
			"result instead (the same schema, shard 0/1; docs/sweeps.md).",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return withCode(exitBadInput, errors.New("merge needs the result files of the shards: simulate merge shard-*.json"))
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return withCode(exitBadInput, fmt.Errorf("-o %s: want text or json", output))
			}
			results := make([]namedResult, 0, len(args))
			for _, name := range args {
				r, err := readResult(name, cmd.InOrStdin())
				if err != nil {
					return withCode(exitBadInput, err)
				}
				results = append(results, namedResult{name, r})
			}
			merged, err := mergeResults(results)
			if err != nil {
				return withCode(exitBadInput, err)
			}
			if output == "json" {
				verr := sweepVerdict(merged)
				if err := writeResult(stdout, merged); err != nil {
					return err
				}
				return verr
			}
			return printSweep(stdout, merged, fmt.Sprintf("the %d shards' wall times added up", len(results)))
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withCode(exitBadInput, err) })
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text: the summary of the unsharded run; json: the merged result")
	return cmd
}

type namedResult struct {
	name string
	*sweepResult
}

// readResult reads one sweepResult from the file name (- is stdin),
// refusing unknown fields, another schema and trailing data.
func readResult(name string, stdin io.Reader) (*sweepResult, error) {
	var in io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, errors.Unwrap(err))
		}
		defer f.Close()
		in = f
	}
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	var r sweepResult
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a sweep result (simulate --seeds N --shard i/n writes one): %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON value: give each shard's result in its own file", name)
	}
	if r.Schema != sweepSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", name, r.Schema, sweepSchema)
	}
	if r.Shard.From < r.Seeds.From || r.Shard.last() > r.Seeds.last() {
		return nil, fmt.Errorf("%s: shard covers %s, outside the sweep's %s", name, r.Shard.seedRange, r.Seeds)
	}
	if len(r.Runs) != r.Shard.Count {
		return nil, fmt.Errorf("%s: shard covers %s but holds %d runs: the file is incomplete", name, r.Shard.seedRange, len(r.Runs))
	}
	for i, run := range r.Runs {
		if want := r.Shard.From + int64(i); run.Seed != want {
			return nil, fmt.Errorf("%s: run %d is seed %d, want %d (runs in seed order, one per seed of the shard)", name, i, run.Seed, want)
		}
	}
	return &r, nil
}

// mergeResults checks that rs are shards of one sweep covering each of
// its seeds exactly once and merges them, in seed order, into one result
// of shard 0/1; its shrunk schedule is that of the shard holding the
// first failing seed, as the unsharded run shrinks its first failure.
func mergeResults(rs []namedResult) (*sweepResult, error) {
	first := rs[0]
	for _, r := range rs[1:] {
		if err := sameSweep(first, r); err != nil {
			return nil, err
		}
	}
	sorted := slices.Clone(rs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Shard.From < sorted[j].Shard.From })
	next := first.Seeds.From
	var prev namedResult
	for _, r := range sorted {
		if r.Shard.Count == 0 {
			continue
		}
		switch {
		case r.Shard.From < next:
			return nil, fmt.Errorf("shards overlap: %s (%s) and %s (%s): give each shard once", prev.name, prev.Shard.seedRange, r.name, r.Shard.seedRange)
		case r.Shard.From > next:
			return nil, fmt.Errorf("shards missing: %s of %s are in none of the files", seedRange{From: next, Count: int(r.Shard.From - next)}, first.Seeds)
		}
		next, prev = r.Shard.last()+1, r
	}
	if end := first.Seeds.last() + 1; next != end {
		return nil, fmt.Errorf("shards missing: %s of %s are in none of the files", seedRange{From: next, Count: int(end - next)}, first.Seeds)
	}
	out := newResult(first.Seeds, shardRange{Index: 0, Of: 1, seedRange: first.Seeds}, first.Over, first.RunFlags, nil, 0)
	for _, r := range sorted {
		if len(out.Failures) == 0 && len(r.Failures) > 0 {
			out.Shrunk = r.Shrunk
		}
		out.Runs = append(out.Runs, r.Runs...)
		out.Failures = append(out.Failures, r.Failures...)
		out.WallSeconds += r.WallSeconds
	}
	out.setVerdict(sweepVerdict(out))
	return out, nil
}

// sameSweep refuses b when it is not a shard of a's sweep.
func sameSweep(a, b namedResult) error {
	diff := func(what, x, y string) error {
		return fmt.Errorf("%s and %s are not shards of one sweep: %s %s, %s (run every shard with the same flags)", a.name, b.name, what, x, y)
	}
	switch {
	case a.Seeds != b.Seeds:
		return diff("seeds", a.Seeds.String(), b.Seeds.String())
	case a.Over != b.Over:
		return diff("runs over", strings.TrimSpace(a.Over), strings.TrimSpace(b.Over))
	case !slices.Equal(a.RunFlags, b.RunFlags):
		return diff("flags", fmt.Sprintf("%q", a.RunFlags), fmt.Sprintf("%q", b.RunFlags))
	}
	return nil
}
