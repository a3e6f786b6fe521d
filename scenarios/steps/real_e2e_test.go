//go:build e2e

package steps

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
	"github.com/lunadas/upgrade-operator/scenarios/mutants"
)

var operatorLogs = flag.Bool("operator-logs", false, "print the in-process operator's logs to stderr")

var (
	realOnce  sync.Once
	realSuite *cluster.RealSuite
	realErr   error
	realKeep  bool // keep the control plane's logs (a real test failed)
)

// TestMain stops the control plane the real tests started, once, at the end.
func TestMain(m *testing.M) {
	flag.Parse()
	if *operatorLogs {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	code := m.Run()
	if realSuite != nil {
		if err := realSuite.Stop(realKeep || code != 0); err != nil {
			fmt.Fprintln(os.Stderr, "stop the control plane:", err)
		}
	}
	os.Exit(code)
}

// realBackend starts the local control plane (from ./bin, `make
// controlplane`) on first use; every real test of the binary shares it.
func realBackend(t *testing.T) RealBackend {
	t.Helper()
	realOnce.Do(func() {
		logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
		realSuite, realErr = cluster.StartRealSuite(context.Background(), logf)
		if realErr == nil && realSuite.ControlPlane != nil {
			logf("control plane ready in %s", realSuite.ControlPlane.StartupDuration)
		}
	})
	if realErr != nil {
		t.Fatalf("start the local control plane: %v", realErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			realKeep = true
		}
	})
	return RealBackend{Suite: realSuite}
}

func realTags(extra string) string {
	if extra == "" {
		return "@real"
	}
	return "@real && " + extra
}

// TestFeaturesReal runs every @real scenario on the local control plane
// (make test-features-real), and keeps each scenario's event log for
// make fidelity.
func TestFeaturesReal(t *testing.T) {
	status, outcomes := Run(Config{
		Backend: realBackend(t), Seed: *seed, T: t, Format: *format, Tags: realTags(*tags), Context: t.Context(),
		Replay: fmt.Sprintf("go test -tags e2e ./scenarios/steps -run %%s -seed %d -v", *seed),
	})
	logCounts(t, cluster.BackendReal, outcomes)
	if err := SaveTraces(TracesDir(cluster.BackendReal), outcomes); err != nil {
		t.Errorf("save traces for make fidelity: %v", err)
	}
	if status != 0 {
		t.Fatalf("features failed on the real control plane (artifacts under %s)", ArtifactsDir())
	}
}

// TestMutantsReal: every mutant must be caught by a @real C01–C04 scenario
// on the local control plane (make test-mutants). A mutant's run stops at
// its first catch unless -mutants.all.
func TestMutantsReal(t *testing.T) {
	base := Config{Backend: realBackend(t), Seed: *seed, Tags: realTags(*tags), Context: t.Context()}
	results := RunMutants(base, mutants.All, !*allMutantScenarios)
	WriteMutantTable(os.Stdout, cluster.BackendReal, results)
	judgeMutants(t, results)
}

var fidelityReuse = flag.Bool("fidelity.reuse", false, "take the real cluster's event logs from the last TestFeaturesReal run (artifacts/traces/real) instead of running the scenarios again")

// TestFidelity runs the @real scenarios on the simulator and (unless
// -fidelity.reuse finds their logs) on the local control plane, and prints
// the fidelity report (make fidelity). It fails only when a run fails,
// not when the backends disagree: the disagreements are the report.
func TestFidelity(t *testing.T) {
	cfg := Config{Seed: *seed, Tags: realTags(*tags), Context: t.Context(), Output: io.Discard}
	cfg.Backend = SimBackend{}
	_, simOut := Run(cfg)
	dir := TracesDir(cluster.BackendReal)
	var scenarios []fidelity.Scenario
	missing := false
	for _, o := range simOut {
		if !*fidelityReuse {
			missing = true
			break
		}
		events, err := LoadTrace(dir, o.Scenario)
		if err != nil {
			missing = true
			break
		}
		scenarios = append(scenarios, fidelity.Scenario{Name: o.Scenario, Sim: o.History.Events(), Real: events})
	}
	if missing {
		scenarios = nil
		cfg.Backend = realBackend(t)
		status, realOut := Run(cfg)
		if err := SaveTraces(dir, realOut); err != nil {
			t.Errorf("save traces: %v", err)
		}
		if status != 0 {
			t.Errorf("some scenarios failed on the real control plane; the report compares them anyway")
		}
		byName := map[string]Outcome{}
		for _, o := range realOut {
			byName[o.Scenario] = o
		}
		for _, o := range simOut {
			scenarios = append(scenarios, fidelity.Scenario{Name: o.Scenario, Sim: o.History.Events(), Real: byName[o.Scenario].History.Events()})
		}
	}
	for _, o := range simOut {
		if !o.Passed {
			t.Errorf("scenario %q failed on the simulator: %s", o.Scenario, o.Err)
		}
	}
	var buf bytes.Buffer
	if err := fidelity.WriteReport(io.MultiWriter(os.Stdout, &buf), scenarios); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(ArtifactsDir(), "fidelity.txt")
	if err := os.WriteFile(report, buf.Bytes(), 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("fidelity report written to %s", report)
}
