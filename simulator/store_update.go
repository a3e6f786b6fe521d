package simulator

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errModified is the message of a 409 Conflict on a stale resourceVersion,
// as the real API server words it.
const errModified = "the object has been modified; please apply your changes to the latest version and try again"

// update writes a new version of an existing object (PUT). With status set
// it is the /status subresource: only status (and, for built-in kinds,
// annotations) change; otherwise status is kept and the rest replaced.
// A non-empty resourceVersion that differs from the stored one is a 409
// Conflict; an empty one is an unconditional update, allowed for built-in
// kinds only (custom resources require it).
func (st *store) update(gvk schema.GroupVersionKind, obj client.Object, manager string, status, dryRun bool) (client.Object, error) {
	cur, err := st.current(st.storageGVK(gvk), obj, status)
	if err != nil {
		return nil, err
	}
	rv := obj.GetResourceVersion()
	if rv == "" && !isBuiltin(cur) {
		return nil, apierrors.NewInvalid(gvk.GroupKind(), obj.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), rv, "must be specified for an update")})
	}
	if rv != "" && rv != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(resourceFor(gvk), obj.GetName(), fmt.Errorf("%s", errModified))
	}
	if next, ok := st.canonicalStatus(gvk, cur, obj, status); ok {
		// Already merged (at the storage version): the field manager does
		// not track /status writes, but its lookup can still fail.
		if next, err = st.trackUpdate(gvk, cur, next, manager, status); err != nil {
			return nil, err
		}
		return st.writeMerged(gvk, gvk, cur, next, status, dryRun)
	}
	cand, err := st.canonicalize(gvk, obj)
	if err != nil {
		return nil, err
	}
	if cand, err = st.trackUpdate(gvk, cur, cand, manager, status); err != nil {
		return nil, err
	}
	return st.write(gvk, cur, nil, cand, status, dryRun)
}

// current is the stored object an update or patch of obj applies to; gvk
// is the storage version.
func (st *store) current(gvk schema.GroupVersionKind, obj client.Object, status bool) (client.Object, error) {
	cur := st.get(gvk, client.ObjectKeyFromObject(obj))
	if cur == nil {
		return nil, apierrors.NewNotFound(resourceFor(gvk), obj.GetName())
	}
	if status && !hasStatusSubresource(cur) {
		return nil, apierrors.NewNotFound(resourceFor(gvk), obj.GetName()+"/status")
	}
	return cur, nil
}

// write turns a candidate (already checked against resourceVersion) into
// the next stored version: it merges what the endpoint may change, bumps
// generation on content changes, drops no-op writes, and completes a
// deletion once the last finalizer is gone. cur is the stored object;
// cand, and curV (cur at cand's version gvk, nil to convert here) are at
// the request's version, where the endpoint merge happens, as in the CRD
// handler; the result is converted to storage before generation and no-op
// checks. It returns the object as stored, at version gvk.
func (st *store) write(gvk schema.GroupVersionKind, cur, curV, cand client.Object, status, dryRun bool) (client.Object, error) {
	sgvk := st.storageGVK(gvk)
	if curV == nil {
		var err error
		if curV, err = st.convert(cur, sgvk, gvk); err != nil {
			return nil, err
		}
	}
	next := mergeForEndpoint(curV, cand, status)
	if !status {
		if err := validate(gvk, next); err != nil {
			return nil, err
		}
	}
	return st.writeMerged(gvk, sgvk, cur, next, status, dryRun)
}

// writeMerged is write after the endpoint merge: next, at version gvk, is
// the candidate as the endpoint leaves it; sgvk is the storage version.
func (st *store) writeMerged(gvk, sgvk schema.GroupVersionKind, cur, next client.Object, status, dryRun bool) (client.Object, error) {
	next, err := st.toStorage(next, gvk, sgvk)
	if err != nil {
		return nil, err
	}
	next.SetGeneration(cur.GetGeneration())
	if !status && contentChanged(next, cur) {
		next.SetGeneration(cur.GetGeneration() + 1)
	}
	fast := status && gvk == sgvk
	same := sameContent(next, cur, fast)
	if fast && st.s.shared.on && same != sameContent(next, cur, false) {
		panic(fmt.Sprintf("simulator: status-only comparison of %s disagrees with the whole object's", objectName(cur)))
	}
	if st.s.shared.on && semanticEqual(next, cur) != equality.Semantic.DeepEqual(next, cur) {
		panic(fmt.Sprintf("simulator: semanticEqual of %s disagrees with equality.Semantic.DeepEqual", objectName(cur)))
	}
	if same || dryRun {
		return st.convert(next, sgvk, gvk)
	}
	next.SetResourceVersion(st.nextRV())
	if next.GetDeletionTimestamp() != nil && len(next.GetFinalizers()) == 0 && zeroGrace(next) {
		st.commit(watch.Deleted, sgvk, next, cur)
	} else {
		st.commit(watch.Modified, sgvk, next, cur)
	}
	return st.convert(next, sgvk, gvk)
}

// shallowCopy is a new object holding obj's fields, sharing every map,
// slice and pointer with it.
func shallowCopy(obj client.Object) client.Object {
	v := reflect.New(reflect.TypeOf(obj).Elem())
	v.Elem().Set(reflect.ValueOf(obj).Elem())
	return v.Interface().(client.Object)
}

func zeroGrace(o client.Object) bool {
	g := o.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// mergeForEndpoint applies the registry strategies' PrepareForUpdate: the
// main endpoint keeps status and the server-owned metadata; /status keeps
// everything but status (and, for built-in kinds, takes annotations, which
// the Deployment controller writes its revision through).
func mergeForEndpoint(cur, cand client.Object, status bool) client.Object {
	if status {
		// A shallow copy: what it keeps of cur (metadata, spec) is shared
		// with the stored object, which no write changes in place.
		next := shallowCopy(cur)
		copyStatus(next, cand)
		if isBuiltin(cur) {
			next.SetAnnotations(cand.GetAnnotations())
		}
		return next
	}
	next := cand
	next.SetUID(cur.GetUID())
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.SetDeletionTimestamp(cur.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(cur.GetDeletionGracePeriodSeconds())
	if hasStatusSubresource(cur) {
		copyStatus(next, cur)
	}
	return next
}
