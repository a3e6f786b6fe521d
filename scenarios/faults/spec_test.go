package faults

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

func TestParseFormatRoundTrip(t *testing.T) {
	for _, spec := range []string{
		"conflict@3",
		"conflict@3:n=5,crash@17",
		"crash@12.5s:down=500ms",
		"stale@10s:for=40s:lag=3s:kind=pods",
		"stale@1m5s:events=3",
		"drop@2s:for=10s:kind=upgrades",
		"lease-lost@20s:for=25s",
		"slow:dep=api:ready=40s:exit=10s,bad-image,crashloop:dep=api",
		"never-ready",
		"node-lost@30s",
		"scale@5s:dep=api:replicas=6",
		"edit@1s:field=restart",
		"respec@40s:dep=worker",
		"delete@20s:recreate=5s",
		"kcm-lag@0s:for=20s:lag=2s",
		"ambiguous@1:n=2,unavailable@2,timeout@9:n=6",
	} {
		fs, err := ParseFaults(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, spec, FormatFaults(fs), "format(parse(%q))", spec)
	}
}

func TestParseFillsDefaults(t *testing.T) {
	fs, err := ParseFaults("conflict@3,stale@10s")
	require.NoError(t, err)
	assert.Equal(t, 1, fs[0].Int("n"))
	assert.Equal(t, 3, fs[0].Call)
	assert.Equal(t, 10*time.Second, fs[1].At)
	assert.Equal(t, 30*time.Second, fs[1].Dur("for"))
	assert.Equal(t, 5*time.Second, fs[1].Dur("lag"))
	assert.Equal(t, "all", fs[1].Str("kind"))
	none, err := ParseFaults("none")
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestParseErrorsNameTheFaultAndSayWhatIsAllowed(t *testing.T) {
	cases := map[string]string{
		"explode@3":            `unknown kind "explode" (known: ambiguous, bad-image,`,
		"conflict":             "conflict needs @<when>: an API call number from 1, e.g. conflict@3",
		"conflict@3s":          "an API call number from 1",
		"conflict@0":           "an API call number from 1",
		"node-lost@4":          "a virtual time since the upgrades were created, e.g. node-lost@12.5s",
		"bad-image@3":          "bad-image applies before the run and takes no @",
		"conflict@3:x=1":       `unknown parameter "x=1" (conflict takes n, per)`,
		"conflict@3:per=node":  "want one of call, target",
		"crash@3:p=150":        "want a percentage from 0 to 100",
		"conflict@3:n=0":       `parameter n="0": out of range`,
		"stale@1s:kind=nodes":  "want one of all, upgrades, deployments, replicasets, pods",
		"scale@1s:dep=DB":      "want a component's name (worker, api, or a graph's component such as db)",
		"respec@1s:dep=-":      "or both or all for every component",
		"crash@3:down=forever": `parameter down="forever"`,
		"edit@1s:field=spec":   "want one of labels, annotations, replicas, restart",
		"stale@1s:lag=0s":      `parameter lag="0s": want a positive duration`,
		"kcm-lag@1s:lag=0s":    `parameter lag="0s": want a positive duration`,
		"pause@1s:for=0s":      `parameter for="0s": want a positive duration`,
	}
	for spec, want := range cases {
		_, err := ParseFaults(spec)
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), want, spec)
		assert.Contains(t, err.Error(), "fault \"", spec)
	}
	_, err := ParseFaults("stale@1s:lag=0s:events=2")
	assert.NoError(t, err, "a stale informer may lag by events instead of time")
}

func TestCatalogIsDocumented(t *testing.T) {
	seen := map[Kind]bool{}
	for _, s := range Catalog {
		assert.False(t, seen[s.Kind], "duplicate %s", s.Kind)
		seen[s.Kind] = true
		assert.NotEmpty(t, s.Doc, s.Kind)
		assert.NotEmpty(t, s.RealWorld, s.Kind)
	}
	for _, w := range weights {
		assert.True(t, seen[w.kind], "weight for unknown %s", w.kind)
	}
	for _, sh := range shares {
		assert.True(t, seen[sh.kind] && seen[sh.of], "shares %s of %s", sh.kind, sh.of)
	}
	assert.Len(t, weights, len(Catalog)-len(shares), "every fault is drawn by Generate")
}

func TestGenerateIsDeterministicAndCoversTheCatalog(t *testing.T) {
	names := ScenarioNames()
	kinds := map[Kind]int{}
	scenarios := map[string]int{}
	for seed := int64(1); seed <= 2000; seed++ {
		a, b := Generate(seed, names), Generate(seed, names)
		require.Equal(t, a.String(), b.String(), "seed %d", seed)
		parsed, err := ParseFaults(a.Spec())
		require.NoError(t, err, "seed %d: %s", seed, a.Spec())
		require.Equal(t, a.Spec(), FormatFaults(parsed), "seed %d spec round trip", seed)
		scenarios[a.Scenario]++
		for _, f := range a.Faults {
			kinds[f.Kind]++
		}
	}
	for _, s := range Catalog {
		assert.Positive(t, kinds[s.Kind], "%s never drawn in 2000 seeds", s.Kind)
	}
	for _, n := range names {
		assert.Positive(t, scenarios[n], "scenario %s never drawn", n)
	}
	assert.NotEqual(t, Generate(1, names).String(), Generate(2, names).String())
}

// TestGenerateDrawsNodeLostGaps: about half the node-lost faults delete
// back to back (gap 0s), the others one pod every 10 ms–2 s.
func TestGenerateDrawsNodeLostGaps(t *testing.T) {
	names := ScenarioNames()
	zero, spaced := 0, 0
	for seed := int64(1); seed <= 2000; seed++ {
		for _, f := range Generate(seed, names).Faults {
			if f.Kind != NodeLost {
				continue
			}
			switch gap := f.Dur("gap"); {
			case gap == 0:
				zero++
			default:
				spaced++
				require.GreaterOrEqual(t, gap, 10*time.Millisecond, "seed %d", seed)
				require.LessOrEqual(t, gap, 2*time.Second, "seed %d", seed)
			}
		}
	}
	assert.Positive(t, zero)
	assert.Positive(t, spaced)
	assert.InDelta(t, 0.5, float64(spaced)/float64(zero+spaced), 0.15, "%d spaced of %d", spaced, zero+spaced)
}

func TestScheduleCommand(t *testing.T) {
	fs, err := ParseFaults("conflict@3,crash@17")
	require.NoError(t, err)
	s := Schedule{Seed: 123, Scenario: "demo", Faults: fs}
	assert.Equal(t, `make simulate ARGS="--seed 123 --scenario demo --faults conflict@3,crash@17"`, s.Command())
	assert.Equal(t, `make simulate ARGS="--seed 9 --faults none"`, Schedule{Seed: 9, Scenario: "manifests"}.Command())
}

func TestPrepareAppliesSetupFaultsToCopies(t *testing.T) {
	objs, err := demo()
	require.NoError(t, err)
	fs, err := ParseFaults("bad-image:dep=api,slow:dep=worker:ready=40s:exit=20s")
	require.NoError(t, err)
	got := Prepare(objs, fs)
	u := upgradesIn(got)[0].(*upgradesv1alpha1.ApplicationUpgrade)
	assert.Equal(t, "registry.example.com/job-api:does-not-exist", u.Spec.API.Image)
	assert.Equal(t, "registry.example.com/job-worker:v2.0.0", u.Spec.Worker.Image)
	w := workloadOf(got, named(got, "worker")[0]).(*appsv1.Deployment)
	assert.Equal(t, "40s", w.Spec.Template.Annotations["pod-ready.stage.kwok.x-k8s.io/jitter-delay"])
	assert.Equal(t, "10s", w.Spec.Template.Annotations["pod-delete.stage.kwok.x-k8s.io/delay"])
	assert.Equal(t, "registry.example.com/job-api:v2.0.0", upgradesIn(objs)[0].(*upgradesv1alpha1.ApplicationUpgrade).Spec.API.Image, "the input is not modified")
	assert.Equal(t, Expectation{State: ExpectFailed, Reason: "APIRolloutFailed", Why: "API image registry.example.com/job-api:does-not-exist cannot roll out",
		Failed: []string{"api"}}, newTargetSpec(u).expect())
}

// TestDocsListEveryFault keeps docs/faults.md in step with the catalog.
func TestDocsListEveryFault(t *testing.T) {
	doc, err := os.ReadFile("../../docs/faults.md")
	require.NoError(t, err)
	for _, s := range Catalog {
		assert.Contains(t, string(doc), "| `"+string(s.Kind)+"` |", "docs/faults.md has no row for %s", s.Kind)
		assert.Contains(t, string(doc), s.Doc, "docs/faults.md describes %s differently: regenerate its row", s.Kind)
		for _, p := range s.Params {
			assert.Contains(t, string(doc), fmt.Sprintf("`%s` (%s): %s", p.Name, p.Default, p.Doc), "%s parameter %s", s.Kind, p.Name)
		}
	}
}
