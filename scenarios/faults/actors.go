package faults

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/simulator"
)

// fireTimed fires a time-triggered fault.
func (in *Injector) fireTimed(f Fault) {
	switch f.Kind {
	case Crash:
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

// deployment returns the key of the dep ("worker" or "api") Deployment of
// the first upgrade.
func (in *Injector) deployment(dep string) (types.NamespacedName, bool) {
	for _, u := range in.upgrades {
		ref := u.Spec.Worker.DeploymentRef.Name
		if dep == "api" {
			ref = u.Spec.API.DeploymentRef.Name
		}
		return types.NamespacedName{Namespace: u.Namespace, Name: ref}, true
	}
	return types.NamespacedName{}, false
}

// updateDeployment applies change with the client named who, retrying on
// conflict as kubectl and controllers do.
func (in *Injector) updateDeployment(who, dep string, change func(d *appsv1.Deployment)) (types.NamespacedName, error) {
	key, ok := in.deployment(dep)
	if !ok {
		return key, fmt.Errorf("no upgrade names a %s deployment", dep)
	}
	c := in.sim.ClientFor(who)
	var err error
	for range 5 {
		var d appsv1.Deployment
		if err = c.Get(in.ctx, key, &d); err != nil {
			return key, err
		}
		change(&d)
		if err = c.Update(in.ctx, &d); !apierrors.IsConflict(err) {
			return key, err
		}
	}
	return key, err
}

func (in *Injector) scale(f Fault) {
	n := int32(f.Int("replicas"))
	key, err := in.updateDeployment("horizontal-pod-autoscaler", f.Str("dep"), func(d *appsv1.Deployment) { d.Spec.Replicas = &n })
	in.record(f, 0, outcome(fmt.Sprintf("deployment %s scaled to %d", key, n), err))
}

func (in *Injector) edit(f Fault) {
	stamp := in.sim.Now().UTC().Format(time.RFC3339)
	key, err := in.updateDeployment("kubectl", f.Str("dep"), func(d *appsv1.Deployment) {
		switch f.Str("field") {
		case "labels":
			d.Labels = with(d.Labels, "example.com/edited-by", "someone")
		case "annotations":
			d.Annotations = with(d.Annotations, "example.com/edited-at", stamp)
		case "replicas":
			n := int32(1)
			if d.Spec.Replicas != nil {
				n = *d.Spec.Replicas + 1
			}
			d.Spec.Replicas = &n
		case "restart":
			d.Spec.Template.Annotations = with(d.Spec.Template.Annotations, "kubectl.kubernetes.io/restartedAt", stamp)
		}
	})
	in.record(f, 0, outcome(fmt.Sprintf("someone edited the %s of deployment %s", f.Str("field"), key), err))
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

// respec changes the images of every live upgrade to :v3.0.0.
func (in *Injector) respec(f Fault) {
	c := in.sim.ClientFor("kubectl")
	var list upgradesv1alpha1.ApplicationUpgradeList
	if err := c.List(in.ctx, &list); err != nil || len(list.Items) == 0 {
		in.record(f, 0, "no upgrade to change")
		return
	}
	for i := range list.Items {
		u := &list.Items[i]
		for range 5 {
			if f.Str("dep") != "api" {
				u.Spec.Worker.Image = retag(u.Spec.Worker.Image, "v3.0.0")
			}
			if f.Str("dep") != "worker" {
				u.Spec.API.Image = retag(u.Spec.API.Image, "v3.0.0")
			}
			err := c.Update(in.ctx, u)
			if err == nil {
				in.retarget(u)
				in.record(f, 0, fmt.Sprintf("upgrade %s/%s now targets %s and %s", u.Namespace, u.Name, u.Spec.Worker.Image, u.Spec.API.Image))
				break
			}
			if !apierrors.IsConflict(err) || c.Get(in.ctx, client.ObjectKeyFromObject(u), u) != nil {
				in.record(f, 0, "change failed: "+err.Error())
				break
			}
		}
	}
}

// deleteUpgrades deletes every upgrade; with recreate > 0 the original
// manifests are applied again that much later.
func (in *Injector) deleteUpgrades(f Fault) {
	c := in.sim.ClientFor("kubectl")
	for _, u := range in.upgrades {
		_ = c.Delete(in.ctx, u.DeepCopy())
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
		for _, u := range in.upgrades {
			fresh := u.DeepCopy()
			fresh.ResourceVersion, fresh.UID = "", ""
			if err := c.Create(in.ctx, fresh); err == nil {
				in.retarget(u)
			}
		}
		in.deletedAt = time.Time{}
	})
}

// retarget records u's new targets: the terminal state follows them, and
// writing an image again is no duplicate once the targets changed (v2, v3,
// then the original manifest re-applied: v2 again).
func (in *Injector) retarget(u *upgradesv1alpha1.ApplicationUpgrade) {
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
