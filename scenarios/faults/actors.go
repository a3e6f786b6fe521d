package faults

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/simulator"
)

// fireTimed fires a time-triggered fault.
func (in *Injector) fireTimed(f Fault) {
	switch f.Kind {
	case Crash:
		if f.Float("p") > 0 {
			in.startRandomKills(f)
			return
		}
		in.crash(in.target(), f)
	case Stale:
		in.stale(f)
	case Drop:
		in.drop(f)
	case LeaseLost:
		in.leaseLost(f)
	case KCMLag:
		in.kcmLag(f)
	case WebhookDown:
		in.webhookDown(f)
	case NodeLost:
		in.nodeLost(f)
	case Scale:
		in.scale(f)
	case Edit:
		in.edit(f)
	case Respec:
		in.respec(f)
	case Delete:
		in.deleteUpgrades(f)
	case GitopsRevert:
		in.gitopsRevert(f)
	}
}

func (in *Injector) stale(f Fault) {
	d, lag, events, kind := f.Dur("for"), f.Dur("lag"), f.Int("events"), f.Str("kind")
	how := fmt.Sprintf("%s behind", lag)
	if events > 0 {
		how = fmt.Sprintf("%d events behind", events)
		lag = 0
	}
	in.record(f, d, fmt.Sprintf("the operator's %s informers run %s for %s", kind, how, d))
	for _, p := range in.procs {
		p.cache.setLag(kind, lag, events)
	}
	in.sim.Schedule(d, "end of "+f.String(), func() {
		for _, p := range in.procs {
			p.cache.setLag(kind, 0, 0)
		}
	})
}

func (in *Injector) drop(f Fault) {
	d, kind := f.Dur("for"), f.Str("kind")
	in.record(f, d, fmt.Sprintf("the operator's %s watches lose every event for %s, then relist", kind, d))
	for _, p := range in.procs {
		p.cache.setDrop(in.ctx, kind, true)
	}
	in.sim.Schedule(d, "end of "+f.String(), func() {
		for _, p := range in.procs {
			p.cache.setDrop(in.ctx, kind, false)
		}
	})
}

// kcmLag delays the watch events of the Deployment and ReplicaSet controllers.
func (in *Injector) kcmLag(f Fault) {
	d, lag := f.Dur("for"), f.Dur("lag")
	in.record(f, d, fmt.Sprintf("the Deployment and ReplicaSet controllers see events %s late for %s", lag, d))
	names := []string{simulator.DeploymentControllerName, simulator.ReplicaSetControllerName}
	for _, n := range names {
		in.sim.Controller(n).SetWatchDelay(lag)
	}
	in.sim.Schedule(d, "end of "+f.String(), func() {
		for _, n := range names {
			in.sim.Controller(n).SetWatchDelay(0)
		}
	})
}

// webhookDown makes the validating webhook unreachable for the fault's
// window (intercept refuses the matching writes).
func (in *Injector) webhookDown(f Fault) {
	d := f.Dur("for")
	in.record(f, d, fmt.Sprintf("the validating webhook is unreachable for %s: ApplicationUpgrade creates and updates fail", d))
	in.webhookDownUntil = in.sim.Now().Add(d)
}

// webhookRefuses reports whether req is one the API server sends to the
// validating webhook while it is down: a create, update or patch of an
// ApplicationUpgrade's main resource (the rule of
// deploy/webhook/manifests.yaml: CREATE and UPDATE of applicationupgrades,
// any version by matchPolicy Equivalent; a patch is an UPDATE).
func (in *Injector) webhookRefuses(req simulator.APIRequest) bool {
	if in.webhookDownUntil.IsZero() || !in.sim.Now().Before(in.webhookDownUntil) {
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
// collector does once a lost node's object is removed.
func (in *Injector) nodeLost(f Fault) {
	c := in.sim.ClientFor("pod-gc")
	var pods corev1.PodList
	if err := c.List(in.ctx, &pods); err != nil {
		in.record(f, 0, "could not list pods: "+err.Error())
		return
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != f.Str("node") {
			continue
		}
		if err := c.Delete(in.ctx, p, client.GracePeriodSeconds(0)); err == nil {
			n++
		}
	}
	in.record(f, 0, fmt.Sprintf("node %s lost: %d pods deleted", f.Str("node"), n))
}

// component returns the component called dep of the first upgrade that
// has one, with its current target image.
func (in *Injector) component(dep string) (component, bool) {
	for _, u := range in.upgrades {
		if s := in.spec[client.ObjectKeyFromObject(u)]; s != nil {
			if c, ok := s.component(dep); ok {
				return *c, true
			}
		}
	}
	return component{}, false
}

// updateWorkload applies change to the workload of component dep with the
// client named who, retrying on conflict as kubectl and controllers do.
func (in *Injector) updateWorkload(who, dep string, change func(w client.Object)) (component, error) {
	comp, ok := in.component(dep)
	if !ok {
		return comp, fmt.Errorf("no upgrade has a component named %s", dep)
	}
	c := in.sim.ClientFor(who)
	var err error
	for range 5 {
		w := newWorkload(comp.Kind)
		if err = c.Get(in.ctx, comp.Workload, w); err != nil {
			return comp, err
		}
		change(w)
		if err = c.Update(in.ctx, w); !apierrors.IsConflict(err) {
			return comp, err
		}
	}
	return comp, err
}

func (in *Injector) scale(f Fault) {
	n := int32(f.Int("replicas"))
	c, err := in.updateWorkload("horizontal-pod-autoscaler", f.Str("dep"), func(w client.Object) {
		if r := replicasOf(w); r != nil {
			*r = &n
		}
	})
	in.record(f, 0, outcome(fmt.Sprintf("%s scaled to %d", describe(c), n), err))
}

func (in *Injector) edit(f Fault) {
	stamp := in.sim.Now().UTC().Format(time.RFC3339)
	c, err := in.updateWorkload("kubectl", f.Str("dep"), func(w client.Object) {
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
	in.record(f, 0, outcome(fmt.Sprintf("someone edited the %s of %s", f.Str("field"), describe(c)), err))
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

// respec changes the target image of component dep ("both" or "all":
// every component) of every live upgrade to :v3.0.0 (:v4.0.0 where the
// target is :v3.0.0 already, as in the graph demo).
func (in *Injector) respec(f Fault) {
	c := in.sim.ClientFor("kubectl")
	changed := 0
	for _, orig := range in.upgrades {
		u := orig.DeepCopyObject().(client.Object)
		if err := c.Get(in.ctx, client.ObjectKeyFromObject(orig), u); err != nil {
			continue
		}
		changed++
		for range 5 {
			for _, comp := range componentsOf(u) {
				if everyComponent(f.Str("dep")) || comp.Name == f.Str("dep") {
					setTargetImage(u, comp.Name, respecImage)
				}
			}
			err := c.Update(in.ctx, u)
			if err == nil {
				in.retarget(u)
				in.record(f, 0, fmt.Sprintf("upgrade %s/%s now targets %s", u.GetNamespace(), u.GetName(), targets(u)))
				break
			}
			if !apierrors.IsConflict(err) || c.Get(in.ctx, client.ObjectKeyFromObject(u), u) != nil {
				in.record(f, 0, "change failed: "+err.Error())
				break
			}
		}
	}
	if changed == 0 {
		in.record(f, 0, "no upgrade to change")
	}
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

// deleteUpgrades deletes every upgrade; with recreate > 0 the original
// manifests are applied again that much later.
func (in *Injector) deleteUpgrades(f Fault) {
	c := in.sim.ClientFor("kubectl")
	for _, u := range in.upgrades {
		_ = c.Delete(in.ctx, u.DeepCopyObject().(client.Object))
		in.spec[client.ObjectKeyFromObject(u)].deleted = true
	}
	in.deletedAt = in.sim.Now()
	again := f.Dur("recreate")
	if again <= 0 {
		in.record(f, 0, "the upgrade was deleted")
		return
	}
	in.record(f, again, fmt.Sprintf("the upgrade was deleted; it is applied again in %s", again))
	in.sim.Schedule(again, "re-apply the upgrade", func() {
		applied := 0
		for _, u := range in.upgrades {
			fresh := u.DeepCopyObject().(client.Object)
			fresh.SetResourceVersion("")
			fresh.SetUID("")
			if err := c.Create(in.ctx, fresh); err != nil {
				// e.g. refused by a webhook that is down: the upgrade
				// stays deleted, and the run ends as for a deletion
				// (seed 331 of --seeds 2000 ran to the time limit when
				// this was taken for a re-apply)
				in.note(fmt.Sprintf("the re-apply of upgrade %s failed: %v; it stays deleted", client.ObjectKeyFromObject(u), err))
				continue
			}
			applied++
			in.retarget(u)
		}
		if applied > 0 {
			in.deletedAt = time.Time{}
		}
	})
}

// retarget records u's new targets: the terminal state follows them, and
// writing an image again is no duplicate once the targets changed (v2, v3,
// then the original manifest re-applied: v2 again).
func (in *Injector) retarget(u client.Object) {
	in.spec[client.ObjectKeyFromObject(u)] = newTargetSpec(u)
	in.writes = map[string]int{}
}

func (in *Injector) allDeleted() bool {
	for _, s := range in.spec {
		if !s.deleted {
			return false
		}
	}
	return true
}
