package faults

import (
	"math/rand"
	"strconv"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// weights is how often Generate draws each kind: the API, cache and
// process faults most, the faults that demand Failed least. A kind of
// shares is drawn in half the draws of the weighted kind it names.
var weights = []struct {
	kind Kind
	w    int
}{
	{Conflict, 4}, {Unavailable, 3}, {Timeout, 3}, {AmbiguousW, 4},
	{Stale, 4}, {Drop, 3}, {Crash, 5}, {LeaseLost, 3}, {KCMLag, 3},
	{Slow, 2}, {NeverReady, 1}, {CrashLoop, 1}, {BadImage, 1},
	{NodeLost, 2}, {Scale, 3}, {Edit, 3}, {Respec, 2}, {Delete, 2},
	{GitopsRevert, 1}, {WebhookDown, 2},
}

// shares: Pause takes half of LeaseLost's draws (the leader's network
// stalled or its process stopped), from a stream of its own
// (GenerateFor), so the rest of every seed's schedule stays as it was.
var shares = []struct{ kind, of Kind }{{Pause, LeaseLost}}

// Window is the virtual time after the upgrades' creation in which
// Generate places timed faults: about the demo's upgrade.
const Window = 70 * time.Second

// Generate draws a schedule from seed: a scenario of scenarios and 0–4
// faults with their parameters. The same seed gives the same schedule;
// the simulator's own choices use the seed too.
func Generate(seed int64, scenarios []string) Schedule { return GenerateFor(seed, scenarios, nil) }

// GenerateFor is Generate for a run of objs when set (scenario
// "manifests"). A fault aimed at a component draws it among the
// components of the scenario's upgrades (worker or api for a v1alpha1
// upgrade, any component of a graph), never a pairing RefuseTargets
// refuses (never-ready on a StatefulSet, scale on a DaemonSet, …).
func GenerateFor(seed int64, scenarios []string, objs []client.Object) Schedule {
	rng := rand.New(rand.NewSource(seed*1_000_003 + 0x5eed))
	s := Schedule{Seed: seed, Scenario: scenarios[rng.Intn(len(scenarios))]}
	n := []int{0, 1, 1, 1, 2, 2, 2, 3, 3, 4}[rng.Intn(10)]
	if objs == nil {
		objs = scenarioObjects(s.Scenario)
	}
	names, graph := componentNames(objs), anyGraph(objs)
	total := 0
	for _, w := range weights {
		total += w.w
	}
	// stops decides between a kind and the one sharing its draws
	// (shares), from a stream of its own: the two draw their parameters
	// alike, so the other faults of a seed's schedule are the same either
	// way.
	stops := rand.New(rand.NewSource(seed*1_000_033 + 0x9a05e))
	used := map[string]bool{}
	for len(s.Faults) < n {
		pick := rng.Intn(total)
		var k Kind
		for _, w := range weights {
			if pick < w.w {
				k = w.kind
				break
			}
			pick -= w.w
		}
		for _, sh := range shares {
			if k == sh.of && stops.Intn(2) == 0 {
				k = sh.kind
			}
		}
		f := draw(rng, k, names, graph)
		if aimsAtComponent(f) && (len(names) == 0 || RefuseTargets(objs, []Fault{f}) != nil) {
			continue
		}
		if u := uniqueKey(f); u != "" {
			if used[u] {
				continue
			}
			used[u] = true
		}
		s.Faults = append(s.Faults, f)
	}
	// gaps draws node-lost's gap from a stream of its own, so the rest of
	// a seed's schedule is what it was before gap existed: half the
	// schedules delete a lost node's pods back to back, half one every
	// 10 ms–2 s (a replacement may then land, and the worker stop being
	// rolled out, between the operator's phase and its write: seed 121).
	gaps := rand.New(rand.NewSource(seed*1_000_037 + 0x6a9))
	for i := range s.Faults {
		if s.Faults[i].Kind == NodeLost && gaps.Intn(2) == 1 {
			s.Faults[i].Args["gap"] = formatDuration(time.Duration(10+gaps.Intn(1991)) * time.Millisecond)
		}
	}
	calls := 300
	for _, f := range s.Faults {
		if f.Kind == Stale || f.Kind == Drop {
			calls = 12 // reads come from the cache: only writes are API calls
		}
	}
	for i := range s.Faults {
		if s.Faults[i].Call > 0 {
			s.Faults[i].Call = 1 + rng.Intn(calls)
		}
	}
	return s
}

// uniqueKey groups faults a schedule holds at most one of.
func uniqueKey(f Fault) string {
	switch f.Kind {
	case NeverReady, CrashLoop, BadImage:
		return "image/" + f.Str("dep")
	case Slow:
		return "slow/" + f.Str("dep")
	case Delete:
		return "delete"
	}
	return ""
}

// draw makes a fault of kind k with random parameters (Call is set to 1
// here and drawn by Generate once the schedule is known).
//
// names are the components a fault may aim at; graph says they are a
// graph's (respec then draws "all" for every component, not "both").
func draw(rng *rand.Rand, k Kind, names []string, graph bool) Fault {
	spec, _ := Lookup(k)
	f := Fault{Kind: k, Args: map[string]string{}}
	for _, p := range spec.Params {
		f.Args[p.Name] = p.Default
	}
	ms := func(lo, hi time.Duration) string {
		return formatDuration(lo + time.Duration(rng.Int63n(int64((hi-lo)/time.Millisecond)+1))*time.Millisecond)
	}
	secs := func(lo, hi int) string { return strconv.Itoa(lo+rng.Intn(hi-lo+1)) + "s" }
	dep := func() string {
		if len(names) == 0 {
			return "worker"
		}
		return names[rng.Intn(len(names))]
	}
	switch spec.Trigger {
	case AtCall:
		f.Call = 1
	case AtTime:
		f.At = time.Duration(rng.Int63n(int64(Window/time.Millisecond))) * time.Millisecond
	case AtCallOrTime:
		if rng.Intn(2) == 0 {
			f.Call = 1
		} else {
			f.At = time.Duration(rng.Int63n(int64(Window/time.Millisecond))) * time.Millisecond
		}
	}
	switch k {
	case Conflict, Unavailable, Timeout, AmbiguousW:
		f.Args["n"] = strconv.Itoa(1 + rng.Intn(6))
	case Stale:
		// early and long: the window should cover the operator's writes,
		// when a stale read matters most (C03)
		f.At = time.Duration(rng.Int63n(int64(Window/2/time.Millisecond))) * time.Millisecond
		f.Args["for"] = secs(10, 60)
		f.Args["lag"] = ms(200*time.Millisecond, 10*time.Second)
		if rng.Intn(4) == 0 {
			f.Args["events"] = strconv.Itoa(1 + rng.Intn(5))
		}
		f.Args["kind"] = []string{"all", "all", "all", "deployments", "deployments", "upgrades", "replicasets", "pods"}[rng.Intn(8)]
	case Drop:
		f.Args["for"] = secs(2, 40)
		f.Args["kind"] = []string{"all", "upgrades", "deployments", "replicasets", "pods"}[rng.Intn(5)]
	case Crash:
		f.Args["down"] = ms(100*time.Millisecond, 15*time.Second)
	case LeaseLost, Pause:
		f.Args["for"] = secs(3, 40)
	case WebhookDown:
		f.Args["for"] = secs(5, 40)
	case KCMLag:
		f.Args["for"] = secs(5, 40)
		f.Args["lag"] = ms(500*time.Millisecond, 5*time.Second)
	case Slow:
		f.Args["dep"] = dep()
		f.Args["ready"] = secs(5, 60)
		f.Args["exit"] = secs(5, 30)
	case NeverReady, CrashLoop, BadImage:
		f.Args["dep"] = dep()
	case Scale:
		f.Args["dep"] = dep()
		f.Args["replicas"] = strconv.Itoa(1 + rng.Intn(6))
	case Edit:
		f.Args["dep"] = dep()
		// replicas changes come from scale; edit draws the other fields
		f.Args["field"] = []string{"labels", "annotations", "restart"}[rng.Intn(3)]
	case Respec:
		every := "both"
		if graph {
			every = "all"
		}
		choices := append(append([]string(nil), names...), every)
		f.Args["dep"] = choices[rng.Intn(len(choices))]
	case Delete:
		if rng.Intn(2) == 0 {
			f.Args["recreate"] = secs(2, 30)
		}
	case GitopsRevert:
		f.Args["dep"] = dep()
		f.Args["every"] = secs(5, 15)
		f.Args["for"] = secs(10, 60)
		f.Args["ignore"] = []string{"false", "true"}[rng.Intn(2)]
	}
	return f
}

// scenarioObjects are the built-in scenario's objects (nil for an unknown
// one), loaded once per scenario: Generate only reads them.
func scenarioObjects(name string) []client.Object {
	if objs, ok := scenarioCache.Load(name); ok {
		return objs.([]client.Object)
	}
	var objs []client.Object
	if sc, err := LookupScenario(name); err == nil {
		objs, _ = sc.Objects()
	}
	scenarioCache.Store(name, objs)
	return objs
}

var scenarioCache sync.Map

// anyGraph reports whether an upgrade among objs was given as v1beta1.
func anyGraph(objs []client.Object) bool {
	for _, u := range upgradesIn(objs) {
		for _, c := range componentsOf(u) {
			if c.Graph {
				return true
			}
		}
	}
	return false
}
