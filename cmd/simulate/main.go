// Command simulate runs ApplicationUpgrades in the discrete-event simulator:
// by default the embedded demo (deploy/demo + deploy/samples), or the
// manifests of --manifests DIR. It prints the transcript and exits non-zero
// with one readable line when a manifest is bad, an upgrade does not
// complete, or the API image was written while an old worker pod existed.
package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/checks"
	"github.com/lunadas/upgrade-operator/scenarios/manifests"
	"github.com/lunadas/upgrade-operator/scenarios/simrun"
)

func main() {
	if err := newCommand(os.Stdout).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(1)
	}
}

type options struct {
	manifestsDir string
	seed         int64
	events       string
	quiet        bool
	limit        simrunLimit
}

func newCommand(stdout io.Writer) *cobra.Command {
	o := options{}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run an ordered ApplicationUpgrade in the simulator, in virtual time",
		Long: "Runs the demo upgrade (job-worker before job-api, 3 replicas each) or the manifests of\n" +
			"--manifests in a simulated cluster and prints kubectl's view at each phase change,\n" +
			"a per-pod timeline and the ordering verdict.",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), o, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.manifestsDir, "manifests", "", "directory of YAML manifests (Deployments, Namespaces, ApplicationUpgrades); default: the embedded demo")
	f.Int64Var(&o.seed, "seed", 1, "seed of every random choice; the same seed replays the same run")
	f.StringVar(&o.events, "events", "", "write the JSON Lines event log to this file")
	f.BoolVar(&o.quiet, "quiet", false, "print only the verdict")
	f.Var(&o.limit, "limit", "virtual time after which an unfinished upgrade counts as stuck (e.g. 30m)")
	return cmd
}

func run(ctx context.Context, o options, stdout io.Writer) error {
	var fsys fs.FS = deploy.Demo
	dir := "."
	if o.manifestsDir != "" {
		fsys, dir = os.DirFS(o.manifestsDir), "."
	}
	objs, err := manifests.LoadFS(fsys, dir, manager.NewScheme())
	if err != nil {
		return err
	}
	if !hasUpgrade(objs) {
		return fmt.Errorf("no ApplicationUpgrade in the manifests: add one (see deploy/samples)")
	}
	cfg := simrun.Config{Objects: objs, Seed: o.seed, Limit: o.limit.d}
	if !o.quiet {
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
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := simrun.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("seed %d: %w", o.seed, err)
	}
	return verdict(res, o.seed, stdout)
}

func hasUpgrade(objs []clientObject) bool {
	for _, obj := range objs {
		if _, ok := obj.(*upgradesv1alpha1.ApplicationUpgrade); ok {
			return true
		}
	}
	return false
}

// verdict fails on an ordering violation first, then on an upgrade that is
// not Completed; the seed is named so the run can be replayed.
func verdict(res *simrun.Result, seed int64, stdout io.Writer) error {
	if err := checks.Verdict(res.Upgrades, res.Reports); err != nil {
		return fmt.Errorf("%w (replay: make simulate ARGS=\"--seed %d\")", err, seed)
	}
	fmt.Fprintf(stdout, "OK: %d upgrade(s) completed in %s virtual, no ordering violation (seed %d)\n", len(res.Upgrades), res.Elapsed, seed)
	return nil
}
