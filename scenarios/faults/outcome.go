package faults

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/history"
	"github.com/lunadas/upgrade-operator/scenarios/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// DefaultLimit is the virtual time a faulty run may take.
const DefaultLimit = 30 * time.Minute

// Terminal states a schedule can demand.
const (
	ExpectCompleted = "Completed"
	ExpectFailed    = "Failed"
	ExpectDeleted   = "Deleted"
)

// targetSpec is what an upgrade asks for at the moment: it decides the
// terminal state the run must end in.
type targetSpec struct {
	worker, api string
	deleted     bool
}

func newTargetSpec(u *upgradesv1alpha1.ApplicationUpgrade) *targetSpec {
	return &targetSpec{worker: u.Spec.Worker.Image, api: u.Spec.API.Image}
}

// Expectation is the terminal state an upgrade must reach.
type Expectation struct {
	State string
	// Reason is the Ready condition's reason a Failed upgrade must carry.
	Reason string
	Why    string
}

func (s *targetSpec) expect() Expectation {
	switch {
	case s.deleted:
		return Expectation{State: ExpectDeleted, Why: "the upgrade was deleted"}
	case badImage(s.worker):
		return Expectation{State: ExpectFailed, Reason: controller.ReasonWorkerRolloutFailed, Why: "worker image " + s.worker + " cannot roll out"}
	case badImage(s.api):
		return Expectation{State: ExpectFailed, Reason: controller.ReasonAPIRolloutFailed, Why: "API image " + s.api + " cannot roll out"}
	}
	return Expectation{State: ExpectCompleted}
}

// badImage reports whether the kubelet model can never make image Ready.
func badImage(image string) bool {
	switch imageTag(image) {
	case simulator.ImageTagNotFound, simulator.ImageTagCrashLoop, simulator.ImageTagNeverReady:
		return true
	}
	return false
}

func imageTag(image string) string {
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[colon+1:]
	}
	return ""
}

// retag replaces image's tag.
func retag(image, tag string) string {
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		image = image[:colon]
	}
	return image + ":" + tag
}

// Prepare returns copies of objs with the setup faults applied: slow pods
// change a Deployment's kwok stage annotations, image faults retag an
// upgrade's target image.
func Prepare(objs []client.Object, faults []Fault) []client.Object {
	out := make([]client.Object, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopyObject().(client.Object)
	}
	for _, f := range faults {
		switch f.Kind {
		case Slow:
			for _, d := range referenced(out, f.Str("dep")) {
				ready, exit := f.Dur("ready"), f.Dur("exit")
				setAnnotation(d, "pod-ready.stage.kwok.x-k8s.io/delay", formatDuration(ready/2))
				setAnnotation(d, "pod-ready.stage.kwok.x-k8s.io/jitter-delay", formatDuration(ready))
				setAnnotation(d, "pod-delete.stage.kwok.x-k8s.io/delay", formatDuration(exit/2))
				setAnnotation(d, "pod-delete.stage.kwok.x-k8s.io/jitter-delay", formatDuration(exit))
			}
		case NeverReady, CrashLoop, BadImage:
			tag := map[Kind]string{NeverReady: simulator.ImageTagNeverReady, CrashLoop: simulator.ImageTagCrashLoop, BadImage: simulator.ImageTagNotFound}[f.Kind]
			for _, u := range upgradesOf(out) {
				if f.Str("dep") == "api" {
					u.Spec.API.Image = retag(u.Spec.API.Image, tag)
				} else {
					u.Spec.Worker.Image = retag(u.Spec.Worker.Image, tag)
				}
			}
		}
	}
	return out
}

func upgradesOf(objs []client.Object) []*upgradesv1alpha1.ApplicationUpgrade {
	var out []*upgradesv1alpha1.ApplicationUpgrade
	for _, o := range objs {
		if u, ok := o.(*upgradesv1alpha1.ApplicationUpgrade); ok {
			out = append(out, u)
		}
	}
	return out
}

// referenced returns the Deployments that upgrades name as dep.
func referenced(objs []client.Object, dep string) []*appsv1.Deployment {
	names := map[string]bool{}
	for _, u := range upgradesOf(objs) {
		ref := u.Spec.Worker.DeploymentRef.Name
		if dep == "api" {
			ref = u.Spec.API.DeploymentRef.Name
		}
		names[u.Namespace+"/"+ref] = true
	}
	var out []*appsv1.Deployment
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok && names[d.Namespace+"/"+d.Name] {
			out = append(out, d)
		}
	}
	return out
}

// RunConfig is one faulty run.
type RunConfig struct {
	Schedule Schedule
	// Objects are the scenario's objects; nil loads Schedule.Scenario.
	Objects []client.Object
	// Transcript and EventLog receive what simrun writes, plus a line per fault.
	Transcript, EventLog io.Writer
	// Reconciler customises the reconciler under test (mutants).
	Reconciler func(*controller.ApplicationUpgradeReconciler)
	// Limit is the virtual time limit; 0 means DefaultLimit.
	Limit time.Duration
}

// Outcome is a run judged against its schedule.
type Outcome struct {
	Schedule Schedule
	Result   *simrun.Result
	// Err is a run that could not start (bad input).
	Err error
	// Expected is each upgrade's demanded terminal state, by namespace/name.
	Expected map[string]Expectation
	// Violations are every broken property, empty for a good run.
	Violations []string
	Fired      []Fired
	Writes     []Write
	// Calls counts the operator's API calls from the upgrades' creation.
	Calls int
	// Start is when the upgrades were created: the origin of fault times.
	Start time.Duration
}

// Failed reports whether the run broke a property.
func (o *Outcome) Failed() bool { return o.Err != nil || len(o.Violations) > 0 }

// ExpectedState summarises Expected: the one state, or "mixed".
func (o *Outcome) ExpectedState() string {
	state := ""
	for _, e := range o.Expected {
		if state != "" && e.State != state {
			return "mixed"
		}
		state = e.State
	}
	return state
}

// Run runs cfg.Schedule and judges it.
func Run(ctx context.Context, cfg RunConfig) *Outcome {
	o := &Outcome{Schedule: cfg.Schedule, Expected: map[string]Expectation{}}
	objs := cfg.Objects
	reconciler := cfg.Reconciler
	if objs == nil {
		sc, err := LookupScenario(cfg.Schedule.Scenario)
		if err == nil {
			objs, err = sc.Objects()
		}
		if err != nil {
			o.Err = err
			return o
		}
		reconciler = sc.WithReconciler(cfg.Reconciler)
	}
	if err := RefuseGraphTargets(objs, cfg.Schedule.Faults); err != nil {
		o.Err = err
		return o
	}
	objs = Prepare(objs, cfg.Schedule.Faults)
	in := NewInjector(cfg.Schedule, upgradesOf(objs), cfg.Transcript)
	in.ScaleLimits(componentsOf(objs))
	limit := cfg.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	res, err := simrun.Run(ctx, simrun.Config{Objects: objs, Seed: cfg.Schedule.Seed, Limit: limit,
		EventLog: cfg.EventLog, Transcript: cfg.Transcript, Reconciler: reconciler, Faults: in})
	o.Result, o.Fired, o.Writes, o.Calls = res, in.fired, in.writeLog, in.calls
	if in.started {
		o.Start = in.t0.Sub(simulator.DefaultStart)
	}
	if res == nil {
		o.Err = err
		return o
	}
	if err != nil {
		o.Violations = append(o.Violations, "the run did not finish: "+err.Error())
	}
	o.judge(in)
	return o
}

// judge collects every violation: ordering, the one judge's porcupine
// model and invariants, the injector's (duplicate
// writes, two writers, writes after deletion) and terminal states.
func (o *Outcome) judge(in *Injector) {
	res := o.Result
	for _, k := range sortedReportKeys(res) {
		for _, v := range res.Reports[k].Violations {
			o.Violations = append(o.Violations, fmt.Sprintf("ordering violation in %s: %s", k, v))
		}
	}
	if res.Judged != nil {
		// the one judge (history.Judge); its ordering is the Reports' above
		o.Violations = append(o.Violations, res.Judged.Lines(history.CheckOrdering)...)
	}
	o.Violations = append(o.Violations, in.errs...)
	got := map[string]*upgradesv1alpha1.ApplicationUpgrade{}
	for i := range res.Upgrades {
		u := &res.Upgrades[i]
		got[u.Namespace+"/"+u.Name] = u
	}
	keys := make([]string, 0, len(in.spec))
	for k := range in.spec {
		keys = append(keys, k.String())
	}
	sort.Strings(keys)
	for _, key := range keys {
		want := in.spec[keyOf(key)].expect()
		o.Expected[key] = want
		if v := check(key, want, got[key]); v != "" {
			o.Violations = append(o.Violations, v)
		}
	}
	o.judgeGraphs(res)
}

// judgeGraphs checks the terminal state of every upgrade created at
// v1beta1 (a graph): only API, process and node faults reach a graph
// (RefuseGraphTargets), so it must end Completed with every component
// Rolled.
func (o *Outcome) judgeGraphs(res *simrun.Result) {
	keys := make([]string, 0, len(res.Graphs))
	for k := range res.Graphs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		g := res.Graphs[key]
		o.Expected[key] = Expectation{State: ExpectCompleted}
		if g.Status.Phase != upgradesv1beta1.PhaseCompleted {
			o.Violations = append(o.Violations, fmt.Sprintf("upgrade %s: expected Completed (a graph under API, process and node faults only), ended %s: %s",
				key, g.Status.Phase, g.Status.Message))
			continue
		}
		rolled := map[string]bool{}
		for _, c := range g.Status.Components {
			rolled[c.Name] = c.Phase == upgradesv1beta1.ComponentRolled
		}
		for _, c := range g.Spec.Components {
			if !rolled[c.Name] {
				o.Violations = append(o.Violations, fmt.Sprintf("upgrade %s: Completed, but component %s is not Rolled", key, c.Name))
			}
		}
	}
}

func keyOf(s string) types.NamespacedName {
	ns, name, _ := strings.Cut(s, "/")
	return types.NamespacedName{Namespace: ns, Name: name}
}

func check(key string, want Expectation, u *upgradesv1alpha1.ApplicationUpgrade) string {
	if want.State == ExpectDeleted {
		if u != nil {
			return fmt.Sprintf("upgrade %s: expected deleted, found in phase %s", key, u.Status.Phase)
		}
		return ""
	}
	if u == nil {
		return fmt.Sprintf("upgrade %s: expected %s, but it does not exist", key, want.State)
	}
	why := ""
	if want.Why != "" {
		why = " (" + want.Why + ")"
	}
	if string(u.Status.Phase) != want.State {
		return fmt.Sprintf("upgrade %s: expected %s%s, ended %s: %s", key, want.State, why, u.Status.Phase, u.Status.Message)
	}
	if want.Reason != "" {
		if c := meta.FindStatusCondition(u.Status.Conditions, upgradesv1alpha1.ConditionReady); c == nil || c.Reason != want.Reason {
			return fmt.Sprintf("upgrade %s: Failed%s, but not with reason %s: %s", key, why, want.Reason, u.Status.Message)
		}
	}
	return ""
}

func sortedReportKeys(res *simrun.Result) []string {
	keys := make([]string, 0, len(res.Reports))
	for k := range res.Reports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// componentsOf counts the components of the upgrades among objs (two per
// v1alpha1 upgrade).
func componentsOf(objs []client.Object) int {
	n := 0
	for _, o := range objs {
		switch u := o.(type) {
		case *upgradesv1alpha1.ApplicationUpgrade:
			n += 2
		case *upgradesv1beta1.ApplicationUpgrade:
			n += len(u.Spec.Components)
		}
	}
	return n
}
