//go:build e2e

package workloads

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
)

var rewrite = flag.Bool("rewrite", false, "write the real controllers' sequences to testdata/ (review the diff)")

// TestRecordReal runs every scenario on the local control plane (real
// StatefulSet and DaemonSet controllers, kwok nodes), all at once, each in
// its namespace, and compares the real sequences with the simulator's
// (Compare); it logs where they differ from the committed golden files,
// which -rewrite records into testdata/.
// Run with make test-workloads-real.
func TestRecordReal(t *testing.T) {
	nodes := 0
	for _, sc := range Scenarios {
		nodes = max(nodes, sc.Nodes)
	}
	cp, err := controlplane.Start(t.Context(), controlplane.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			cp.KeepLogs()
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	if err := cp.AddNodes(t.Context(), controlplane.NodeNames(nodes)[1:]...); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cp.RESTConfig, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]string, len(Scenarios))
	errs := make([]error, len(Scenarios))
	began := time.Now()
	for i, sc := range Scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = RunReal(t.Context(), cs, c, sc, "wl-"+sc.Name)
		}()
	}
	wg.Wait()
	t.Logf("%d scenarios on the real control plane in %s", len(Scenarios), time.Since(began).Round(time.Second))
	for i, sc := range Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			real := results[i]
			if *rewrite {
				header := fmt.Sprintf("# %s: the real controllers' state sequences (kube-controller-manager v1.37.2, kwok nodes),\n# recorded on the local control plane by: make test-workloads-real ARGS=-rewrite\n", sc.Name)
				if err := os.WriteFile(goldenPath(sc.Name), []byte(header+real), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want := readGolden(t, sc.Name); real != want {
				// Informational: the real grain varies with timing (see Compare).
				t.Logf("this run's real sequences differ from testdata/%s.txt (timing grain; -rewrite records them):\n%s", sc.Name, diff(want, real, "testdata", "this run"))
			}
			sim, err := RunSim(t.Context(), sc, *seed)
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := Compare(real, sim, sc.Kind())
			for _, d := range diffs {
				t.Log(Verdict(d))
			}
			if err != nil {
				t.Errorf("simulator and real controllers differ:\n%v", err)
			}
		})
	}
}
