//go:build e2e

// The real-cluster tests share one control plane per test binary. A plain
// `go test -tags e2e ./...` runs TestFeaturesReal only; the mutants and the
// fidelity report need the extra tags mutants and fidelity (make
// test-mutants, make fidelity), so a generic e2e run does not repeat them.
package app

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
)

var (
	operatorLogs    = flag.Bool("operator-logs", false, "print the in-process operator's logs to stderr")
	realConcurrency = flag.Int("real.concurrency", 4, "how many scenarios run at once on the real control plane, each in its own namespace with its own manager")
	realNode        = flag.Bool("real.node", false, "start the control plane with the real node (make node) and run only the @real-node scenarios, their pods as real containers there (make test-node-features); event logs go to artifacts/traces/real-node")
)

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
		realSuite, realErr = cluster.StartRealSuite(context.Background(), logf, *realNode)
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

// realTags selects the @real scenarios (with -real.node, the @real-node
// ones among them), also filtered by extra.
func realTags(extra string) string {
	if *realNode {
		return AndTags("@real && "+RealNodeTag, extra)
	}
	return AndTags("@real", extra)
}

// realTraces is where the real runs keep their event logs: the real node's
// apart from kwok's, so make fidelity can compare either with the
// simulator.
func realTraces() string {
	if *realNode {
		return TracesDir(cluster.BackendReal + "-node")
	}
	return TracesDir(cluster.BackendReal)
}

// TestFeaturesReal runs every @real scenario on the local control plane
// (make test-features-real), and keeps each scenario's event log for
// make fidelity.
func TestFeaturesReal(t *testing.T) {
	status, outcomes := Run(Config{
		Backend: realBackend(t), Seed: *seed, T: t, Format: *format, Tags: realTags(*tags), Context: t.Context(), Concurrency: *realConcurrency,
		Replay: fmt.Sprintf("go test -tags e2e ./scenarios/steps/app -run %%s -seed %d -real.node=%t -v", *seed, *realNode), RealNode: *realNode,
	})
	logCounts(t, cluster.BackendReal, outcomes)
	if len(outcomes) == 0 {
		t.Fatalf("no @real scenario matched the tags %q", *tags)
	}
	if err := SaveTraces(realTraces(), outcomes); err != nil {
		t.Errorf("save traces for make fidelity: %v", err)
	}
	if status != 0 {
		t.Fatalf("features failed on the real control plane (artifacts under %s)", ArtifactsDir())
	}
}
