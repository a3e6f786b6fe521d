// Command simulate runs ApplicationUpgrades in the discrete-event simulator:
// by default the embedded demo (deploy/demo + deploy/samples), or the
// manifests of --manifests DIR (deploy/demo-graph: a v1beta1 diamond). It
// prints the transcript and exits non-zero with one readable line when a
// manifest is bad, an upgrade does not complete, or an image was written
// while an old pod of a component it depends on existed.
//
// With faults (scenarios/faults): --faults SPEC runs one schedule,
// --seeds N runs N seeded schedules with a summary, --crash-sweep kills
// the operator after each of its API calls in turn; --timeline draws the
// run as SVG. A failing schedule is shrunk and printed as the one command
// that replays it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
)

func main() {
	if err := newCommand(os.Stdout).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(exitCode(err))
	}
}

type options struct {
	manifestsDir string
	seed         int64
	seedSet      bool
	events       string
	quiet        bool
	limit        simrunLimit
	faults       string
	scenario     string
	seeds        int
	shard        shardFlag
	workers      int
	crashSweep   bool
	timeline     string
	noShrink     bool
	progress     bool
	output       string
	stdin        io.Reader
}

func newCommand(stdout io.Writer) *cobra.Command {
	o := options{}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run an ordered ApplicationUpgrade in the simulator, in virtual time",
		Long: "Runs the demo upgrade (job-worker before job-api, 3 replicas each) or the manifests of\n" +
			"--manifests in a simulated cluster and prints kubectl's view at each phase change,\n" +
			"a per-pod timeline and the ordering verdict.\n\n" +
			"Demos:\n" +
			"  simulate                                  v1alpha1: job-worker, then job-api (embedded)\n" +
			"  simulate --manifests deploy/demo-graph    v1beta1 diamond: shop-db, then shop-worker and\n" +
			"                                            shop-indexer together, then shop-api; shows each\n" +
			"                                            component's wave and phase, every edge's handoff\n" +
			"  simulate --manifests deploy/demo-stateful mixed kinds: store-db (StatefulSet) and node-agent\n" +
			"                                            (DaemonSet) first, then store-worker, then store-api\n" +
			"  kustomize build DIR | simulate --manifests -   manifests from stdin\n\n" +
			"Sharded sweeps (docs/sweeps.md): simulate --seeds N --shard i/n prints the JSON result of\n" +
			"slice i of n of the seeds; simulate merge FILE... prints the unsharded run's summary.\n\n" +
			"Exit codes: 0 every upgrade completed in order; 1 internal error; 2 bad input (a flag, a\n" +
			"manifest, a --faults spec or its target); 3 ordering violation (with --faults / --seeds / --crash-sweep: a run broke a property);\n" +
			"4 an upgrade did not complete (Failed, or stuck past --limit).",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return withCode(exitBadInput, fmt.Errorf("unexpected argument %q: simulate takes flags only (manifests with --manifests DIR or -)", args[0]))
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.seedSet = cmd.Flags().Changed("seed")
			o.stdin = cmd.InOrStdin()
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if o.output != "text" && o.output != "json" {
				return withCode(exitBadInput, fmt.Errorf("-o %s: want text or json", o.output))
			}
			if o.output == "json" && o.crashSweep {
				return withCode(exitBadInput, fmt.Errorf("-o json describes one run, one --faults run or a --seeds sweep: drop --crash-sweep"))
			}
			if err := checkShard(o, cmd.Flags().Changed("output")); err != nil {
				return withCode(exitBadInput, err)
			}
			if o.crashSweep || o.seeds > 0 {
				batchGC()
			}
			switch {
			case o.crashSweep:
				return runSweep(ctx, o, cmd.Flags().Changed("scenario"), stdout, cmd.ErrOrStderr())
			case o.seeds > 0:
				return runSeeds(ctx, o, cmd.Flags().Changed("scenario"), stdout, cmd.ErrOrStderr())
			case o.faults != "" || cmd.Flags().Changed("scenario"):
				return runFaults(ctx, o, cmd.Flags().Changed("scenario"), stdout)
			}
			return run(ctx, o, stdout)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withCode(exitBadInput, flagError(err)) })
	cmd.AddCommand(newMergeCommand(stdout))
	f := cmd.Flags()
	f.StringVar(&o.manifestsDir, "manifests", "", "directory of YAML manifests (Deployments, Namespaces, ApplicationUpgrades), a kustomize directory (built with kustomize from PATH or ./bin), or - for a YAML stream on stdin; default: the embedded demo")
	f.StringVarP(&o.output, "output", "o", "text", "text: the transcript and a verdict line; json: one JSON object (verdict, exit code, per-upgrade phase and per-edge handoffs), no transcript")
	f.Int64Var(&o.seed, "seed", 1, "seed of every random choice; the same seed replays the same run")
	f.StringVar(&o.events, "events", "", "write the JSON Lines event log to this file")
	f.BoolVar(&o.quiet, "quiet", false, "print only the verdict")
	f.Var(&o.limit, "limit", "virtual time after which an unfinished upgrade counts as stuck (e.g. 30m)")
	f.StringVar(&o.faults, "faults", "", "run with these faults: a spec such as conflict@3:n=2,crash@17,node-lost@12.5s (see docs/faults.md); a fault aimed at a component names it with dep= (worker or api of a v1alpha1 upgrade, any component of a graph: bad-image:dep=db, scale@5s:dep=indexer); \"random\" for the schedule --seed draws, or \"none\"")
	f.StringVar(&o.scenario, "scenario", "demo", "built-in scenario for --faults and --crash-sweep: "+strings.Join(faults.ScenarioNames(), ", "))
	f.IntVar(&o.seeds, "seeds", 0, "run this many seeded fault schedules (seeds --seed, --seed+1, ...; from 1 when --seed is not given) and print a summary")
	f.Var(&o.shard, "shard", "with --seeds: run only shard i of n (0 ≤ i < n; contiguous, disjoint slices of the seeds) and print its JSON result for simulate merge (docs/sweeps.md)")
	f.IntVar(&o.workers, "workers", 0, "parallel runs for --seeds and --crash-sweep (default: GOMAXPROCS)")
	f.BoolVar(&o.crashSweep, "crash-sweep", false, "for the demo and each built-in scenario (or --manifests), kill the operator after its k-th API call, for every k")
	f.StringVar(&o.timeline, "timeline", "", "write an SVG timeline of the run (pods, writes, phases, faults) to this file")
	f.BoolVar(&o.noShrink, "no-shrink", false, "do not shrink a failing schedule")
	f.BoolVar(&o.progress, "progress", isTerminal(os.Stderr), "show a progress bar for --seeds and --crash-sweep (default: only when stderr is a terminal)")
	return cmd
}

// checkShard refuses --shard where it means nothing: without --seeds,
// with --crash-sweep, or with -o text (a shard's output is its JSON result).
func checkShard(o options, outputSet bool) error {
	switch {
	case !o.shard.set:
		return nil
	case o.seeds == 0:
		return fmt.Errorf("--shard %s needs --seeds N: it runs slice %d of %d of those seeds", &o.shard, o.shard.index, o.shard.count)
	case o.crashSweep:
		return fmt.Errorf("--shard works with --seeds only, not --crash-sweep")
	case outputSet && o.output != "json":
		return fmt.Errorf("--shard prints a JSON result for simulate merge: drop -o %s", o.output)
	}
	return nil
}

// flagError words a flag value strconv refused without strconv's
// wording ("strconv.ParseInt: parsing ...: invalid syntax").
func flagError(err error) error {
	var bad *pflag.InvalidValueError
	var num *strconv.NumError
	if !errors.As(err, &bad) || !errors.As(err, &num) {
		return err
	}
	want := "want an integer"
	switch {
	case num.Func == "ParseBool":
		want = "want true or false"
	case errors.Is(num.Err, strconv.ErrRange):
		want = "out of range"
	}
	return fmt.Errorf("invalid argument %q for \"--%s\" flag: %s", bad.GetValue(), bad.GetFlag().Name, want)
}

// loadManifests loads --manifests, or the embedded demo, refusing what
// the API server's admission would (simrun.Admission). Errors about the
// directory name it as given.
func loadManifests(o options) ([]clientObject, error) {
	objs, err := loadManifestObjects(o)
	return objs, withCode(exitBadInput, err)
}

func loadManifestObjects(o options) ([]clientObject, error) {
	var fsys fs.FS = deploy.Demo
	src, err := manifestSource(o)
	if err != nil {
		return nil, err
	}
	if src != nil {
		fsys = src
	} else if dir := o.manifestsDir; dir != "" {
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("--manifests %s: no such directory", dir)
		case err != nil:
			return nil, fmt.Errorf("--manifests %s: %w", dir, errors.Unwrap(err))
		case !fi.IsDir():
			return nil, fmt.Errorf("--manifests %s: not a directory: give the directory that holds the YAML manifests", dir)
		}
		fsys = os.DirFS(dir)
	}
	objs, err := manifests.LoadFSWith(fsys, ".", manager.NewScheme(),
		manifests.Options{Kinds: simrun.ModeledKinds, Check: simrun.Admission()})
	if errors.Is(err, manifests.ErrNoManifests) {
		return nil, fmt.Errorf("--manifests %s: no *.yaml or *.yml files in it", o.manifestsDir)
	}
	if err != nil {
		return nil, err
	}
	if !hasUpgrade(objs) {
		return nil, fmt.Errorf("no ApplicationUpgrade in the manifests: add one (see deploy/samples)")
	}
	return objs, nil
}

func run(ctx context.Context, o options, stdout io.Writer) error {
	objs, err := loadManifests(o)
	if err != nil {
		return err
	}
	// a single run records the operator's calls: the judge checks its
	// phase claims too (--seeds and --crash-sweep judge the event log)
	cfg := simrun.Config{Objects: objs, Seed: o.seed, Limit: o.limit.d, RecordCalls: true}
	if !o.quiet && o.output != "json" {
		cfg.Transcript = stdout
	}
	if o.events != "" {
		f, err := os.Create(o.events)
		if err != nil {
			return fmt.Errorf("create event log: %w", err)
		}
		defer f.Close()
		cfg.EventLog = f
	}
	res, err := simrun.Run(ctx, cfg)
	if nf := (*simrun.NotFinishedError)(nil); errors.As(err, &nf) {
		return withCode(exitNotComplete, fmt.Errorf("seed %d: %w", o.seed, err))
	}
	if err != nil {
		return fmt.Errorf("seed %d: %w", o.seed, err)
	}
	if o.timeline != "" {
		if err := writeTimeline(o.timeline, replay(o), res, nil, 0); err != nil {
			return err
		}
	}
	if o.output == "json" {
		verr := verdictOf(res, o)
		if err := writeJSON(stdout, res, o, verr); err != nil {
			return err
		}
		return withArtifacts(verr, res, artifactsDir(o, o.seed, ""), "replay: "+replay(o))
	}
	return verdict(res, o, stdout)
}

// batchGC trades memory for CPU in batch modes: a run allocates ~25 MB
// of short-lived objects and keeps little, so collecting at 4× the live
// heap instead of 2× saves ~30% CPU. GOGC, when set, wins.
func batchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

func hasUpgrade(objs []clientObject) bool {
	for _, obj := range objs {
		switch obj.(type) {
		case *upgradesv1alpha1.ApplicationUpgrade, *upgradesv1beta1.ApplicationUpgrade:
			return true
		}
	}
	return false
}

// verdict fails on a violation first, then on an upgrade that is not
// Completed, with the command that replays the run and the artifacts
// written for it (artifactsDir).
func verdict(res *simrun.Result, o options, stdout io.Writer) error {
	if err := verdictOf(res, o); err != nil {
		return withArtifacts(err, res, artifactsDir(o, o.seed, ""), "replay: "+replay(o))
	}
	fmt.Fprintf(stdout, "OK: %d upgrade(s) completed in %s virtual, no ordering violation (seed %d)\n", len(res.Upgrades), res.Elapsed, o.seed)
	return nil
}

// verdictOf is the one judge's verdict (simrun.Result.Judged: the
// porcupine model, the invariants, every edge's ordering) and
// judge.Verdict's (an upgrade not Completed), with its exit code:
// exitViolation when the judge fails or an edge's report has a
// violation, else exitNotComplete.
func verdictOf(res *simrun.Result, o options) error {
	err := judge.Verdict(res.Upgrades, res.Reports)
	code := exitNotComplete
	for _, r := range res.Reports {
		if len(r.Violations) > 0 {
			code = exitViolation
		}
	}
	if j := res.Judged; j != nil && !j.OK() {
		if code != exitViolation {
			err = fmt.Errorf("violation: %s", j.Summary())
		}
		code = exitViolation
	}
	if err == nil {
		return nil
	}
	return withCode(code, fmt.Errorf("%w (replay: %s)", err, replay(o)))
}

// withArtifacts is verr with the line naming the artifacts of res it
// wrote (writeArtifacts) when verr is a violation; any other verdict (an
// upgrade not completed: the product's own verdict, one line) as is.
func withArtifacts(verr error, res *simrun.Result, dir, notes string) error {
	if exitCode(verr) != exitViolation {
		return verr
	}
	line, err := writeArtifacts(dir, res, notes)
	if err != nil {
		return withCode(exitCode(verr), errors.Join(verr, err))
	}
	return withCode(exitCode(verr), fmt.Errorf("%w\n%s", verr, line))
}
