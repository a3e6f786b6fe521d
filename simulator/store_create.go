package simulator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// generateNameAttempts is how often a create with generateName retries on a
// name collision (KEP-4420 made kube-apiserver retry up to 8 times).
const generateNameAttempts = 8

// nameSuffixAlphabet is the alphabet of generated name suffixes (the one
// k8s.io/apimachinery/pkg/util/rand uses: no vowels, no confusable digits).
const nameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// create stores a new object the way the generic registry's Create does:
// resourceVersion must be empty, generateName is expanded, uid,
// creationTimestamp and generation 1 are set, and status is reset for kinds
// with a status subresource — at the request's version gvk, before the
// object is converted to its storage version. It returns the object as
// stored, at version gvk.
func (st *store) create(gvk schema.GroupVersionKind, obj client.Object, manager string, dryRun bool) (client.Object, error) {
	gr := resourceFor(gvk)
	if obj.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("create %s %s: resourceVersion should not be set on objects to be created", gvk.Kind, objectName(obj)))
	}
	if err := st.checkNamespace(gvk, obj); err != nil {
		return nil, err
	}
	o, err := st.canonicalize(gvk, obj)
	if err != nil {
		return nil, err
	}
	if err := validate(gvk, o); err != nil {
		return nil, err
	}
	if err := st.assignName(gvk, o); err != nil {
		return nil, err
	}
	sgvk := st.storageGVK(gvk)
	key := client.ObjectKeyFromObject(o)
	if st.get(sgvk, key) != nil {
		return nil, apierrors.NewAlreadyExists(gr, o.GetName())
	}
	prepareForCreate(o)
	if pod, ok := o.(*corev1.Pod); ok {
		if err := st.admitPodQuota(pod, dryRun); err != nil {
			return nil, err
		}
	}
	if o, err = st.trackUpdate(gvk, nil, o, manager, false); err != nil {
		return nil, err
	}
	if o, err = st.toStorage(o, gvk, sgvk); err != nil {
		return nil, err
	}
	if dryRun {
		return st.convert(o, sgvk, gvk)
	}
	st.uids++
	o.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", st.uids)))
	o.SetCreationTimestamp(metav1.NewTime(st.s.now.Truncate(1e9)))
	o.SetResourceVersion(st.nextRV())
	st.commit(watch.Added, sgvk, o, nil)
	return st.convert(o, sgvk, gvk)
}

func (st *store) checkNamespace(gvk schema.GroupVersionKind, obj client.Object) error {
	switch {
	case st.namespaced(gvk) && obj.GetNamespace() == "":
		return apierrors.NewBadRequest(fmt.Sprintf("%s %q: the namespace of a namespaced object must be set", gvk.Kind, obj.GetName()))
	case !st.namespaced(gvk) && obj.GetNamespace() != "":
		return apierrors.NewBadRequest(fmt.Sprintf("%s %q is cluster-scoped: namespace %q must be empty", gvk.Kind, obj.GetName(), obj.GetNamespace()))
	}
	return nil
}

// assignName expands generateName with five characters from the seeded
// random source, retrying on collisions.
func (st *store) assignName(gvk schema.GroupVersionKind, o client.Object) error {
	if o.GetName() != "" {
		return nil
	}
	prefix := o.GetGenerateName()
	if prefix == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("create %s: name or generateName is required", gvk.Kind))
	}
	for range generateNameAttempts {
		name := prefix + st.randomSuffix(5)
		if st.get(st.storageGVK(gvk), types.NamespacedName{Namespace: o.GetNamespace(), Name: name}) == nil {
			o.SetName(name)
			return nil
		}
	}
	return apierrors.NewAlreadyExists(resourceFor(gvk), prefix+"*")
}

func (st *store) randomSuffix(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = nameSuffixAlphabet[st.s.rng.Intn(len(nameSuffixAlphabet))]
	}
	return string(b)
}

// prepareForCreate resets what the registry strategies' PrepareForCreate
// reset: status of kinds with a status subresource (pods start Pending,
// namespaces Active), deletion fields, and generation 1.
func prepareForCreate(o client.Object) {
	if hasStatusSubresource(o) {
		st := structOf(o).FieldByName("Status")
		st.SetZero()
	}
	switch t := o.(type) {
	case *corev1.Pod:
		t.Status.Phase = corev1.PodPending
	case *corev1.Namespace:
		t.Status.Phase = corev1.NamespaceActive
	}
	o.SetDeletionTimestamp(nil)
	o.SetDeletionGracePeriodSeconds(nil)
	o.SetGeneration(1)
}
