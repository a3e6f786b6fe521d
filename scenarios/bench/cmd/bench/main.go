//go:build bench

// Command bench is make bench's driver: it runs the real-control-plane
// phases of scenarios/bench/realbench, reads the simulator's go test
// -bench output, prints one table and writes bench.json. Missed targets
// are reported, not failed: only errors make it exit non-zero.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lunadas/upgrade-operator/scenarios/bench/realbench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	d := realbench.DefaultConfig()
	var (
		cfg      = d
		operator = flag.String("operator", "bin/benchoperator", "the built scenarios/bench/cmd/benchoperator")
		simFile  = flag.String("sim", "", "go test -bench output of scenarios/bench/simbench to include")
		jsonOut  = flag.String("json", "bench.json", "where to write the results as JSON; empty writes none")
		workDir  = flag.String("workdir", "", "keep the operator logs here (default: a temporary directory, removed)")
		sizes    = flag.String("sizes", joinInts(d.Sizes), "numbers of unrelated Deployments for the scale phase")
		scopes   = flag.String("scopes", strings.Join(d.Scopes, ","), "watch scopes for the scale phase: all, listed, own")
		phases   = flag.String("phases", strings.Join(d.Phases, ","), "phases to run: latency, scale, load (none: only the simulator table)")
		from     = flag.String("from", "", "measure nothing: print the table of this bench.json again (targets re-judged)")
	)
	flag.IntVar(&cfg.Demo, "demo", d.Demo, "demo-app upgrades by the operator, and as many by the poller")
	flag.IntVar(&cfg.Fixed, "fixed", d.Fixed, "fixed-timing upgrades by each of the operator, the poller and no ordering")
	flag.DurationVar(&cfg.Stagger, "stagger", d.Stagger, "time between the starts of the latency phase's upgrades")
	flag.Float64Var(&cfg.ChurnRate, "churn", d.ChurnRate, "updates per second to unrelated Deployments during each scale upgrade")
	flag.IntVar(&cfg.ScaleUpgrades, "scale-upgrades", d.ScaleUpgrades, "upgrades side by side in each scale row (their mean is reported)")
	flag.IntVar(&cfg.LoadUpgrades, "load-upgrades", d.LoadUpgrades, "upgrades created at once in the load phase")
	flag.IntVar(&cfg.LoadFillers, "load-fillers", d.LoadFillers, "unrelated Deployments churned during the load phase")
	flag.IntVar(&cfg.FillerNamespaces, "filler-namespaces", d.FillerNamespaces, "namespaces the unrelated Deployments are spread over")
	flag.Parse()
	var err error
	if cfg.Sizes, err = parseInts(*sizes); err != nil {
		return err
	}
	cfg.Sizes = slices.Compact(slices.Sorted(slices.Values(cfg.Sizes)))
	cfg.Scopes = dedupe(split(*scopes)) // a repeated scope would reuse namespaces still being deleted
	cfg.Phases = split(*phases)

	ctrllog.SetLogger(logr.Discard()) // the driver's clients log nothing
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%5.0fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
	res := &realbench.Result{Started: began.UTC(), Config: cfg}
	var runErr error
	if *from != "" {
		b, err := os.ReadFile(*from)
		if err != nil {
			return err
		}
		res = &realbench.Result{}
		if err := json.Unmarshal(b, res); err != nil {
			return fmt.Errorf("read %s: %w", *from, err)
		}
		res.CheckTargets()
		res.WriteTable(os.Stdout)
		return nil
	}
	if len(cfg.Phases) > 0 {
		res, runErr = realbench.Run(ctx, cfg, realbench.RunOptions{OperatorBin: *operator, WorkDir: *workDir, Logf: logf})
		if res == nil {
			return runErr
		}
	}
	if *simFile != "" {
		f, err := os.Open(*simFile)
		if err != nil {
			return err
		}
		benches, err := realbench.ParseBench(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", *simFile, err)
		}
		res.Sim = &realbench.SimResult{File: *simFile, Benchmarks: benches}
	}
	res.CheckTargets()
	fmt.Println()
	res.WriteTable(os.Stdout)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("\nwrote %s\n", *jsonOut)
	}
	return runErr
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range split(s) {
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil {
			return nil, fmt.Errorf("bad size %q: %w", f, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
