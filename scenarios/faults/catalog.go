// Package faults is the fault catalog of the simulator runs: each fault is
// a named, documented knob (docs/faults.md), a schedule of faults is data
// generated from one seed (Generate) or parsed from a spec
// ("conflict@3:n=2,crash@17:down=2s"), and an Injector applies a schedule
// to a simulated run (scenarios/sim/simrun) and judges it against the terminal
// state the schedule demands (Run, Outcome).
//
// Faults hit the operator at the two boundaries the design names — the API
// (conflicts, 5xx, timeouts, ambiguous writes, stale and dropped watches)
// and the process (crash and cold restart, a lost lease, a pause) — and the cluster
// around it (pods that are slow, never ready, crash or cannot pull; a lost
// node; a scaled or edited Deployment; the ApplicationUpgrade changed or
// deleted).
package faults

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind names a fault of the catalog.
type Kind string

// The catalog. docs/faults.md describes each with the failure it stands for.
const (
	Conflict    Kind = "conflict"
	Unavailable Kind = "unavailable"
	Timeout     Kind = "timeout"
	AmbiguousW  Kind = "ambiguous"
	Stale       Kind = "stale"
	Drop        Kind = "drop"
	Crash       Kind = "crash"
	LeaseLost   Kind = "lease-lost"
	Pause       Kind = "pause"
	KCMLag      Kind = "kcm-lag"
	Slow        Kind = "slow"
	NeverReady  Kind = "never-ready"
	CrashLoop   Kind = "crashloop"
	BadImage    Kind = "bad-image"
	NodeLost    Kind = "node-lost"
	Scale       Kind = "scale"
	Edit        Kind = "edit"
	Respec      Kind = "respec"
	Delete      Kind = "delete"
	// GitopsRevert: a Flux-like actor re-applies the component's previous
	// image (scenarios/faults/gitops.go).
	GitopsRevert Kind = "gitops-revert"
	// WebhookDown: the validating webhook is unreachable (failurePolicy
	// Fail), so ApplicationUpgrade creates and updates fail.
	WebhookDown Kind = "webhook-down"
)

// Trigger says how a fault is timed.
type Trigger int

const (
	// AtSetup faults change the scenario before the run (pods' behaviour).
	AtSetup Trigger = iota
	// AtCall faults fire before the operator's N-th API call ("@N"),
	// counted from the creation of the upgrades.
	AtCall
	// AtTime faults fire at a virtual time after the upgrades were
	// created ("@12.5s").
	AtTime
	// AtCallOrTime faults accept either.
	AtCallOrTime
)

// Param is one parameter of a fault: its name in a spec, its default and
// what it means.
type Param struct {
	Name    string
	Default string
	Doc     string
}

// Spec is the catalog entry of a Kind.
type Spec struct {
	Kind    Kind
	Trigger Trigger
	Params  []Param
	// Doc says what the fault does; RealWorld what failure it stands for.
	Doc, RealWorld string
	// Expect is the terminal state the fault demands when its component's
	// image is the final target ("" = no effect on the outcome).
	Expect string
}

var (
	dep     = Param{"dep", "worker", "which component: worker or api of a v1alpha1 upgrade, or a graph's component by name (its Deployment, StatefulSet or DaemonSet)"}
	count   = Param{"n", "1", "how many consecutive calls it hits"}
	window  = Param{"for", "30s", "how long the fault lasts"}
	kindAll = Param{"kind", "all", "which informer: upgrades, deployments, replicasets, pods, statefulsets, daemonsets, controllerrevisions or all"}
)

// Catalog lists every fault in the order of docs/faults.md.
var Catalog = []Spec{
	{Kind: Conflict, Trigger: AtCall, Params: []Param{count, {"per", "call", "call: the next n writes fail; target: the first n attempts of each write target (object and subresource) fail"}},
		Doc:       "the operator's next n writes from its N-th API call fail with 409 Conflict, without effect (per=target: the first n attempts of every write, object by object)",
		RealWorld: "another writer changed the object between the operator's read and its write (optimistic concurrency), C08"},
	{Kind: Unavailable, Trigger: AtCall, Params: []Param{count},
		Doc:       "the operator's next n API calls fail with 503 Service Unavailable, without effect",
		RealWorld: "kube-apiserver overloaded, restarting or behind a load balancer that lost its backend (5xx, 429)"},
	{Kind: Timeout, Trigger: AtCall, Params: []Param{count},
		Doc:       "the operator's next n API calls fail with a 504 timeout, without effect",
		RealWorld: "a request that timed out before etcd committed it (slow etcd, network stall)"},
	{Kind: AmbiguousW, Trigger: AtCall, Params: []Param{count},
		Doc:       "the operator's next n writes are committed, then fail with a timeout: the operator cannot tell they happened",
		RealWorld: "the response of an applied write was lost (client timeout after commit, connection reset by a load balancer)"},
	{Kind: Stale, Trigger: AtTime, Params: []Param{window, {"lag", "5s", "how far the informer lags behind the store"},
		{"events", "0", "lag by this many events instead (the informer applies an event once n later ones are committed)"}, kindAll},
		Doc:       "the operator's informer cache lags behind the store: its reads and the watch events that wake it are late alike",
		RealWorld: "a slow or overloaded informer, a watch cache behind etcd, a reconcile right after the operator's own write (C03)"},
	{Kind: Drop, Trigger: AtTime, Params: []Param{window, kindAll},
		Doc:       "the operator's watch loses every event of the kind; at the end the informer relists and delivers what changed",
		RealWorld: "a watch connection dropped or expired (410 Gone, too old resourceVersion), followed by the reflector's relist"},
	{Kind: Crash, Trigger: AtCallOrTime, Params: []Param{{"down", "2s", "how long the process is down before it restarts"},
		{"p", "0", "a percentage: from @ on, the process is killed before each of its API calls with this probability (seeded), again and again; 0: once"}},
		Doc:       "the operator's process is killed before its N-th API call (or at a time) and restarts with a cold cache (p>0: before each later call with probability p%)",
		RealWorld: "OOM kill, eviction, node drain, panic, a rollout of the operator itself (C09)"},
	{Kind: LeaseLost, Trigger: AtTime, Params: []Param{{"for", "20s", "how long the leader's network stalls"}},
		Doc: "two replicas with leader election (a Lease in the store: 15 s duration, 10 s renew deadline, 2 s retry); the leader's " +
			"API calls all time out for a while; past the renew deadline it steps down and exits, the other replica takes over after the lease expires",
		RealWorld: "a network partition between the leader and the API server (C10); not a process pause: see pause"},
	{Kind: Pause, Trigger: AtTime, Params: []Param{{"for", "30s", "how long the leader's process is stopped"}},
		Doc: "two replicas with leader election, as lease-lost; the leader's process is stopped: no reconcile, no lease renewal, no timer of it runs for a while, " +
			"then it continues with its memory as it was — its elector still believes it leads until its next renewal fails, up to the renew deadline after the resume; " +
			"the operator checks its last renewal before writing (manager.LeaseGuard), so a resumed leader whose lease passed to the standby writes nothing",
		RealWorld: "a long GC or CPU-throttling stop, SIGSTOP, a VM or container freeze (C10 on the local control plane)"},
	{Kind: KCMLag, Trigger: AtTime, Params: []Param{window, {"lag", "3s", "how late the Deployment and ReplicaSet controllers see events"}},
		Doc:       "kube-controller-manager's Deployment and ReplicaSet controllers see events late: status lags spec",
		RealWorld: "an overloaded kube-controller-manager; the generation ahead of observedGeneration (C03)"},
	{Kind: WebhookDown, Trigger: AtTime, Params: []Param{window},
		Doc: "the validating webhook (deploy/webhook: failurePolicy Fail, CREATE and UPDATE of applicationupgrades) is unreachable: every create, update or patch " +
			"of an ApplicationUpgrade's main resource, by anyone, fails with 500 \"failed calling webhook\", without effect; status writes (the /status subresource, which the rule does not match) and deletes pass",
		RealWorld: "the webhook's pod evicted or crash-looping, its Service without endpoints, an expired serving certificate"},
	{Kind: Slow, Trigger: AtSetup, Params: []Param{dep, {"ready", "30s", "latest time from start to Ready"}, {"exit", "25s", "latest time from deletion to exit (capped by the grace period)"}},
		Doc:       "the component's pods take long to become Ready and to terminate (kwok stage annotations on its workload's pod template)",
		RealWorld: "slow start-up, long preStop hooks and graceful shutdowns (C01, C02)"},
	{Kind: NeverReady, Trigger: AtSetup, Params: []Param{dep},
		Doc: "the component's target image runs but never passes readiness (tag :never-ready); expected: Failed at the progress deadline; " +
			"refused for a StatefulSet or DaemonSet component (neither has a progress deadline: nothing would ever fail)",
		RealWorld: "a readiness probe that never succeeds (wrong port, missing dependency)", Expect: "Failed"},
	{Kind: CrashLoop, Trigger: AtSetup, Params: []Param{dep},
		Doc:       "the component's target image exits at once (tag :crashloop); expected: Failed after 3 restarts",
		RealWorld: "a release that crashes on start (bad config, missing migration)", Expect: "Failed"},
	{Kind: BadImage, Trigger: AtSetup, Params: []Param{dep},
		Doc:       "the component's target image cannot be pulled (tag :does-not-exist); expected: Failed",
		RealWorld: "a typo in the tag, a missing registry credential, an image not yet pushed (C06)", Expect: "Failed"},
	{Kind: NodeLost, Trigger: AtTime, Params: []Param{{"node", "kwok-node-0", "the node whose pods are lost"},
		{"gap", "0s", "time between two pods' deletes (0s: all at once); the features use 100ms, so each replacement comes before the next delete on both backends; --seeds draws 0s for half the node-lost faults, 10ms–2s for the others"}},
		Doc:       "every pod bound to the node is deleted (grace 0), oldest first, as the pod GC does when a lost node is removed; the node is replaced. With gap=0s the deletes come back to back: on the local control plane whether the ReplicaSet controller's replacement (3–35 ms after a deletion) or the next delete comes first is then a race",
		RealWorld: "a node failure, a spot instance reclaimed, a kernel panic"},
	{Kind: Scale, Trigger: AtTime, Params: []Param{dep, {"replicas", "4", "the new spec.replicas"}},
		Doc:       "the component's workload's spec.replicas is changed mid-rollout (a Deployment or StatefulSet; refused for a DaemonSet, which has none)",
		RealWorld: "a HorizontalPodAutoscaler or a human scaling during the upgrade"},
	{Kind: Edit, Trigger: AtTime, Params: []Param{dep, {"field", "labels", "labels, annotations (metadata), replicas (one more, as kubectl scale) or restart (the pod template's restartedAt annotation)"}},
		Doc:       "someone else edits the component's workload: its labels, its annotations (a new generation), its replicas (refused for a DaemonSet), or the pod template (kubectl rollout restart)",
		RealWorld: "kubectl label/annotate, a GitOps controller fixing drift, kubectl rollout restart during the upgrade"},
	{Kind: Respec, Trigger: AtTime, Params: []Param{{"dep", "both", "which target images change: one component's (worker, api, or a graph's component by name), or both (or all): every component's"}},
		Doc:       "the ApplicationUpgrade's images are changed again mid-rollout (to :v3.0.0, or :v4.0.0 where the target is :v3.0.0); expected: Completed at the new images, unless a component's target still cannot roll out",
		RealWorld: "a newer release pushed by the CD pipeline while the previous upgrade runs"},
	{Kind: Delete, Trigger: AtTime, Params: []Param{{"recreate", "0s", "re-apply the original manifest after this long (0: never)"}},
		Doc:       "the ApplicationUpgrade is deleted mid-rollout (and optionally applied again); expected: no upgrade left and no write for it, or Completed",
		RealWorld: "kubectl delete during the upgrade, a GitOps prune, a re-apply"},
	{Kind: GitopsRevert, Trigger: AtTime, Params: []Param{dep, {"every", "10s", "the tool's re-apply interval"},
		{"for", "60s", "how long Git keeps the previous image; then Git carries the target image and the actor stops"},
		{"ignore", "false", "true: the documented layout (docs/gitops.md), Git's manifest does not set the image"}},
		Doc: "a Flux-like actor server-side applies the component's workload (Deployment, StatefulSet or DaemonSet) with force under kustomize-controller every `every`, " +
			"with the previous image (the one the workload was created with: the demo's :v1.0.0) unless ignore; the operator reports the revert (Reverted, ImageReverted) and never writes the image again; " +
			"Completed while the Deployment runs the reverted image is a violation",
		RealWorld: "Flux's kustomize-controller, Argo CD self-heal or helm upgrade putting Git's image back mid-rollout or after Completed"},
}

// Lookup returns the catalog entry of k.
func Lookup(k Kind) (Spec, bool) {
	for _, s := range Catalog {
		if s.Kind == k {
			return s, true
		}
	}
	return Spec{}, false
}

// Kinds lists the catalog's names, sorted.
func Kinds() []string {
	out := make([]string, 0, len(Catalog))
	for _, s := range Catalog {
		out = append(out, string(s.Kind))
	}
	sort.Strings(out)
	return out
}

// Fault is one scheduled fault: its kind, when it fires, and its
// parameters (every parameter of the catalog entry, defaults filled in).
type Fault struct {
	Kind Kind
	// Call > 0 fires the fault before the operator's Call-th API call.
	Call int
	// At is the virtual time after the upgrades were created (AtTime).
	At time.Duration
	// Args holds every parameter by name.
	Args map[string]string
}

// String is the fault's spec, parameters in catalog order, those at their
// default left out: "conflict@3:n=2".
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	switch {
	case f.Call > 0:
		fmt.Fprintf(&b, "@%d", f.Call)
	case f.timed():
		b.WriteString("@" + formatDuration(f.At))
	}
	spec, _ := Lookup(f.Kind)
	for _, p := range spec.Params {
		if v, ok := f.Args[p.Name]; ok && v != p.Default {
			fmt.Fprintf(&b, ":%s=%s", p.Name, v)
		}
	}
	return b.String()
}

func (f Fault) timed() bool {
	spec, _ := Lookup(f.Kind)
	return f.Call == 0 && (spec.Trigger == AtTime || spec.Trigger == AtCallOrTime)
}

// Str, Int and Dur read a parameter (validated by Parse and the generator).
func (f Fault) Str(name string) string { return f.Args[name] }

// Int reads an integer parameter.
func (f Fault) Int(name string) int {
	var n int
	fmt.Sscan(f.Args[name], &n)
	return n
}

// Float reads a number parameter.
func (f Fault) Float(name string) float64 {
	v, _ := strconv.ParseFloat(f.Args[name], 64)
	return v
}

// Dur reads a duration parameter.
func (f Fault) Dur(name string) time.Duration {
	d, _ := time.ParseDuration(f.Args[name])
	return d
}

// formatDuration prints d in Go syntax with millisecond resolution.
func formatDuration(d time.Duration) string {
	return d.Round(time.Millisecond).String()
}
