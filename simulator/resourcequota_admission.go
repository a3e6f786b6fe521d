package simulator

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var gvkResourceQuota = corev1.SchemeGroupVersion.WithKind("ResourceQuota")

// QuotaResources are the ResourceQuota spec.hard names the simulator
// models: the pod evaluator's compute resources (k8s.io/kubernetes
// pkg/quota/v1/evaluator/core/pods.go, podResources) for cpu and memory,
// and the pod counts. A quota naming any other resource (services,
// count/replicasets.apps, ephemeral-storage, ...) or using scopes is
// refused at create with one line (validateResourceQuota).
var QuotaResources = []corev1.ResourceName{
	corev1.ResourcePods, "count/pods",
	corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU,
	corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory,
}

// quotaValidationSet are the resources every container must state when a
// quota limits them (pods.go validationSet: "it was a mistake, but ...").
var quotaValidationSet = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory)

// admitPodQuota is kube-apiserver's ResourceQuota admission plugin for a
// pod create (k8s.io/apiserver pkg/admission/plugin/resourcequota,
// controller.go CheckRequest and checkQuotas, v0.37.2), run after the name
// is generated, as the validating admission is: for every quota of the
// pod's namespace (in name order) whose status.hard names a pod resource,
// the pod must state every limited cpu/memory resource ("failed quota:
// <q>: must specify ..."), the quota's usage must be known ("status unknown
// for quota: ..."), and status.used plus the pod's usage must stay within
// status.hard ("exceeded quota: <q>, requested: ..., used: ..., limited:
// ..."); each refusal is a 403 Forbidden naming the pod. When every quota
// admits it, their status.used is raised by the pod's usage (written by
// the API server before the pod is stored; not on dry-run).
//
// Not modelled: quota scopes and scopeSelector (refused at create),
// limitedResources of the admission configuration, the evaluator's batching
// of concurrent requests (the simulator has one writer at a time).
func (st *store) admitPodQuota(pod *corev1.Pod, dryRun bool) error {
	quotas := st.quotasIn(pod.Namespace)
	if len(quotas) == 0 {
		return nil
	}
	usage := podQuotaUsage(pod, st.s.now)
	var admitted []*corev1.ResourceQuota
	for _, q := range quotas {
		restricted := quota.Intersection(quota.ResourceNames(q.Status.Hard), QuotaResources)
		if len(restricted) == 0 {
			continue
		}
		forbid := func(err error) error {
			return apierrors.NewForbidden(resourceFor(gvkPod), pod.Name, err)
		}
		if err := podQuotaConstraints(restricted, pod); err != nil {
			return forbid(fmt.Errorf("failed quota: %s: %w", q.Name, err))
		}
		for _, r := range restricted {
			if _, ok := q.Status.Used[r]; !ok {
				return forbid(fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, prettyPrintResourceNames(restricted)))
			}
		}
		requested := quota.Mask(usage, quota.ResourceNames(q.Status.Hard))
		newUsage := quota.Add(q.Status.Used, requested)
		masked := quota.Mask(newUsage, quota.ResourceNames(requested))
		if ok, exceeded := quota.LessThanOrEqual(masked, q.Status.Hard); !ok {
			return forbid(fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
				prettyPrintQuota(quota.Mask(requested, exceeded)), prettyPrintQuota(quota.Mask(q.Status.Used, exceeded)),
				prettyPrintQuota(quota.Mask(q.Status.Hard, exceeded))))
		}
		next := q.DeepCopy()
		next.Status.Used = newUsage
		admitted = append(admitted, next)
	}
	if dryRun {
		return nil
	}
	for _, q := range admitted {
		if _, err := st.update(gvkResourceQuota, q, "kube-apiserver", true, false); err != nil {
			return fmt.Errorf("update status of resourcequota %s/%s: %w", q.Namespace, q.Name, err)
		}
	}
	return nil
}

// quotasIn lists the ResourceQuotas of a namespace, in name order (the
// quota accessor's lister), as private copies.
func (st *store) quotasIn(ns string) []*corev1.ResourceQuota {
	var out []*corev1.ResourceQuota
	for _, o := range st.list(gvkResourceQuota) {
		if q := o.(*corev1.ResourceQuota); q.Namespace == ns {
			out = append(out, q.DeepCopy())
		}
	}
	return out
}

// podQuotaUsage is pods.go PodUsageFunc: count/pods always; pods and the
// cpu/memory requests and limits (podComputeUsageHelper over
// resourcehelper.PodRequests / PodLimits) while quotaV1Pod holds.
func podQuotaUsage(pod *corev1.Pod, now time.Time) corev1.ResourceList {
	out := corev1.ResourceList{"count/pods": *resource.NewQuantity(1, resource.DecimalSI)}
	if !quotaV1Pod(pod, now) {
		return out
	}
	return quota.Add(out, podComputeUsage(podResources(pod, true), podResources(pod, false)))
}

// quotaV1Pod is pods.go QuotaV1Pod: a pod is charged unless its phase is
// terminal or it is being deleted and its grace period has run out past
// the deletionTimestamp.
func quotaV1Pod(pod *corev1.Pod, now time.Time) bool {
	if isPodTerminal(pod) {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if now.After(pod.DeletionTimestamp.Add(grace)) {
			return false
		}
	}
	return true
}

// podComputeUsage is pods.go podComputeUsageHelper for cpu and memory.
func podComputeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}
	if q, ok := requests[corev1.ResourceCPU]; ok {
		out[corev1.ResourceCPU], out[corev1.ResourceRequestsCPU] = q, q
	}
	if q, ok := limits[corev1.ResourceCPU]; ok {
		out[corev1.ResourceLimitsCPU] = q
	}
	if q, ok := requests[corev1.ResourceMemory]; ok {
		out[corev1.ResourceMemory], out[corev1.ResourceRequestsMemory] = q, q
	}
	if q, ok := limits[corev1.ResourceMemory]; ok {
		out[corev1.ResourceLimitsMemory] = q
	}
	return out
}

// podResources is k8s.io/component-helpers resource.PodRequests (requests
// true) or PodLimits for cpu and memory: the containers' sum, raised to any
// one regular init container's value, sidecars (init containers with
// restartPolicy Always) added to the sum; pod overhead added. In-place
// resize status is not modelled (the spec is what counts).
func podResources(pod *corev1.Pod, requests bool) corev1.ResourceList {
	of := func(c *corev1.Container) corev1.ResourceList {
		if requests {
			return c.Resources.Requests
		}
		return c.Resources.Limits
	}
	sum := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		sum = quota.Add(sum, of(&pod.Spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum = quota.Add(sum, of(c))
			sidecars = quota.Add(sidecars, of(c))
			continue
		}
		sum = quota.Max(sum, quota.Add(sidecars, of(c)))
	}
	if pod.Spec.Overhead != nil {
		sum = quota.Add(sum, pod.Spec.Overhead)
	}
	return quota.Mask(sum, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory})
}

// podQuotaConstraints is pods.go Constraints: when a quota limits cpu or
// memory, every container (init containers included) must state it.
func podQuotaConstraints(required []corev1.ResourceName, pod *corev1.Pod) error {
	req := sets.New(required...).Intersection(quotaValidationSet)
	missing := map[corev1.ResourceName]sets.Set[string]{}
	check := func(c *corev1.Container) {
		have := sets.New(quota.ResourceNames(podComputeUsage(c.Resources.Requests, c.Resources.Limits))...)
		for _, r := range req.Difference(have).UnsortedList() {
			if missing[r] == nil {
				missing[r] = sets.New[string]()
			}
			missing[r].Insert(c.Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i])
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range sets.List(sets.KeySet(missing)) {
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(sets.List(missing[r]), ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// prettyPrintQuota is the admission plugin's prettyPrint: name=quantity,
// sorted by name, comma-separated.
func prettyPrintQuota(l corev1.ResourceList) string {
	var parts []string
	for _, n := range quota.ResourceNames(l) {
		v := l[n]
		parts = append(parts, string(n)+"="+v.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// prettyPrintResourceNames is the admission plugin's function of that name.
func prettyPrintResourceNames(names []corev1.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

// validateResourceQuota refuses, in one line, a quota the simulator would
// otherwise enforce wrongly: scopes, a scopeSelector, or a spec.hard
// resource outside QuotaResources.
func validateResourceQuota(q *corev1.ResourceQuota) error {
	name := client.ObjectKeyFromObject(q)
	if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("resourcequota %s: the simulator does not model quota scopes (spec.scopes, spec.scopeSelector); remove them or run on a real cluster", name))
	}
	for _, r := range quota.ResourceNames(q.Spec.Hard) {
		if !quota.Contains(QuotaResources, r) {
			return apierrors.NewBadRequest(fmt.Sprintf("resourcequota %s: the simulator does not model quota resource %q; it models %s: remove it or run on a real cluster", name, r, prettyPrintResourceNames(QuotaResources)))
		}
	}
	return nil
}
