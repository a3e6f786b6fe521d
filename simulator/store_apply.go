package simulator

import (
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

// Server-side apply and managed fields, for the kinds in managedKinds
// (the workloads the operator writes: Deployments, StatefulSets,
// DaemonSets). The store runs the field manager kube-apiserver runs —
// k8s.io/apimachinery/pkg/util/managedfields.NewDefaultFieldManager over
// sigs.k8s.io/structured-merge-diff, built per kind as
// staging/src/k8s.io/apiserver/pkg/endpoints/installer.go
// (registerResourceHandlers) builds it — so ownership is per field with
// the schema's list merge keys (containers by `name`), apply conflicts are
// the real 409s and force moves ownership:
//   - apply (PATCH application/apply-patch+yaml): FieldManager.Apply, as
//     staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go
//     (applyPatcher.applyPatchToCurrentObject) calls it;
//   - create, update and other patches of the main resource:
//     FieldManager.UpdateNoErrors, as handlers/create.go, update.go and
//     patch.go call it, under the request's fieldManager or, without one,
//     the client's name (the API server uses the User-Agent's prefix:
//     handlers/rest.go managerOrUserAgent).
//
// Fidelity limits: writes to /status are not tracked (the real server
// records them under subresource "status"); an apply to an object that
// does not exist is a 404 (the real server creates it); managedFields
// timestamps are the virtual clock's, at second precision, and change
// only when the manager's field set changes (the field manager stamps
// time.Now, which the simulator may not read).
var managedKinds = map[schema.GroupVersionKind]bool{
	appsv1.SchemeGroupVersion.WithKind("Deployment"):  true,
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"): true,
	appsv1.SchemeGroupVersion.WithKind("DaemonSet"):   true,
}

// resetFields are the fields the main endpoint never takes from a request,
// by version: pkg/registry/apps/deployment/strategy.go
// (deploymentStrategy.GetResetFields), statefulset/strategy.go
// (statefulSetStrategy.GetResetFields) and daemonset/strategy.go
// (daemonSetStrategy.GetResetFields) each reset status at apps/v1.
var resetFields = map[fieldpath.APIVersion]fieldpath.Filter{
	"apps/v1": fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status"))),
}

var (
	typeConverterOnce sync.Once
	typeConverter     managedfields.TypeConverter
)

// builtinTypeConverter is the structured-merge-diff schema of the built-in
// kinds (client-go's embedded OpenAPI models), parsed once per process.
func builtinTypeConverter() managedfields.TypeConverter {
	typeConverterOnce.Do(func() { typeConverter = applyconfigurations.NewTypeConverter(clientgoscheme.Scheme) })
	return typeConverter
}

// fieldManager returns the field manager of kind gvk (main resource), nil
// for kinds whose managed fields are not tracked.
func (st *store) fieldManager(gvk schema.GroupVersionKind) (*managedfields.FieldManager, error) {
	if !managedKinds[gvk] {
		return nil, nil
	}
	if fm := st.fieldManagers[gvk]; fm != nil {
		return fm, nil
	}
	sch := st.s.scheme
	fm, err := managedfields.NewDefaultFieldManager(builtinTypeConverter(), sch, sch, sch, gvk, gvk.GroupVersion(), "", resetFields)
	if err != nil {
		return nil, fmt.Errorf("field manager for %s: %w", gvk, err)
	}
	st.fieldManagers[gvk] = fm
	return fm, nil
}

// trackUpdate records a non-apply write of cand over cur (nil on create)
// by manager in cand's managedFields, as the API server does for create,
// update and patch requests. Kinds not tracked, and /status writes, are
// left alone.
func (st *store) trackUpdate(gvk schema.GroupVersionKind, cur, cand client.Object, manager string, status bool) (client.Object, error) {
	fm, err := st.fieldManager(gvk)
	if fm == nil || err != nil || status {
		return cand, err
	}
	live := cur
	if live == nil {
		ro, err := st.s.scheme.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("kind %s: %w", gvk, err)
		}
		live = ro.(client.Object)
	}
	out, ok := fm.UpdateNoErrors(live.DeepCopyObject(), cand, manager).(client.Object)
	if !ok {
		return nil, fmt.Errorf("field manager of %s returned a %T", gvk, out)
	}
	st.stampManagedFields(cur, out)
	return out, nil
}

// apply is a server-side apply (PATCH with application/apply-patch+yaml)
// of data to the stored object key by manager. A resourceVersion in data
// must match the stored one (409 otherwise); a field owned by another
// manager with a different value is a 409 Conflict naming the manager and
// the field, unless force, which moves the field to manager. It returns the
// object as stored.
func (st *store) apply(gvk schema.GroupVersionKind, key client.ObjectKey, data []byte, manager string, force, dryRun bool) (client.Object, error) {
	fm, err := st.fieldManager(gvk)
	if err != nil {
		return nil, err
	}
	if fm == nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("server-side apply of %s %s is not modelled by the simulator (only %v): use a merge patch", gvk.Kind, key, kindList(managedKinds)))
	}
	if manager == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("apply of %s %s: PATCH requests with apply content type require fieldManager", gvk.Kind, key))
	}
	patchObj := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(data, &patchObj.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("apply of %s %s: error decoding YAML: %v", gvk.Kind, key, err))
	}
	probe := &unstructured.Unstructured{}
	probe.SetNamespace(key.Namespace)
	probe.SetName(key.Name)
	cur, err := st.current(gvk, probe, false)
	if err != nil {
		return nil, err
	}
	if rv := patchObj.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(resourceFor(gvk), key.Name, fmt.Errorf("%s", errModified))
	}
	res, err := fm.Apply(cur.DeepCopyObject(), patchObj, manager, force)
	if err != nil {
		return nil, err
	}
	cand, ok := res.(client.Object)
	if !ok {
		return nil, fmt.Errorf("field manager of %s returned a %T", gvk, res)
	}
	st.stampManagedFields(cur, cand)
	st.applyDefaults(cand)
	cand.SetResourceVersion(cur.GetResourceVersion())
	return st.write(gvk, cur, cur, cand, false, dryRun)
}

// stampManagedFields replaces the field manager's wall-clock timestamps:
// an entry whose manager, operation, version and fields are unchanged
// keeps its time, any other gets the virtual now (second precision).
func (st *store) stampManagedFields(cur, next client.Object) {
	var old []metav1.ManagedFieldsEntry
	if cur != nil {
		old = cur.GetManagedFields()
	}
	entries := next.GetManagedFields()
	now := metav1.NewTime(st.s.now.Truncate(1e9))
	for i := range entries {
		entries[i].Time = &now
		for _, o := range old {
			if sameEntry(o, entries[i]) {
				entries[i].Time = o.Time
			}
		}
	}
	next.SetManagedFields(entries)
}

func sameEntry(a, b metav1.ManagedFieldsEntry) bool {
	if a.Manager != b.Manager || a.Operation != b.Operation || a.APIVersion != b.APIVersion || a.Subresource != b.Subresource {
		return false
	}
	if a.FieldsV1 == nil || b.FieldsV1 == nil {
		return a.FieldsV1 == b.FieldsV1
	}
	return string(a.FieldsV1.Raw) == string(b.FieldsV1.Raw)
}

func kindList(m map[schema.GroupVersionKind]bool) []string {
	var out []string
	for gvk := range m {
		out = append(out, gvk.Kind)
	}
	return out
}
