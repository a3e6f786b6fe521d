//go:build e2e

// The real-cluster tests share one control plane per test binary. A plain
// `go test -tags e2e ./...` runs TestFeaturesReal only; the mutants and the
// fidelity report need the extra tags mutants and fidelity (make
// test-mutants, make fidelity), so a generic e2e run does not repeat them.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
)

var (
	operatorLogs    = flag.Bool("operator-logs", false, "print the in-process operator's logs to stderr")
	realConcurrency = flag.Int("real.concurrency", 4, "how many scenarios run at once on the real control plane, each in its own namespace with its own manager")
	realOperator    = flag.String("real.operator", "inprocess", "how the real backend runs the operator: inprocess (the manager in the test process, its calls recorded, faults and mutants possible) or process (cmd/upgrade-operator built with go build, one process per scenario, SIGKILL-able: make test-e2e)")
	realKubeconfig  = flag.String("real.kubeconfig", "", "run on the cluster of this kubeconfig (e.g. Kind's) instead of starting the local control plane; scenarios needing more nodes fail there")
	realNode        = flag.Bool("real.node", false, "start the control plane with the real node (make node) and run only the @real-node scenarios, their pods as real containers there (make test-node-features); event logs go to artifacts/traces/real-node")
)

var (
	realOnce  sync.Once
	realSuite *cluster.RealSuite
	realErr   error
	realKeep  bool // keep the control plane's logs (a real test failed)
	// kindCluster is the Kind cluster of -real.kind (nil without).
	kindCluster *kind
)

// kubelets is the RealKubelets of the cluster the real tests run on.
func kubelets() RealKubelets {
	if kindCluster == nil {
		return nil
	}
	return kindCluster
}

// TestMain stops the control plane the real tests started, once, at the end.
func TestMain(m *testing.M) {
	flag.Parse()
	if *operatorLogs {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	if *realKind {
		k, skip, err := startKind()
		switch {
		case skip != "":
			fmt.Println("kind: skipped:", skip)
			os.Exit(0)
		case err != nil:
			fmt.Fprintln(os.Stderr, "kind:", err)
			os.Exit(1)
		}
		kindCluster, *realKubeconfig = k, k.kubeconfig
	}
	code := m.Run()
	if kindCluster != nil {
		if err := kindCluster.stop(code != 0); err != nil {
			fmt.Fprintln(os.Stderr, "delete the kind cluster:", err)
		}
	}
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
		realSuite, realErr = startRealSuite(logf)
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

// startRealSuite starts the local control plane, or connects to
// -real.kubeconfig, and with -real.operator=process builds the operator
// meanwhile.
func startRealSuite(logf func(string, ...any)) (*cluster.RealSuite, error) {
	ctx := context.Background()
	built := make(chan error, 1)
	var bin string
	switch *realOperator {
	case "inprocess":
		built <- nil
	case "process":
		go func() {
			began := time.Now()
			dir, err := os.MkdirTemp("", "upgrade-operator-bin-")
			if err == nil {
				bin, err = cluster.BuildOperator(ctx, dir)
			}
			if err == nil {
				logf("built %s in %s: every scenario runs it as a process of its own", bin, time.Since(began).Round(time.Millisecond))
			}
			built <- err
		}()
	default:
		return nil, fmt.Errorf("-real.operator=%q: want inprocess or process", *realOperator)
	}
	s, err := connectRealSuite(ctx, logf)
	if buildErr := <-built; buildErr != nil || err != nil {
		if s != nil {
			err = errors.Join(err, s.Stop(false))
		}
		return nil, errors.Join(err, buildErr)
	}
	s.Operator = bin
	return s, nil
}

// connectRealSuite starts the local control plane, or connects to
// -real.kubeconfig.
func connectRealSuite(ctx context.Context, logf func(string, ...any)) (*cluster.RealSuite, error) {
	if *realKubeconfig == "" {
		return cluster.StartRealSuite(ctx, logf, *realNode)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *realKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("-real.kubeconfig: %w", err)
	}
	s, err := cluster.NewRealSuite(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.Kubeconfig = *realKubeconfig
	return s, nil
}

// ProcessTag marks the scenarios that need the operator as a process of
// its own (SIGKILL): the real backend runs them only with
// -real.operator=process; the simulator runs them as any other.
const ProcessTag = "@process"

// InProcessTag marks the @real scenarios that need the operator in the
// test process (a fault at its API boundary): -real.operator=process leaves
// them out.
const InProcessTag = "@in-process"

// realTags selects the @real scenarios (with -real.node, the @real-node
// ones among them; in-process, not the ProcessTag ones; out of process,
// not the InProcessTag ones), also filtered by extra.
func realTags(extra string) string {
	and := "@real"
	if *realNode {
		and += " && " + RealNodeTag
	}
	if *realOperator == "process" {
		and += " && ~" + InProcessTag
	} else {
		and += " && ~" + ProcessTag
	}
	return AndTags(and, extra)
}

// realTraces is where the real runs keep their event logs: the real node's
// and the operator process's apart from kwok's with the in-process
// manager, so make fidelity can compare either with the simulator.
func realTraces() string {
	switch {
	case *realKind:
		return TracesDir(cluster.BackendReal + "-kind")
	case *realNode:
		return TracesDir(cluster.BackendReal + "-node")
	case *realOperator == "process":
		return TracesDir(cluster.BackendReal + "-process")
	}
	return TracesDir(cluster.BackendReal)
}

// TestFeaturesReal runs every @real scenario on the local control plane
// (make test-features-real), and keeps each scenario's event log for
// make fidelity. With -real.operator=process the operator is the product's
// binary, a process per scenario, and the @process scenarios SIGKILL it
// (make test-e2e); -real.kubeconfig runs them on another cluster (Kind).
func TestFeaturesReal(t *testing.T) {
	status, outcomes := Run(Config{
		Backend: realBackend(t), Seed: *seed, T: t, Format: *format, Tags: realTags(*tags), Context: t.Context(), Concurrency: *realConcurrency,
		Replay: fmt.Sprintf("go test -tags e2e ./scenarios/steps/app -run %%s -seed %d -real.node=%t -real.operator=%s -real.kind=%t -v", *seed, *realNode, *realOperator, *realKind), RealNode: *realNode,
		Kubelets: kubelets(),
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
