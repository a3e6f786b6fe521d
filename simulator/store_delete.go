package simulator

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// delete mirrors the generic registry's Store.Delete with rest.BeforeDelete
// and updateForGracefulDeletionAndFinalizers
// (k8s.io/apiserver/pkg/registry/generic/registry/store.go,
// pkg/registry/rest/delete.go): preconditions, graceful deletion for pods
// (deletionTimestamp = now + grace, the object stays until a final delete
// with grace 0 — kubelet's job), finalizers that hold the object with a
// deletionTimestamp, a generation bump when deletion starts, and orphaning
// of dependents when asked. gvk is the storage version. It returns the
// object as last stored, and whether it is gone.
//
// A graceful delete whose grace period is, or is shortened to, 0 is two
// writes, as in the registry: the update that sets deletionTimestamp and
// deletionGracePeriodSeconds 0 (a Modified event), then the delete (a
// Deleted event). Pods are the only graceful kind here (podStrategy's
// CheckGracefulDelete returns true for every delete with options), so a
// watcher sees every pod terminating before it is gone, even one deleted
// with grace 0 or never scheduled. An object of another kind, or one whose
// stored grace period is already 0, is deleted in one write.
func (st *store) delete(gvk schema.GroupVersionKind, key types.NamespacedName, opts *client.DeleteOptions) (client.Object, bool, error) {
	gr := resourceFor(gvk)
	cur := st.get(gvk, key)
	if cur == nil {
		return nil, false, apierrors.NewNotFound(gr, key.Name)
	}
	if err := checkPreconditions(gr, cur, opts.Preconditions); err != nil {
		return nil, false, err
	}
	dryRun := isDryRun(opts.DryRun)
	_, gracefulKind := cur.(*corev1.Pod)
	grace := gracePeriod(cur, opts.GracePeriodSeconds)
	graceful := false // rest.BeforeDelete's graceful
	// A shallow copy: what changes below (deletionTimestamp, its grace
	// period, generation) is set, never written through a shared pointer,
	// and canonicalize makes the stored version a copy sharing nothing.
	next := shallowCopy(cur)
	if ts := cur.GetDeletionTimestamp(); ts != nil {
		switch {
		case zeroGrace(cur) && len(cur.GetFinalizers()) > 0:
			return cur, false, nil // waiting for finalizers
		case zeroGrace(cur):
			// a final delete that did not complete: complete it now
		case !shortenGrace(next, ts.Time, grace, st.s.now):
			return cur, false, nil // graceful deletion already pending
		default:
			graceful = true
		}
	} else if gracefulKind || len(cur.GetFinalizers()) > 0 {
		// BeforeDelete for a graceful kind, markAsDeleting otherwise
		// (grace is 0 for every kind but pods).
		next.SetDeletionTimestamp(ptr.To(metav1.NewTime(st.s.now.Add(time.Duration(grace) * time.Second))))
		next.SetDeletionGracePeriodSeconds(ptr.To(grace))
		if g := cur.GetGeneration(); g > 0 {
			next.SetGeneration(g + 1)
		}
		graceful = gracefulKind
	}
	if dryRun {
		return next, false, nil
	}
	if opts.PropagationPolicy != nil && *opts.PropagationPolicy == metav1.DeletePropagationOrphan {
		st.orphanDependents(cur.GetUID())
	}
	next, err := st.canonicalize(gvk, next)
	if err != nil {
		return nil, false, err
	}
	next.SetResourceVersion(st.nextRV())
	gone := len(next.GetFinalizers()) == 0 && (next.GetDeletionTimestamp() == nil || zeroGrace(next))
	if !gone {
		st.commit(watch.Modified, gvk, next, cur)
		return next, false, nil
	}
	if graceful {
		// updateForGracefulDeletionAndFinalizers wrote the object with
		// grace 0 (lastGraceful == 0); Store.Delete then removes it.
		st.commit(watch.Modified, gvk, next, cur)
		// The removed version differs only in resourceVersion: a shallow
		// copy, sharing the rest with the version just stored (stored
		// versions are never changed in place).
		cur, next = next, shallowCopy(next)
		next.SetResourceVersion(st.nextRV())
	}
	st.commit(watch.Deleted, gvk, next, cur)
	return next, true, nil
}

func checkPreconditions(gr schema.GroupResource, cur client.Object, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	if pre.UID != nil && *pre.UID != cur.GetUID() {
		return apierrors.NewConflict(gr, cur.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, cur.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != cur.GetResourceVersion() {
		return apierrors.NewConflict(gr, cur.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, cur.GetResourceVersion()))
	}
	return nil
}

// gracePeriod is the grace period in seconds a delete gets: only pods are
// deleted gracefully (pkg/registry/core/pod/strategy.go CheckGracefulDelete):
// the request's value, else spec.terminationGracePeriodSeconds; 0 for pods
// never scheduled or already terminal. Negative means 1.
func gracePeriod(obj client.Object, requested *int64) int64 {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return 0
	}
	g := int64(corev1.DefaultTerminationGracePeriodSeconds)
	switch {
	case requested != nil:
		g = *requested
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	if g < 0 {
		g = 1
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		g = 0
	}
	return g
}

// shortenGrace applies a second delete to an object already being deleted:
// only a shorter grace period takes effect, never moving deletionTimestamp
// into the past. It reports whether anything changed.
func shortenGrace(next client.Object, ts time.Time, grace int64, now time.Time) bool {
	cur := next.GetDeletionGracePeriodSeconds()
	if grace >= *cur {
		return false
	}
	at := ts.Add(-time.Duration(*cur) * time.Second).Add(time.Duration(grace) * time.Second)
	if at.Before(now) {
		at = now
		if grace != 0 {
			grace = 1
		}
	}
	next.SetDeletionTimestamp(ptr.To(metav1.NewTime(at)))
	next.SetDeletionGracePeriodSeconds(ptr.To(grace))
	return true
}

// orphanDependents removes the owner reference to uid from every object,
// as the garbage collector does for propagationPolicy=Orphan.
func (st *store) orphanDependents(uid types.UID) {
	for _, gvk := range st.kindsSorted() {
		for _, o := range st.list(gvk) {
			refs := o.GetOwnerReferences()
			kept := refs[:0:0]
			for _, r := range refs {
				if r.UID != uid {
					kept = append(kept, r)
				}
			}
			if len(kept) == len(refs) {
				continue
			}
			next := o.DeepCopyObject().(client.Object)
			next.SetOwnerReferences(kept)
			_, _ = st.write(gvk, o, o, next, false, false) // cannot conflict: single-threaded, fresh copy
		}
	}
}
