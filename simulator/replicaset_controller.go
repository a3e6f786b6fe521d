package simulator

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// burstReplicas caps the pods one ReplicaSet sync creates or deletes.
const burstReplicas = 500

// replicaSetController models kube-controller-manager's ReplicaSet
// controller (pkg/controller/replicaset/replica_set.go, syncReplicaSet and
// manageReplicas): it creates pods from the template or deletes the worst
// ones until the active pods (not terminating) match spec.replicas, then
// writes status computed from the pods it listed before acting, as the
// real one does from its informer cache.
//
// Not modelled: expectations (reads here are never stale), adoption of
// orphaned pods and release of pods whose labels stop matching (ownership
// is the controller reference alone), pod deletion cost.
type replicaSetController struct {
	s                   *Sim
	c                   *simClient
	terminatingReplicas bool
	// req is the ReplicaSet updateStatus sends (and answers with), reused
	// by the next sync.
	req appsv1.ReplicaSet
}

func (rsc *replicaSetController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// Read shared, as syncReplicaSet reads rsLister.ReplicaSets(ns).Get:
	// the stored object itself. syncReplicaSet then takes rs.DeepCopy()
	// for calculateStatus and updateReplicaSetStatus; the model needs no
	// deep copy, as it only reads rs and updateStatus writes a shallow copy
	// whose status it replaces as a whole (CheckSharedReads checks that the
	// stored object is left as it was).
	rs, err := rsc.c.getReplicaSetShared(req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	active, terminating, err := rsc.ownedPods(ctx, rs)
	if err != nil {
		return reconcile.Result{}, err
	}
	var manageErr error
	if rs.DeletionTimestamp == nil {
		manageErr = rsc.manageReplicas(ctx, active, rs)
	}
	now := rsc.s.now
	updated, err := rsc.updateStatus(ctx, rs, rsc.calculateStatus(rs, active, terminating, manageErr, now))
	if err != nil {
		return reconcile.Result{}, err
	}
	if manageErr != nil {
		return reconcile.Result{}, manageErr
	}
	// Re-check availability when the next ready pod passes minReadySeconds.
	if updated.Spec.MinReadySeconds > 0 && updated.Status.ReadyReplicas != updated.Status.AvailableReplicas {
		next := timeDuration(updated.Spec.MinReadySeconds)
		for _, p := range active {
			if d := nextAvailabilityCheck(p, updated.Spec.MinReadySeconds, now); d != nil && *d < next {
				next = *d
			}
		}
		return reconcile.Result{RequeueAfter: next}, nil
	}
	return reconcile.Result{}, nil
}

// ownedPods lists the ReplicaSet's pods (controller reference to it),
// split into active and terminating, in name order: shared, read-only,
// as from the pod lister (getPodsForReplicaSet / podLister.Pods(ns).List).
func (rsc *replicaSetController) ownedPods(ctx context.Context, rs *appsv1.ReplicaSet) (active, terminating []*corev1.Pod, err error) {
	pods, err := rsc.c.listPodsShared(rs.Namespace)
	if err != nil {
		return nil, nil, fmt.Errorf("list pods of replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	// The active pods are filtered in place: the typed list is this
	// call's own slice (the pods in it are shared, the slice is not).
	active = pods[:0]
	for _, p := range pods {
		if ref := metav1.GetControllerOfNoCopy(p); ref == nil || ref.UID != rs.UID {
			continue
		}
		switch {
		case isPodActive(p):
			active = append(active, p)
		case isPodTerminating(p):
			terminating = append(terminating, p)
		}
	}
	if len(active) == 0 {
		active = nil // as the append to a nil slice left it
	}
	return active, terminating, nil
}

// manageReplicas creates or deletes pods to reach spec.replicas; creations
// go in slow-start batches (1, 2, 4, ...) that stop at the first error.
func (rsc *replicaSetController) manageReplicas(ctx context.Context, active []*corev1.Pod, rs *appsv1.ReplicaSet) error {
	diff := len(active) - int(*rs.Spec.Replicas)
	switch {
	case diff < 0:
		return slowStart(min(-diff, burstReplicas), func() error { return rsc.createPod(ctx, rs) })
	case diff > 0:
		for _, p := range podsToDelete(active, min(diff, burstReplicas), rsc.s.now) {
			if err := rsc.c.Delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete pod %s/%s of replicaset %s: %w", p.Namespace, p.Name, rs.Name, err)
			}
		}
	}
	return nil
}

func slowStart(count int, create func() error) error {
	for batch, done := 1, 0; done < count; batch *= 2 {
		for range min(batch, count-done) {
			if err := create(); err != nil {
				return err
			}
			done++
		}
	}
	return nil
}

// createPod creates one pod from the template (GetPodFromTemplate): the
// template's labels, annotations, finalizers and spec, generateName
// "<rs>-", and a controller reference to the ReplicaSet. Upstream copies
// the template's labels, annotations, finalizers and spec into the pod;
// the model's request shares them with the ReplicaSet, read only: the
// store copies a request (canonicalize) before it changes anything and
// keeps nothing of it, and the answer replaces the pod's fields rather
// than writing into them (a write into the shared ReplicaSet would be
// caught by CheckSharedReads).
func (rsc *replicaSetController) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	t := &rs.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: rs.Namespace, GenerateName: rs.Name + "-",
			Labels: t.Labels, Annotations: t.Annotations, Finalizers: t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))},
		},
		Spec: t.Spec,
	}
	// The API error as is: it becomes the ReplicaFailure condition's
	// message, as controller_utils.go createPods returns it to
	// manageReplicas (e.g. `pods "web-5d8f-x7k2p" is forbidden: exceeded
	// quota: ...`).
	return rsc.c.Create(ctx, pod)
}
