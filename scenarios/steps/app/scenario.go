package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
	"github.com/lunadas/upgrade-operator/scenarios/real/realnode"
)

// FaultActorsCheck names, in Outcome.Checks, what the catalog's fault
// actors saw that must never happen (cluster.Cluster.Violations:
// gitops-revert's "Completed while the workload runs the reverted image").
const FaultActorsCheck = "fault actors"

// scenario is the state of one running scenario.
type scenario struct {
	cfg  Config
	name string
	seed int64
	tags []string
	cl   cluster.Cluster

	roles    map[string]*deploymentSpec // the last Deployment declared for each role
	upgrades map[string]*upgradeSpec
	order    []string // upgrade names, in the order applied

	named    map[string]*deploymentSpec // Deployments of graph steps, by name
	declared []string                   // their names, in the order declared
	graphs   map[string]*graphSpec      // upgrades applied as v1beta1 graphs
	refused  map[string]error           // graph upgrades admission refused

	failStage, failStep string
	kills               []kill // the SIGKILLs of killDuringWorkerRollout
}

// start creates the scenario's cluster (and so its operator).
func (s *scenario) start(ctx context.Context, p *godog.Scenario) (context.Context, error) {
	s.name = p.Name
	s.seed = ScenarioSeed(s.cfg.Seed, p.Name)
	for _, t := range p.Tags {
		s.tags = append(s.tags, t.Name)
	}
	s.roles, s.upgrades = map[string]*deploymentSpec{}, map[string]*upgradeSpec{}
	nodes, err := nodesTag(s.tags)
	if err != nil {
		return ctx, err
	}
	cl, err := s.cfg.Backend.NewCluster(ctx, cluster.Options{Scenario: p.Name, Seed: s.seed, Policy: s.cfg.Policy, Nodes: nodes})
	if err != nil {
		return ctx, fmt.Errorf("start the %s cluster: %w", s.cfg.Backend.Name(), err)
	}
	s.cl = cl
	return ctx, nil
}

// finish judges the history, writes the artifacts of a failure and
// releases the cluster. The returned error fails the scenario.
func (s *scenario) finish(ctx context.Context, p *godog.Scenario, stepErr error) (Outcome, error) {
	out := Outcome{Scenario: p.Name, Tags: s.tags, Backend: s.cfg.Backend.Name(), Policy: s.cfg.Policy.String(), Seed: s.seed, Passed: true}
	if s.cl == nil {
		out.Passed, out.Stage, out.Err = false, "setup", fmt.Sprint(stepErr)
		return out, nil
	}
	h := s.cl.History()
	h.Faults = faults.Spans(s.cl.Fired())
	out.History, out.Elapsed = h, s.cl.Elapsed()
	res := judge.Judge(judge.Input{History: h})
	checkErr := res.Err()
	out.Checks = res.Failed()
	if err := s.checkRealNodeExits(h, s.exitsLog()); err != nil {
		checkErr = errors.Join(checkErr, err)
		out.Checks = append(out.Checks, RealNodeExitsCheck)
	}
	if v := s.cl.Violations(); len(v) > 0 {
		checkErr = errors.Join(checkErr, fmt.Errorf("%s: %s", FaultActorsCheck, strings.Join(v, "; ")))
		out.Checks = append(out.Checks, FaultActorsCheck)
	}
	switch {
	case stepErr != nil:
		out.Passed, out.Stage, out.Step, out.Err = false, s.failStage, s.failStep, stepErr.Error()
		if out.Stage == "" {
			out.Stage = "step"
		}
	case checkErr != nil:
		out.Passed, out.Stage, out.Err = false, "check", checkErr.Error()
	}
	if !out.Passed {
		kind := "features"
		if s.cfg.ExpectFailures {
			kind = "mutants"
		}
		out.Artifacts = filepath.Join(ArtifactsDir(), kind, s.cfg.Backend.Name()+"-"+s.cfg.Policy.String(), Slug(p.Name))
		notes := s.replayNotes()
		if err := res.WriteArtifacts(out.Artifacts, h, notes); err != nil {
			checkErr = errors.Join(checkErr, fmt.Errorf("write artifacts: %w", err))
		}
		if !s.cfg.ExpectFailures {
			fmt.Fprintf(os.Stderr, "\n--- scenario %q failed on %s (%s): artifacts in %s\n%s\n", p.Name, out.Backend, out.Policy, out.Artifacts, notes)
		}
		if checkErr != nil {
			checkErr = fmt.Errorf("%w\nartifacts (porcupine.html, events.jsonl, ops.jsonl): %s\n%s", checkErr, out.Artifacts, notes)
		}
	}
	if err := s.cl.Close(ctx); err != nil && checkErr == nil && stepErr == nil {
		checkErr = fmt.Errorf("close the cluster: %w", err)
	}
	if p, ok := s.cl.(interface{ OperatorLogs() string }); ok && p.OperatorLogs() != "" && out.Passed && checkErr == nil {
		_ = os.RemoveAll(p.OperatorLogs()) // kept, and named in the notes, on a failure
	}
	return out, checkErr
}

func (s *scenario) replayNotes() string {
	notes := fmt.Sprintf("suite seed %d, scenario seed %d, operator build %s, backend %s", s.cfg.Seed, s.seed, s.cfg.Policy, s.cfg.Backend.Name())
	if s.cfg.Replay != "" {
		notes += "\nreplay: " + fmt.Sprintf(s.cfg.Replay, "'"+RunPattern(s.replayTest(), s.name)+"'")
	}
	if len(s.kills) > 0 {
		notes += "\nSIGKILLs (moments from the scenario seed): " + s.describeKills()
	}
	if p, ok := s.cl.(interface{ OperatorLogs() string }); ok && p.OperatorLogs() != "" {
		notes += "\noperator process logs: " + p.OperatorLogs()
	}
	return notes
}

func (s *scenario) replayTest() string {
	if s.cfg.Backend.Name() == cluster.BackendReal {
		return "TestFeaturesReal"
	}
	return "TestFeatures"
}

// register binds every step to s.
func (s *scenario) register(sc *godog.ScenarioContext) {
	sc.Before(s.start)
	sc.StepContext().After(func(ctx context.Context, st *godog.Step, _ godog.StepResultStatus, err error) (context.Context, error) {
		if err != nil && s.failStep == "" {
			s.failStage, s.failStep = stepStage(st), st.Text
		}
		return ctx, nil
	})
	s.registerSetup(sc)
	s.registerFaults(sc)
	s.registerActions(sc)
	s.registerThen(sc)
	s.registerGraph(sc)
	s.registerRecovery(sc)
	s.registerKills(sc)
	s.registerElection(sc)
}

func (s *scenario) registerSetup(sc *godog.ScenarioContext) {
	sc.Step(`^an? (worker|API) Deployment(?: "([^"]+)")? with (\d+) replicas?(.*)$`, s.deployment)
	sc.Step(`^the Deployments are rolled out$`, s.rolledOut)
	sc.Step(`^the Deployment controller has published every rollout complete$`, s.countersComplete)
	sc.Step(`^a ResourceQuota "([^"]+)" allowing (\d+) pods$`, s.podQuota)
	sc.Step(`^a second operator replica is on standby under leader election$`, s.standby)
}

// registerFaults binds the fault steps: the catalog's spec itself, and
// the wordings that read better, each one catalog fault.
func (s *scenario) registerFaults(sc *godog.ScenarioContext) {
	sc.Step(`^the faults? "([^"]+)" (?:is|are) injected$`, s.inject)
	sc.Step(`^the first (\d+) attempts of every write by the operator are rejected with Conflict$`,
		func(ctx context.Context, n int) error {
			return s.inject(ctx, fmt.Sprintf("conflict@1:n=%d:per=target", n))
		})
	sc.Step(`^the operator is killed before each of its API calls with probability (\d+)% and restarted (\d+) seconds? later$`,
		func(ctx context.Context, p, down int) error {
			return s.inject(ctx, fmt.Sprintf("crash@1:p=%d:down=%ds", p, down))
		})
	// "every change": for the scenario's longest wait and more
	sc.Step(`^kube-controller-manager observes every change (\d+) seconds? late$`,
		func(ctx context.Context, n int) error {
			return s.inject(ctx, fmt.Sprintf("kcm-lag@0s:lag=%ds:for=1h", n))
		})
	sc.Step(`^the operator restarts$`, func(ctx context.Context) error { return s.inject(ctx, "crash@0s") })
	sc.Step(`^the leader's network stalls for (\d+) seconds$`,
		func(ctx context.Context, n int) error { return s.inject(ctx, fmt.Sprintf("lease-lost@0s:for=%ds", n)) })
	sc.Step(`^the leader's process is paused for (\d+) seconds$`,
		func(ctx context.Context, n int) error { return s.inject(ctx, fmt.Sprintf("pause@0s:for=%ds", n)) })
}

func (s *scenario) registerActions(sc *godog.ScenarioContext) {
	sc.Step(`^the upgrade "([^"]+)" is applied$`, func(ctx context.Context, name string) error { return s.apply(ctx, name, "") })
	sc.Step(`^the upgrade "([^"]+)" is applied with (.+)$`, s.apply)
	sc.Step(`^the upgrade "([^"]+)" is changed to (.+)$`, s.change)
	sc.Step(`^the (worker|API) Deployment is scaled to (\d+) replicas?$`, s.scale)
	sc.Step(`^a pod of the worker's new template is bound to a node and counted in its status within (\d+) (seconds?|minutes?)$`, s.newWorkerPod)
	sc.Step(`^the phase becomes "([^"]+)" within (\d+) (seconds?|minutes?)$`, func(ctx context.Context, phase string, n int, unit string) error {
		return s.phaseBecomes(ctx, "", phase, n, unit)
	})
	sc.Step(`^the phase of "([^"]+)" becomes "([^"]+)" within (\d+) (seconds?|minutes?)$`, s.phaseBecomes)
}

// deployment creates a Deployment as the step describes it.
func (s *scenario) deployment(ctx context.Context, role, name string, replicas int, rest string) error {
	spec, err := parseDeployment(role, name, int32(replicas), strings.TrimPrefix(strings.TrimSpace(rest), ","))
	if err != nil {
		return err
	}
	s.roles[role] = spec
	obj, err := s.deploymentObject(ctx, spec)
	if err != nil {
		return err
	}
	if err := s.cl.Client().Create(ctx, obj); err != nil {
		return fmt.Errorf("create deployment %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	return nil
}

// deploymentObject is spec's Deployment in the scenario's namespace, its
// pods on the real node when the run has one and the scenario is tagged
// RealNodeTag.
func (s *scenario) deploymentObject(ctx context.Context, spec *deploymentSpec) (*appsv1.Deployment, error) {
	obj := spec.object(s.cl.Namespace())
	if k := s.realKubelets(); k != nil {
		k.PodTemplate(&obj.Spec.Template)
		images := []string{imageOf(spec.name, TargetTag)}
		for _, c := range obj.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
		if err := k.Images(ctx, images); err != nil {
			return nil, fmt.Errorf("deployment %s/%s on real kubelets: %w", obj.Namespace, obj.Name, err)
		}
	}
	if s.cfg.RealNode && s.cfg.Backend.Name() == cluster.BackendReal && slices.Contains(s.tags, RealNodeTag) {
		if err := realnode.AdaptPodTemplate(&obj.Spec.Template); err != nil {
			return nil, fmt.Errorf("deployment %s/%s on the real node: %w", obj.Namespace, obj.Name, err)
		}
	}
	return obj, nil
}

// rolledOut waits until every Deployment of the scenario is rolled out (or
// failed), by the product's own definition, as a user does before upgrading,
// and the Deployment controller has published each rolled-out one complete
// in its status (realcluster.RolledOutAndPublished): the simulator's model
// publishes it at the instant of the last pod's readiness, the local control
// plane's up to a second later, and an upgrade whose first write lands in
// that second starts from another state than on the simulator (make
// fidelity: the chain's db, the blocked graph's search).
func (s *scenario) rolledOut(ctx context.Context) error {
	last := ""
	err := s.cl.Eventually(ctx, "the Deployments rolled out", 3*time.Minute, func(ctx context.Context) (bool, error) {
		done, why, err := realcluster.RolledOutAndPublished(ctx, s.cl.Client(), s.cl.Namespace(), true)
		last = why
		return done, err
	})
	if err != nil {
		return fmt.Errorf("%w (last: %s)", err, last)
	}
	return nil
}

// countersComplete waits until every Deployment's own status says its
// rollout is complete (realcluster.CountersComplete), which the pod-list
// rule of "rolled out" may say before the Deployment controller does.
func (s *scenario) countersComplete(ctx context.Context) error {
	last := ""
	err := s.cl.Eventually(ctx, "the Deployments' status counters complete", 3*time.Minute, func(ctx context.Context) (bool, error) {
		done, why, err := realcluster.CountersComplete(ctx, s.cl.Client(), s.cl.Namespace())
		last = why
		return done, err
	})
	if err != nil {
		return fmt.Errorf("%w (last: %s)", err, last)
	}
	return nil
}

// podQuota creates a ResourceQuota of n pods in the scenario's namespace
// and waits until the resourcequota controller has published its usage:
// until then the ResourceQuota admission plugin finds no status.hard and
// admits every pod (k8s.io/apiserver pkg/admission/plugin/resourcequota
// CheckRequest), on the simulator (simulator/resourcequota_controller.go)
// as on the local control plane.
func (s *scenario) podQuota(ctx context.Context, name string, n int) error {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: s.cl.Namespace(), Name: name},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(n), resource.DecimalSI)}}}
	if err := s.cl.Client().Create(ctx, q); err != nil {
		return fmt.Errorf("create resourcequota %s/%s: %w", q.Namespace, name, err)
	}
	return s.cl.Eventually(ctx, "resourcequota "+name+" has status.used", time.Minute, func(ctx context.Context) (bool, error) {
		if err := s.cl.Client().Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return false, err
		}
		_, ok := q.Status.Used[corev1.ResourcePods]
		return ok, nil
	})
}

// inject injects the faults of spec, in the catalog's syntax (make
// simulate --faults, docs/faults.md), now: "@N" counts the operator's API
// calls from this step, "@T" is the time from it.
func (s *scenario) inject(ctx context.Context, spec string) error {
	fs, err := faults.ParseFaults(spec)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if err := s.cl.Inject(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

func (s *scenario) standby(ctx context.Context) error {
	so, ok := s.cl.(cluster.SimOnly)
	if !ok {
		return fmt.Errorf("a second operator replica needs the simulator or the operator out of process (tag the scenario @sim-only or @process): %w", cluster.ErrUnsupported)
	}
	return so.AddStandbyReplica(ctx)
}

// realKubelets is Config.Kubelets on the real backend, else nil.
func (s *scenario) realKubelets() RealKubelets {
	if s.cfg.Backend.Name() != cluster.BackendReal {
		return nil
	}
	return s.cfg.Kubelets
}

// role returns the Deployment declared for role, or its default.
func (s *scenario) role(role string) *deploymentSpec {
	if d := s.roles[role]; d != nil {
		return d
	}
	name := defaultName(role)
	return &deploymentSpec{role: role, name: name, containers: []string{containerOf(role)}, image: imageOf(name, CurrentTag)}
}

// apply creates the upgrade name: the worker and API Deployments declared,
// their images at TargetTag, unless clauses say otherwise.
func (s *scenario) apply(ctx context.Context, name, clauses string) error {
	w, a := s.role(roleWorker), s.role(roleAPI)
	u := &upgradeSpec{name: name,
		workerRef: w.name, workerImage: imageOf(w.name, TargetTag), workerContainer: containerOf(roleWorker),
		apiRef: a.name, apiImage: imageOf(a.name, TargetTag), apiContainer: containerOf(roleAPI)}
	if clauses != "" {
		if err := u.applyClauses(clauses); err != nil {
			return err
		}
	}
	if k := s.realKubelets(); k != nil {
		if err := k.Images(ctx, []string{u.workerImage, u.apiImage}); err != nil {
			return fmt.Errorf("upgrade %s on real kubelets: %w", name, err)
		}
	}
	s.upgrades[name] = u
	s.order = append(s.order, name)
	obj := u.object(s.cl.Namespace())
	err := s.cl.Client().Create(ctx, obj)
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		// An admission refusal (the overlap guard) is for a refusal step to judge.
		if s.refused == nil {
			s.refused = map[string]error{}
		}
		s.refused[name] = err
		return nil
	}
	if err != nil {
		return fmt.Errorf("create applicationupgrade %s/%s: %w", obj.Namespace, name, err)
	}
	return nil
}

// change updates the spec of upgrade name as clauses say.
func (s *scenario) change(ctx context.Context, name, clauses string) error {
	u := s.upgrades[name]
	if u == nil {
		return fmt.Errorf("no upgrade %q was applied in this scenario", name)
	}
	if err := u.applyClauses(clauses); err != nil {
		return err
	}
	c := s.cl.Client()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur upgradesv1alpha1.ApplicationUpgrade
		if err := c.Get(ctx, types.NamespacedName{Namespace: s.cl.Namespace(), Name: name}, &cur); err != nil {
			return err
		}
		cur.Spec = u.object(s.cl.Namespace()).Spec
		return c.Update(ctx, &cur)
	})
}

func (s *scenario) scale(ctx context.Context, role string, replicas int) error {
	c := s.cl.Client()
	key := types.NamespacedName{Namespace: s.cl.Namespace(), Name: s.role(role).name}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var d appsv1.Deployment
		if err := c.Get(ctx, key, &d); err != nil {
			return err
		}
		r := int32(replicas)
		d.Spec.Replicas = &r
		return c.Update(ctx, &d)
	})
}

// upgradeName resolves "the upgrade" of a step: the one named, or the only one.
func (s *scenario) upgradeName(name string) (string, error) {
	if name != "" {
		return name, nil
	}
	if len(s.order) != 1 {
		return "", fmt.Errorf("%d upgrades were applied: name the upgrade in the step", len(s.order))
	}
	return s.order[0], nil
}

func (s *scenario) getUpgrade(ctx context.Context, name string) (*upgradesv1alpha1.ApplicationUpgrade, error) {
	var u upgradesv1alpha1.ApplicationUpgrade
	err := s.cl.Client().Get(ctx, types.NamespacedName{Namespace: s.cl.Namespace(), Name: name}, &u)
	return &u, err
}

func duration(n int, unit string) time.Duration {
	switch {
	case strings.HasPrefix(unit, "minute"):
		return time.Duration(n) * time.Minute
	case strings.HasPrefix(unit, "millisecond"):
		return time.Duration(n) * time.Millisecond
	}
	return time.Duration(n) * time.Second
}

// phaseBecomes waits until the upgrade reports phase for its current generation.
func (s *scenario) phaseBecomes(ctx context.Context, name, phase string, n int, unit string) error {
	name, err := s.upgradeName(name)
	if err != nil {
		return err
	}
	seen := ""
	err = s.cl.Eventually(ctx, fmt.Sprintf("upgrade %s phase %s", name, phase), duration(n, unit), func(ctx context.Context) (bool, error) {
		st, err := s.readStatus(ctx, name)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		seen = fmt.Sprintf("%s (%s)", st.phase, st.message)
		return st.phase == phase && st.observedAt == st.generation, nil
	})
	if err != nil {
		return fmt.Errorf("%w; last seen: %s", err, seen)
	}
	return nil
}

// nodesTag is N of a scenario's "@nodes-N" tag (the kwok nodes it needs,
// on both backends), 0 without one; a malformed one is an error.
func nodesTag(tags []string) (int, error) {
	for _, t := range tags {
		v, ok := strings.CutPrefix(t, "@nodes-")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("tag %s: want @nodes-N with N a positive number of nodes", t)
		}
		return n, nil
	}
	return 0, nil
}

// newWorkerPod waits until a pod of the worker Deployment's current
// template is bound to a node (matched by the Deployment's selector, not
// terminating, its containers' images those of the Deployment's template,
// spec.nodeName set): a state both backends reach alike, where "the phase
// becomes" returns at the status patch's instant in the simulator — before
// the Deployment controller has synced the new template — and a poll later
// on the real cluster, after it has. Bound, not only created: a fault
// aimed at a node (node-lost) must find the pod there on both backends
// (the simulator's scheduler binds it an event after its creation); and
// counted in the Deployment's status (observedGeneration the Deployment's
// generation, updatedReplicas at least 1), which the real controller has
// written by the time a poll sees the pod and the simulator's, busy with
// its earlier writes (DeploymentWriteRoundTrip), a millisecond later.
func (s *scenario) newWorkerPod(ctx context.Context, n int, unit string) error {
	spec := s.roles["worker"]
	if spec == nil {
		return errors.New("no worker Deployment was declared")
	}
	c, ns := s.cl.Client(), s.cl.Namespace()
	return s.cl.Eventually(ctx, "a pod of the worker's new template", duration(n, unit), func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: spec.name}, &d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas < 1 {
			return false, nil
		}
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			return false, fmt.Errorf("deployment %s: %w", spec.name, err)
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return false, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Spec.NodeName != "" && sameImages(p.Spec.Containers, d.Spec.Template.Spec.Containers) {
				return true, nil
			}
		}
		return false, nil
	})
}

// sameImages reports whether a and b name the same containers with the
// same images, in order.
func sameImages(a, b []corev1.Container) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.Container) bool { return x.Name == y.Name && x.Image == y.Image })
}
