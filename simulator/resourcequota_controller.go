package simulator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/watch"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ResourceQuotaControllerName names the resourcequota controller model.
const ResourceQuotaControllerName = "resourcequota-controller"

// resourceQuotaController models kube-controller-manager's resourcequota
// controller (k8s.io/kubernetes pkg/controller/resourcequota,
// resource_quota_controller.go syncResourceQuota): status.hard becomes
// spec.hard and status.used the usage of every pod of the namespace
// (podQuotaUsage summed, masked to the hard resources), written when either
// changed. It syncs a quota when it is added or its spec.hard changes (the
// informer's UpdateFunc ignores status-only updates), and every quota of a
// namespace when one of its pods is deleted or stops being charged
// (resource_quota_monitor.go: QuotaV1Pod(old) && !QuotaV1Pod(new)) — the
// replenishment. Pod creates are charged by the admission (admitPodQuota).
//
// Not modelled: the full resync every --resource-quota-sync-period (5m),
// which only matters for a terminating pod whose grace period runs out
// while it is still stored; the kubelet model removes pods within it.
type resourceQuotaController struct {
	s *Sim
	c *simClient
}

func (s *Sim) installResourceQuotaController(c *simClient) {
	rqc := &resourceQuotaController{s: s, c: c}
	s.AddController(ResourceQuotaControllerName, rqc,
		Watch{Object: &corev1.ResourceQuota{}, Filter: quotaSpecChanged},
		Watch{Object: &corev1.Pod{}, Map: rqc.quotasOfNamespace, Filter: rqc.replenishes},
	)
}

// quotaSpecChanged: added, or spec.hard changed (status writes are ignored).
func quotaSpecChanged(ev WatchEvent) bool {
	if ev.Type == watch.Added {
		return true
	}
	if ev.Type != watch.Modified || ev.Old == nil {
		return false
	}
	return !quota.Equals(ev.Old.(*corev1.ResourceQuota).Spec.Hard, ev.Object.(*corev1.ResourceQuota).Spec.Hard)
}

// replenishes: a pod deleted, or no longer charged, in a namespace with a
// quota (the test on quotas keeps namespaces without one free of events).
func (rqc *resourceQuotaController) replenishes(ev WatchEvent) bool {
	if len(rqc.s.store.quotasIn(ev.Object.GetNamespace())) == 0 {
		return false
	}
	switch ev.Type {
	case watch.Deleted:
		return true
	case watch.Modified:
		return ev.Old != nil && quotaV1Pod(ev.Old.(*corev1.Pod), rqc.s.now) && !quotaV1Pod(ev.Object.(*corev1.Pod), rqc.s.now)
	}
	return false
}

func (rqc *resourceQuotaController) quotasOfNamespace(_ context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, q := range rqc.s.store.quotasIn(obj.GetNamespace()) {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(q)})
	}
	return out
}

// Reconcile is syncResourceQuota: used keeps earlier observations of
// resources no evaluator matches and replaces the rest with the computed
// usage, masked to status.hard's names.
func (rqc *resourceQuotaController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	q := &corev1.ResourceQuota{}
	if err := rqc.c.Get(ctx, req.NamespacedName, q); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	pods, err := rqc.c.listPodsShared(q.Namespace)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods for resourcequota %s/%s: %w", q.Namespace, q.Name, err)
	}
	hard := quota.Add(corev1.ResourceList{}, q.Spec.Hard)
	matched := quota.Intersection(quota.ResourceNames(hard), QuotaResources)
	computed := corev1.ResourceList{} // generic.CalculateUsageStats starts each at a DecimalSI zero
	for _, r := range matched {
		computed[r] = resource.Quantity{Format: resource.DecimalSI}
	}
	for _, p := range pods {
		computed = quota.Add(computed, quota.Mask(podQuotaUsage(p, rqc.s.now), matched))
	}
	used := quota.Add(corev1.ResourceList{}, q.Status.Used)
	for r, v := range computed {
		used[r] = v
	}
	used = quota.Mask(used, quota.ResourceNames(hard))
	if q.Status.Hard != nil && q.Status.Used != nil && quota.Equals(hard, q.Status.Hard) && quota.Equals(used, q.Status.Used) {
		return reconcile.Result{}, nil
	}
	next := q.DeepCopy()
	next.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	if equality.Semantic.DeepEqual(next.Status, q.Status) {
		return reconcile.Result{}, nil
	}
	if err := rqc.c.Status().Update(ctx, next); err != nil {
		return reconcile.Result{}, fmt.Errorf("update status of resourcequota %s/%s: %w", q.Namespace, q.Name, err)
	}
	return reconcile.Result{}, nil
}
