package faults

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/simulator"
)

// ActorRuntime is what a run gives the cluster actors — the faults that
// are someone else acting on the cluster (scale, edit, respec, delete,
// gitops-revert, node-lost) and the webhook's outage (webhook-down): make
// simulate's Injector gives them the simulator (virtual time), the
// features' backends the simulator or a real API server (real timers).
type ActorRuntime interface {
	// Client is the API as the actor called name calls it: a simulator
	// client of that name (API faults never hit it), or on a real cluster
	// a client whose user agent, and so default field manager, is name
	// ("kubectl", "horizontal-pod-autoscaler", "pod-gc", kustomize-controller).
	Client(name string) client.Client
	// Now is the run's clock.
	Now() time.Time
	// After runs fn once, d from now (d > 0), unless the run has ended.
	After(d time.Duration, what string, fn func())
}

// actorStage is what the actors aim at and report to: the upgrades of the
// run with their current targets, and the run's record. The Injector
// keeps its targets itself (injectorStage: the manifests as created,
// retargeted on a respec or a re-apply); the features' backends read
// them from the cluster (liveStage).
type actorStage interface {
	// component is the component named dep of the first upgrade that has
	// one, with its current target image.
	component(dep string) (component, bool)
	// targetImage is c's current target image in its upgrade.
	targetImage(c component) string
	// originalImage is the image c's workload was created with ("" when
	// unknown), containerName the container the upgrade changes.
	originalImage(c component) string
	containerName(c component) string
	// upgrades are the upgrades a respec changes and a delete deletes (and
	// re-applies: objects without status, resourceVersion or uid).
	upgrades() []client.Object
	// retarget records u's new targets (a respec, a re-apply).
	retarget(u client.Object)
	// deleted records the deletion of the upgrades at t; reapplied that
	// some were applied again.
	deleted(ups []client.Object, t time.Time)
	reapplied()
	// pods restricts the pods a lost node takes (the features' namespace
	// on a shared cluster; nothing in make simulate's own cluster).
	pods() []client.ListOption
	record(f Fault, d time.Duration, note string)
	note(line string)
	violate(format string, args ...any)
	elapsed() time.Duration
}

// actors is the one implementation of the cluster actors and of
// webhook-down, parametrised by the run (ActorRuntime) and what it aims
// at (actorStage).
type actors struct {
	ctx context.Context
	rt  ActorRuntime
	st  actorStage
	// webhookDownUntil is the end of a webhook-down window (zero: none).
	webhookDownUntil time.Time
	// gate, when set, takes a webhook of the run's down until its time
	// (WebhookGate); webhookRefuses refuses in the simulator
	gate func(until time.Time)
}

// WebhookGate is implemented by a runtime whose validating webhook the
// actors can make unreachable themselves (the real backend's harness
// webhook server); without it webhook-down is the simulator's
// interceptor's (webhookRefuses).
type WebhookGate interface {
	// WebhookDown makes the webhook unreachable until until.
	WebhookDown(until time.Time)
}

// actorKinds are the faults actors.fire implements.
var actorKinds = map[Kind]bool{WebhookDown: true, NodeLost: true, Scale: true, Edit: true, Respec: true, Delete: true, GitopsRevert: true}

// fire fires the actor fault f now; false for a kind that is no actor's.
func (a *actors) fire(f Fault) bool {
	switch f.Kind {
	case WebhookDown:
		a.webhookDown(f)
	case NodeLost:
		a.nodeLost(f)
	case Scale:
		a.scale(f)
	case Edit:
		a.edit(f)
	case Respec:
		a.respec(f)
	case Delete:
		a.deleteUpgrades(f)
	case GitopsRevert:
		a.gitopsRevert(f)
	default:
		return false
	}
	return true
}

// webhookDown makes the validating webhook unreachable for the fault's
// window (webhookRefuses refuses the matching writes).
func (a *actors) webhookDown(f Fault) {
	d := f.Dur("for")
	a.st.record(f, d, fmt.Sprintf("the validating webhook is unreachable for %s: ApplicationUpgrade creates and updates fail", d))
	a.webhookDownUntil = a.rt.Now().Add(d)
	if a.gate != nil {
		a.gate(a.webhookDownUntil)
	}
}

// webhookRefuses reports whether req is one the API server sends to the
// validating webhook while it is down: a create, update or patch of an
// ApplicationUpgrade's main resource (the rule of
// deploy/webhook/manifests.yaml: CREATE and UPDATE of applicationupgrades,
// any version by matchPolicy Equivalent; a patch is an UPDATE).
func (a *actors) webhookRefuses(req simulator.APIRequest) bool {
	if a.webhookDownUntil.IsZero() || !a.rt.Now().Before(a.webhookDownUntil) {
		return false
	}
	return req.GVK.Group == upgradesv1beta1.GroupVersion.Group && req.GVK.Kind == "ApplicationUpgrade" && req.Subresource == "" &&
		(req.Verb == "create" || req.Verb == "update" || req.Verb == "patch")
}

// webhookErr is kube-apiserver's answer when a webhook with failurePolicy
// Fail cannot be called (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go:
// an InternalError "failed calling webhook ...").
func webhookErr() error {
	return apierrors.NewInternalError(fmt.Errorf(`failed calling webhook "vapplicationupgrade.upgrades.lunadas.dev": failed to call webhook: Post "https://webhook-service.system.svc:443/validate-upgrades-lunadas-dev-v1beta1-applicationupgrade?timeout=10s": dial tcp 10.96.0.20:443: connect: connection refused (injected)`))
}

// nodeLost force-deletes every pod bound to the node, as the pod garbage
// collector does once a lost node's object is removed
// (pkg/controller/podgc gc_controller.go gcOrphaned: one DELETE with
// grace 0 per pod, each returning before the next). gcOrphaned walks its
// lister's pods in no set order; the actor deletes the oldest first
// (creationTimestamp, then name), so both backends delete the pods of one
// template in the same order although their pod names differ. With the
// parameter gap > 0 it deletes one pod every gap (see the catalog);
// with gap 0, all of them at once.
func (a *actors) nodeLost(f Fault) {
	c := a.rt.Client("pod-gc")
	var pods corev1.PodList
	if err := c.List(a.ctx, &pods, a.st.pods()...); err != nil {
		a.st.record(f, 0, "could not list pods: "+err.Error())
		return
	}
	node := f.Str("node")
	bound := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.Spec.NodeName != node })
	slices.SortStableFunc(bound, func(x, y corev1.Pod) int {
		return cmp.Or(x.CreationTimestamp.Compare(y.CreationTimestamp.Time), strings.Compare(x.Name, y.Name))
	})
	n := 0
	var next func(i int)
	next = func(i int) {
		if i == len(bound) {
			a.st.record(f, 0, fmt.Sprintf("node %s lost: %d pods deleted", node, n))
			return
		}
		if err := c.Delete(a.ctx, &bound[i], client.GracePeriodSeconds(0)); err == nil {
			n++
		}
		if gap := f.Dur("gap"); i+1 < len(bound) && gap > 0 {
			a.rt.After(gap, "pod-gc deletes the next pod of "+node, func() { next(i + 1) })
			return
		}
		next(i + 1)
	}
	next(0)
}

// updateWorkload applies change to the workload of component dep with the
// client named who, retrying on conflict as kubectl and controllers do.
func (a *actors) updateWorkload(who, dep string, change func(w client.Object)) (component, error) {
	comp, ok := a.st.component(dep)
	if !ok {
		return comp, fmt.Errorf("no upgrade has a component named %s", dep)
	}
	c := a.rt.Client(who)
	var err error
	for range 5 {
		w := newWorkload(comp.Kind)
		if err = c.Get(a.ctx, comp.Workload, w); err != nil {
			return comp, err
		}
		change(w)
		if err = c.Update(a.ctx, w); !apierrors.IsConflict(err) {
			return comp, err
		}
	}
	return comp, err
}

func (a *actors) scale(f Fault) {
	n := int32(f.Int("replicas"))
	c, err := a.updateWorkload("horizontal-pod-autoscaler", f.Str("dep"), func(w client.Object) {
		if r := replicasOf(w); r != nil {
			*r = &n
		}
	})
	a.st.record(f, 0, outcome(fmt.Sprintf("%s scaled to %d", describe(c), n), err))
}

func (a *actors) edit(f Fault) {
	stamp := a.rt.Now().UTC().Format(time.RFC3339)
	c, err := a.updateWorkload("kubectl", f.Str("dep"), func(w client.Object) {
		switch f.Str("field") {
		case "labels":
			w.SetLabels(with(w.GetLabels(), "example.com/edited-by", "someone"))
		case "annotations":
			w.SetAnnotations(with(w.GetAnnotations(), "example.com/edited-at", stamp))
		case "replicas":
			if r := replicasOf(w); r != nil {
				n := int32(1)
				if *r != nil {
					n = **r + 1
				}
				*r = &n
			}
		case "restart":
			_, tpl := workloadTemplate(w)
			tpl.Annotations = with(tpl.Annotations, "kubectl.kubernetes.io/restartedAt", stamp)
		}
	})
	a.st.record(f, 0, outcome(fmt.Sprintf("someone edited the %s of %s", f.Str("field"), describe(c)), err))
}

// respec changes the target image of component dep ("both" or "all":
// every component) of every live upgrade to :v3.0.0 (:v4.0.0 where the
// target is :v3.0.0 already, as in the graph demo).
func (a *actors) respec(f Fault) {
	c := a.rt.Client("kubectl")
	changed := 0
	for _, orig := range a.st.upgrades() {
		u := orig.DeepCopyObject().(client.Object)
		if err := c.Get(a.ctx, client.ObjectKeyFromObject(orig), u); err != nil {
			continue
		}
		changed++
		for range 5 {
			for _, comp := range componentsOf(u) {
				if everyComponent(f.Str("dep")) || comp.Name == f.Str("dep") {
					setTargetImage(u, comp.Name, respecImage)
				}
			}
			err := c.Update(a.ctx, u)
			if err == nil {
				a.st.retarget(u)
				a.st.record(f, 0, fmt.Sprintf("upgrade %s/%s now targets %s", u.GetNamespace(), u.GetName(), targets(u)))
				break
			}
			if !apierrors.IsConflict(err) || c.Get(a.ctx, client.ObjectKeyFromObject(u), u) != nil {
				a.st.record(f, 0, "change failed: "+err.Error())
				break
			}
		}
	}
	if changed == 0 {
		a.st.record(f, 0, "no upgrade to change")
	}
}

// deleteUpgrades deletes every upgrade; with recreate > 0 the original
// manifests are applied again that much later.
func (a *actors) deleteUpgrades(f Fault) {
	c := a.rt.Client("kubectl")
	ups := a.st.upgrades()
	for _, u := range ups {
		_ = c.Delete(a.ctx, u.DeepCopyObject().(client.Object))
	}
	a.st.deleted(ups, a.rt.Now())
	again := f.Dur("recreate")
	if again <= 0 {
		a.st.record(f, 0, "the upgrade was deleted")
		return
	}
	a.st.record(f, again, fmt.Sprintf("the upgrade was deleted; it is applied again in %s", again))
	a.rt.After(again, "re-apply the upgrade", func() {
		applied := 0
		for _, u := range ups {
			fresh := u.DeepCopyObject().(client.Object)
			fresh.SetResourceVersion("")
			fresh.SetUID("")
			if err := c.Create(a.ctx, fresh); err != nil {
				// e.g. refused by a webhook that is down: the upgrade
				// stays deleted, and the run ends as for a deletion
				// (seed 331 of --seeds 2000 ran to the time limit when
				// this was taken for a re-apply)
				a.st.note(fmt.Sprintf("the re-apply of upgrade %s failed: %v; it stays deleted", client.ObjectKeyFromObject(u), err))
				continue
			}
			applied++
			a.st.retarget(u)
		}
		if applied > 0 {
			a.st.reapplied()
		}
	})
}

// describe names the workload of a v1alpha1 component as before graphs
// ("deployment job-system/job-worker"), that of a graph's component with
// the component ("component db (statefulset store/store-db)").
func describe(c component) string {
	if c.Graph {
		return c.label()
	}
	return fmt.Sprintf("deployment %s", c.Workload)
}

func with(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func outcome(what string, err error) string {
	if err != nil {
		return what + " failed: " + err.Error()
	}
	return what
}

// respecImage is the image a respec gives a component.
func respecImage(image string) string {
	if imageTag(image) == "v3.0.0" {
		return retag(image, "v4.0.0")
	}
	return retag(image, "v3.0.0")
}

// targets lists u's target images: "A and B" for two components (the
// v1alpha1 wording), else "name=image, …".
func targets(u client.Object) string {
	cs := componentsOf(u)
	if len(cs) == 2 && !cs[0].Graph {
		return cs[0].Image + " and " + cs[1].Image
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + "=" + c.Image
	}
	return strings.Join(parts, ", ")
}
