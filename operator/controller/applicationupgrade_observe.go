package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// observeGraph reads every component of u. A terminal upgrade whose spec
// has not changed is not observed — Decide keeps its phases — except one
// Failed by a rollout failure, which recovers when its Deployment is later
// seen fully rolled out (appupgrade.MayRecover).
func (r *ApplicationUpgradeReconciler) observeGraph(ctx context.Context, u *v1beta1.ApplicationUpgrade) (appupgrade.Graph, error) {
	g := appupgrade.Graph{Upgrade: u}
	if u.Status.Phase.Terminal() && u.Generation == u.Status.ObservedGeneration {
		switch {
		case appupgrade.MayRecover(u):
		case u.Status.Phase == v1beta1.PhaseCompleted:
			// A Completed upgrade is observed for reverts (Decide reports
			// one), unless a newer upgrade references one of its
			// Deployments: that one's image is not a revert.
			if newer, err := r.supersededBy(ctx, u); err != nil || newer {
				return g, err
			}
		default:
			return g, nil
		}
	}
	for i := range u.Spec.Components {
		c, err := r.observe(ctx, u, u.Spec.Components[i])
		if err != nil {
			return g, err
		}
		g.Components = append(g.Components, c)
	}
	var err error
	g.ClaimedBy, g.ClaimedDeployment, err = r.claimedBy(ctx, u)
	return g, err
}

// observe reads one component: its workload (Deployment, StatefulSet or
// DaemonSet), the container to upgrade, and — when the workload is usable
// — what its kind's rollout assessment reads. A returned error is
// transient (for backoff); terminal configuration problems land in
// Component.ConfigError.
func (r *ApplicationUpgradeReconciler) observe(ctx context.Context, u *v1beta1.ApplicationUpgrade, spec v1beta1.Component) (appupgrade.Component, error) {
	field := fieldPath(u, spec)
	w := spec.Workload(u.Namespace)
	o := appupgrade.Component{Spec: spec, Key: w.NamespacedName(), Kind: w.Kind}
	if o.Key.Namespace != u.Namespace && !r.AllowCrossNamespaceRefs {
		// Refused before any read: the status then says nothing about
		// the other namespace (not even whether the workload exists).
		o.ConfigError = appupgrade.CrossNamespaceError(u, spec)
		return o, nil
	}
	if !r.watched(o.Key.Namespace) {
		o.ConfigError = fmt.Errorf("%s is in namespace %q, which this operator does not watch (--watch-namespaces=%s): add the namespace to the flag or fix %s.%s",
			w, o.Key.Namespace, strings.Join(r.WatchNamespaces, ","), field, spec.RefField())
		return o, nil
	}
	obj, err := appupgrade.NewWorkload(w.Kind)
	if err != nil {
		o.ConfigError = fmt.Errorf("%s.%s: %w", field, spec.RefField(), err)
		return o, nil
	}
	dc, err := r.deploymentClient(u)
	if err != nil {
		o.ConfigError = err
		return o, nil
	}
	// The workload is the cache's object, not a copy (as the lists of
	// assess): the reconcile only reads it — the image write is a fresh
	// apply configuration — and the simulator checks that nothing
	// changes it (simulator.CheckSharedReads). A direct (impersonating)
	// client ignores the option and returns a copy.
	if err := dc.Get(ctx, o.Key, obj, client.UnsafeDisableDeepCopy); err != nil {
		if sa := r.serviceAccount(u); sa != "" && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) {
			o.ConfigError = fmt.Errorf("serviceaccount %s/%s may not get %s: %s: grant it get and patch on that %s or fix spec.serviceAccountName", u.Namespace, sa, w, APIMessage(err), w.Kind)
			return o, nil
		}
		if apierrors.IsNotFound(err) {
			o.ConfigError = fmt.Errorf("%s not found: create it or fix %s.%s.name", w, field, spec.RefField())
			return o, nil
		}
		return o, fmt.Errorf("get %s of component %s: %w", w, spec.Name, err)
	}
	o.Workload = obj
	if d, ok := obj.(*appsv1.Deployment); ok {
		o.Deployment = d
	}
	container, err := appupgrade.ResolveContainer(w, appupgrade.PodTemplate(obj), spec.ContainerName, field)
	if err != nil {
		o.ConfigError = err
		return o, nil
	}
	o.Container = container.Name
	o.Image = container.Image
	verdict, err := r.assessWorkload(ctx, obj)
	if err != nil {
		return o, err
	}
	o.Rollout = verdict
	return o, nil
}

// fieldPath is the spec path of component c in messages: "spec.worker" /
// "spec.api" for a v1alpha1-shaped upgrade (what its v1alpha1 users
// edit), "spec.components[name]" otherwise.
func fieldPath(u *v1beta1.ApplicationUpgrade, c v1beta1.Component) string {
	if legacyShape(u) {
		return "spec." + c.Name
	}
	return "spec.components[" + c.Name + "]"
}

// assess lists the Deployment's ReplicaSets and pods by its selector
// (terminating pods included) and calls rollout.Assess. The lists are the
// cache's objects, not copies (client.UnsafeDisableDeepCopy: the reconcile
// reads them only; rollout.Assess is pure), which saves a deep copy of
// every pod and ReplicaSet on every reconcile; the simulator checks that
// nothing changes them (simulator.CheckSharedReads).
func (r *ApplicationUpgradeReconciler) assess(ctx context.Context, d *appsv1.Deployment) (rollout.Verdict, error) {
	sel, err := labelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return rollout.Verdict{State: rollout.Failed, Reason: "InvalidSelector",
			Message: fmt.Sprintf("deployment %s/%s has an invalid selector: %v", d.Namespace, d.Name, err)}, nil
	}
	// client.InNamespace, client.MatchingLabelsSelector and
	// client.UnsafeDisableDeepCopy as one option, built once for both lists.
	listOpts := &client.ListOptions{Namespace: d.Namespace, LabelSelector: sel, UnsafeDisableDeepCopy: &unsafeDisableDeepCopy}
	assess := r.AssessFunc
	lists := &assessLists{}
	if assess == nil {
		// rollout.Assess keeps nothing of the lists: they are reused.
		assess = rollout.Assess
		lists = assessListPool.Get().(*assessLists)
		defer assessListPool.Put(lists)
		lists.rss.Items, lists.pods.Items = lists.rss.Items[:0], lists.pods.Items[:0]
	}
	rss, pods := &lists.rss, &lists.pods
	if err := r.Client.List(ctx, rss, listOpts); err != nil {
		return rollout.Verdict{}, fmt.Errorf("list replicasets of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	if err := r.Client.List(ctx, pods, listOpts); err != nil {
		return rollout.Verdict{}, fmt.Errorf("list pods of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	opts := r.AssessOptions
	opts.Now = r.now()
	if opts.Templates == nil {
		opts.Templates = &r.process().templates
	}
	return assess(d, rss.Items, pods.Items, opts), nil
}

// assessLists are the two lists assess fills. With rollout.Assess (which
// keeps no reference into them) they come from assessListPool and go back
// to it, their Items emptied but kept: a reader that fills an empty Items
// with room in place, as append does, then allocates no new items array
// per reconcile (the simulator's client does; controller-runtime's cache
// reader makes a new slice, meta.SetList, so this changes nothing there).
// The items are shallow copies of the cache's objects: overwriting them
// changes nothing the cache holds.
type assessLists struct {
	rss  appsv1.ReplicaSetList
	pods corev1.PodList
}

var assessListPool = sync.Pool{New: func() any { return new(assessLists) }}

// unsafeDisableDeepCopy is the value of client.UnsafeDisableDeepCopy.
var unsafeDisableDeepCopy = true // read only: its address is in list options

// claimedBy returns namespace/name of the oldest unfinished
// ApplicationUpgrade, older than u, that references one of u's workloads
// (in any namespace), or "", and that workload's index key
// (v1beta1.WorkloadKey.IndexKey). The admission webhook refuses such overlaps;
// this is the controller's own guard for objects that got past it. The
// lists hold the cache's objects (client.UnsafeDisableDeepCopy, read only;
// only names and times are read).
func (r *ApplicationUpgradeReconciler) claimedBy(ctx context.Context, u *v1beta1.ApplicationUpgrade) (string, string, error) {
	// holder is a shallow copy: the list's items are overwritten by the
	// next key's list.
	var holder v1beta1.ApplicationUpgrade
	var claimed string
	list := getUpgradeList()
	defer upgradeListPool.Put(list)
	for _, key := range deploymentRefs(u) {
		list.Items = list.Items[:0]
		if err := r.Client.List(ctx, list, refListOptions(key)); err != nil {
			return "", "", fmt.Errorf("list upgrades referencing %s: %w", describeKey(key), err)
		}
		for i := range list.Items {
			other := &list.Items[i]
			if other.UID != u.UID && !other.Status.Phase.Terminal() && other.DeletionTimestamp == nil && older(other, u) &&
				(claimed == "" || older(other, &holder)) {
				holder, claimed = *other, key
			}
		}
	}
	if claimed == "" {
		return "", "", nil
	}
	if holder.Namespace != u.Namespace {
		// Not named: u's author may not be allowed to see other
		// namespaces' upgrades (appupgrade.Graph.ClaimedBy).
		return appupgrade.ClaimedByOtherNamespace, claimed, nil
	}
	return holder.Namespace + "/" + holder.Name, claimed, nil
}

// supersededBy reports whether an upgrade newer than u references one of
// u's Deployments (lists of the cache's objects, read only, as claimedBy).
func (r *ApplicationUpgradeReconciler) supersededBy(ctx context.Context, u *v1beta1.ApplicationUpgrade) (bool, error) {
	list := getUpgradeList()
	defer upgradeListPool.Put(list)
	for _, key := range deploymentRefs(u) {
		list.Items = list.Items[:0]
		if err := r.Client.List(ctx, list, refListOptions(key)); err != nil {
			return false, fmt.Errorf("list upgrades referencing %s: %w", describeKey(key), err)
		}
		for i := range list.Items {
			if other := &list.Items[i]; other.UID != u.UID && other.DeletionTimestamp == nil && older(u, other) {
				return true, nil
			}
		}
	}
	return false, nil
}

// describeKey is an index key as messages name the workload ("deployment ns/name").
func describeKey(key string) string {
	if w, ok := v1beta1.ParseIndexKey(key); ok {
		return w.String()
	}
	return key
}

func older(a, b *v1beta1.ApplicationUpgrade) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

func (r *ApplicationUpgradeReconciler) watched(ns string) bool {
	return len(r.WatchNamespaces) == 0 || slices.Contains(r.WatchNamespaces, ns)
}
