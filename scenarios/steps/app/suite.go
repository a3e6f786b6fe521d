// Package app holds the godog step definitions of features/*.feature.
// They talk to a cluster.Cluster, so the same scenarios run on the
// simulator (TestFeatures, `make test-features`) and on the local control
// plane (TestFeaturesReal, `make test-features-real`, build tag e2e).
// After every scenario the history is judged (judge.Judge: porcupine and
// the plain invariants); on a failure the porcupine visualization and the
// logs go to an artifacts folder whose path is printed.
package app

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v34"
	corev1 "k8s.io/api/core/v1"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
)

// Backend creates one scenario's cluster.
type Backend interface {
	Name() string
	NewCluster(ctx context.Context, opts cluster.Options) (cluster.Cluster, error)
}

// SimBackend runs scenarios in the simulator.
type SimBackend struct{}

// Name implements Backend.
func (SimBackend) Name() string { return cluster.BackendSim }

// NewCluster implements Backend.
func (SimBackend) NewCluster(ctx context.Context, opts cluster.Options) (cluster.Cluster, error) {
	return cluster.NewSim(ctx, opts)
}

// RealBackend runs scenarios on a real API server, one namespace each.
type RealBackend struct{ Suite *cluster.RealSuite }

// Name implements Backend.
func (RealBackend) Name() string { return cluster.BackendReal }

// NewCluster implements Backend.
func (b RealBackend) NewCluster(ctx context.Context, opts cluster.Options) (cluster.Cluster, error) {
	return cluster.NewReal(ctx, b.Suite, opts)
}

// Config is one run of the features.
type Config struct {
	Backend Backend
	// Policy is the operator build (mutants); the zero value is the product.
	Policy cluster.Policy
	// Tags filters scenarios (godog's tag expressions, e.g. "@real").
	Tags string
	// Seed is the suite seed; each scenario's seed derives from it and its name.
	Seed int64
	// Paths are the feature files or folders; default the repository's features/.
	Paths []string
	// T runs each scenario as a subtest of T; nil runs them without
	// failing any test (mutation runs judge the outcomes themselves).
	T *testing.T
	// Format is godog's formatter ("pretty", "progress"); Output its writer.
	Format string
	Output io.Writer
	// StopOnFailure stops at the first failing scenario.
	StopOnFailure bool
	// Replay is the command that replays a scenario, with %s for its -run
	// pattern; printed with the artifacts path on a failure.
	Replay string
	// Context bounds every step.
	Context context.Context
	// Concurrency is how many scenarios run at once (default 1). Each has
	// its own cluster (a simulation, or a namespace and manager).
	Concurrency int
	// ExpectFailures marks a mutation run: failing scenarios are the point,
	// so their artifacts go under artifacts/mutants and nothing is printed.
	ExpectFailures bool
	// RealNode: the real backend's control plane has the real node (make node),
	// and the Deployments of scenarios tagged RealNodeTag run their pods
	// there as real containers (realnode.AdaptPodTemplate: the timings of
	// the steps become the demo image's start delay and SIGTERM drain).
	RealNode bool
	// Kubelets adapts the scenarios to real kubelets that pull images and
	// ignore kwok's stage annotations (a Kind cluster, -real.kind); nil on
	// kwok and in the simulator.
	Kubelets RealKubelets
}

// RealKubelets adapts a scenario's objects to a cluster whose kubelets
// pull images and ignore kwok's stage annotations (Kind).
type RealKubelets interface {
	// PodTemplate adapts a pod template before its workload is created
	// (the termination delay becomes a preStop sleep).
	PodTemplate(t *corev1.PodTemplateSpec)
	// Images makes images pullable on every node; a name that means "cannot
	// be pulled" (":does-not-exist") is left so.
	Images(ctx context.Context, images []string) error
}

// RealNodeTag marks the scenarios whose pods run on the real node when
// Config.RealNode is set (make test-node-features); elsewhere they run as
// any other scenario.
const RealNodeTag = "@real-node"

// Outcome is how one scenario ended.
type Outcome struct {
	Scenario string
	Tags     []string
	Backend  string
	Policy   string
	Seed     int64
	Passed   bool
	// Stage is where it failed: "setup" (a Given step), "step" (a When or
	// Then step) or "check" (the history check after the scenario).
	Stage string
	// Step is the failing step's text; Err the failure.
	Step string
	Err  string
	// Checks name the history checks that failed (porcupine and the plain
	// invariants), whether or not a step failed first.
	Checks []string
	// Artifacts is the folder written on a failure.
	Artifacts string
	// History is everything recorded.
	History judge.History
	// Elapsed is the scenario's duration on its backend's clock.
	Elapsed time.Duration
}

// Run runs the features; it returns godog's status (0 when every scenario
// passed) and every scenario's outcome.
func Run(cfg Config) (int, []Outcome) {
	if len(cfg.Paths) == 0 {
		cfg.Paths = FeaturePaths()
	}
	if cfg.Format == "" {
		cfg.Format = "progress"
	}
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	var mu sync.Mutex
	var outcomes []Outcome
	suite := godog.TestSuite{
		Name: "features-" + cfg.Backend.Name(),
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			s := &scenario{cfg: cfg}
			s.register(sc)
			sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
				out, checkErr := s.finish(ctx, p, err)
				mu.Lock()
				outcomes = append(outcomes, out)
				mu.Unlock()
				return ctx, checkErr
			})
		},
		Options: &godog.Options{
			Format: cfg.Format, Output: cfg.Output, Paths: cfg.Paths, Tags: cfg.Tags, Strict: true,
			TestingT: cfg.T, StopOnFailure: cfg.StopOnFailure, DefaultContext: cfg.Context, Concurrency: max(cfg.Concurrency, 1),
		},
	}
	status := suite.Run()
	return status, outcomes
}

// AndTags narrows a godog tag filter (terms joined by "," are or'ed, by
// "&&" and'ed, "~" negates; no parentheses) to the scenarios that also
// match and: and is and'ed into every or'ed term.
func AndTags(and, filter string) string {
	if filter == "" {
		return and
	}
	terms := strings.Split(filter, ",")
	for i, t := range terms {
		terms[i] = and + " && " + strings.TrimSpace(t)
	}
	return strings.Join(terms, ",")
}

// FeaturePaths lists the ApplicationUpgrade feature files of FeaturesDir:
// every *.feature except platform_*.feature, whose steps live in
// scenarios/steps/platform.
func FeaturePaths() []string {
	files, _ := filepath.Glob(filepath.Join(FeaturesDir(), "*.feature"))
	var out []string
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "platform_") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return []string{FeaturesDir()}
	}
	return out
}

// FeaturesDir is the repository's features/ folder.
func FeaturesDir() string {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "features"
	}
	return filepath.Join(root, "features")
}

// ArtifactsDir is where failing scenarios leave their files: $ARTIFACTS,
// else <repository>/artifacts.
func ArtifactsDir() string {
	if d := os.Getenv("ARTIFACTS"); d != "" {
		return d
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "artifacts"
	}
	return filepath.Join(root, "artifacts")
}

// ScenarioSeed derives a scenario's seed from the suite seed and its name,
// so one scenario replays alone with the suite seed.
func ScenarioSeed(suiteSeed int64, name string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", suiteSeed, name)
	return int64(h.Sum64() >> 1)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slug is a file-name form of a scenario name.
func Slug(name string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// RunPattern is the go test -run pattern of one scenario's subtest.
func RunPattern(test, name string) string {
	return "^" + test + "$/^" + regexp.QuoteMeta(strings.ReplaceAll(name, " ", "_")) + "$"
}

// stepStage classifies a pickle step: Given steps set the scene.
func stepStage(st *godog.Step) string {
	if st != nil && st.Type == messages.PickleStepType_CONTEXT {
		return "setup"
	}
	return "step"
}
