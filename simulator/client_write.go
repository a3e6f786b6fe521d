package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func notFound(gvk schema.GroupVersionKind, name string) error {
	return apierrors.NewNotFound(resourceFor(gvk), name)
}

func (c *simClient) Create(_ context.Context, obj client.Object, opts ...client.CreateOption) error {
	co := (&client.CreateOptions{}).ApplyOptions(opts)
	gvk, in, err := c.prepare(obj)
	if err != nil {
		return err
	}
	after, err := c.admitWrite("create", gvk, obj.GetNamespace(), obj.GetName(), "")
	if err != nil {
		return err
	}
	out, err := c.s.store.create(gvk, in, c.manager(co.FieldManager), isDryRun(co.DryRun))
	if err != nil {
		return result(after, err)
	}
	return result(after, assign(obj, out))
}

func (c *simClient) Update(_ context.Context, obj client.Object, opts ...client.UpdateOption) error {
	uo := (&client.UpdateOptions{}).ApplyOptions(opts)
	return c.update(obj, uo.FieldManager, false, isDryRun(uo.DryRun))
}

func (c *simClient) update(obj client.Object, manager string, status, dryRun bool) error {
	gvk, in, err := c.prepare(obj)
	if err != nil {
		return err
	}
	after, err := c.admitWrite("update", gvk, obj.GetNamespace(), obj.GetName(), subName(status))
	if err != nil {
		return err
	}
	out, err := c.s.store.update(gvk, in, c.manager(manager), status, dryRun)
	if err != nil {
		return result(after, err)
	}
	return result(after, assign(obj, out))
}

// updateStatusDropAnswer is Status().Update for the models that drop the
// answer, as client-go's UpdateStatus does when its caller ignores the
// object it returns: the same request (intercepted, admitted, written),
// without copying the stored object back into obj, which stays as it was.
func (c *simClient) updateStatusDropAnswer(obj client.Object) error {
	return c.updateStatusAnswer(obj, false)
}

// updateStatusSharedAnswer is Status().Update for a model that only reads
// the answer: the same request, and obj becomes a shallow copy of the
// object the store answers with, shared and read-only as a Get with
// client.UnsafeDisableDeepCopy is (checked with CheckSharedReads), instead
// of a deep copy. A caller that changes it afterwards must copy first.
func (c *simClient) updateStatusSharedAnswer(obj client.Object) error {
	return c.updateStatusAnswer(obj, true)
}

// updateStatusAnswer is the status update of updateStatusDropAnswer
// (share false: obj untouched) and updateStatusSharedAnswer (share true).
func (c *simClient) updateStatusAnswer(obj client.Object, share bool) error {
	gvk, in, err := c.prepare(obj)
	if err != nil {
		return err
	}
	after, err := c.admitWrite("update", gvk, obj.GetNamespace(), obj.GetName(), subName(true))
	if err != nil {
		return err
	}
	out, err := c.s.store.update(gvk, in, c.manager(""), true, false)
	if err != nil || !share {
		return result(after, err)
	}
	if dv, sv := reflect.ValueOf(obj), reflect.ValueOf(out); dv.Type() == sv.Type() {
		c.s.shared.handOut(c.name, out)
		dv.Elem().Set(sv.Elem())
		return result(after, nil)
	}
	return result(after, assign(obj, out))
}

func (c *simClient) Patch(_ context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	po := (&client.PatchOptions{}).ApplyOptions(opts)
	if patch.Type() == types.ApplyPatchType {
		return fmt.Errorf("server-side apply of %s through Patch is not modelled by the simulator: use Apply with an apply configuration", objectName(obj))
	}
	return c.patch(obj, patch, po.FieldManager, false, isDryRun(po.DryRun))
}

func (c *simClient) patch(obj client.Object, patch client.Patch, manager string, status, dryRun bool) error {
	gvk, in, err := c.prepare(obj)
	if err != nil {
		return err
	}
	after, err := c.admitWrite("patch", gvk, obj.GetNamespace(), obj.GetName(), subName(status))
	if err != nil {
		return err
	}
	data, err := patch.Data(obj)
	if err != nil {
		return fmt.Errorf("compute %s patch for %s: %w", patch.Type(), objectName(obj), err)
	}
	out, err := c.s.store.patch(gvk, in, patch.Type(), data, c.manager(manager), status, dryRun)
	if err != nil {
		return result(after, err)
	}
	return result(after, assign(obj, out))
}

func (c *simClient) Delete(_ context.Context, obj client.Object, opts ...client.DeleteOption) error {
	do := (&client.DeleteOptions{}).ApplyOptions(opts)
	gvk, err := c.s.store.gvkFor(obj)
	if err != nil {
		return err
	}
	after, err := c.admitWrite("delete", gvk, obj.GetNamespace(), obj.GetName(), "")
	if err != nil {
		return err
	}
	_, _, err = c.s.store.delete(c.s.store.storageGVK(gvk), client.ObjectKeyFromObject(obj), do)
	return result(after, err)
}

// DeleteAllOf deletes every object of obj's kind matching the options, in
// key order, each as Delete would (pods gracefully).
func (c *simClient) DeleteAllOf(_ context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	do := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	gvk, err := c.s.store.gvkFor(obj)
	if err != nil {
		return err
	}
	after, err := c.admitWrite("deletecollection", gvk, do.Namespace, "", "")
	if err != nil {
		return err
	}
	objs, err := c.s.store.selectObjects(gvk, &do.ListOptions)
	if err != nil {
		return result(after, err)
	}
	for _, o := range objs {
		if _, _, err := c.s.store.delete(c.s.store.storageGVK(gvk), client.ObjectKeyFromObject(o), &do.DeleteOptions); err != nil && !apierrors.IsNotFound(err) {
			return result(after, err)
		}
	}
	return after
}

// Apply is a server-side apply of obj (an apply configuration: typed, as
// client-go's applyconfigurations, or client.ApplyConfigurationFromUnstructured)
// under opts' FieldManager (required) and Force; see store.apply. Modelled
// for the kinds in managedKinds only. On success obj is overwritten with
// the object as stored, as controller-runtime's client does.
func (c *simClient) Apply(_ context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	ao := (&client.ApplyOptions{}).ApplyOptions(opts)
	gvk, key, err := applyTarget(obj)
	if err != nil {
		return err
	}
	if _, err := c.s.scheme.New(gvk); err != nil {
		return fmt.Errorf("kind %s of apply configuration %T is not registered in the simulator's scheme: %w", gvk, obj, err)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode apply configuration %T: %w", obj, err)
	}
	after, err := c.admitWrite("patch", gvk, key.Namespace, key.Name, "")
	if err != nil {
		return err
	}
	force := ao.Force != nil && *ao.Force
	out, err := c.s.store.apply(c.s.store.storageGVK(gvk), key, data, ao.FieldManager, force, isDryRun(ao.DryRun))
	if err != nil {
		return result(after, err)
	}
	back, err := json.Marshal(out)
	if err != nil {
		return result(after, fmt.Errorf("encode %s: %w", objectName(out), err))
	}
	return result(after, json.Unmarshal(back, obj))
}

// manager is the field manager of a non-apply write: the request's
// fieldManager, else the client's name (kube-apiserver uses the prefix of
// the User-Agent: handlers/rest.go managerOrUserAgent).
func (c *simClient) manager(requested string) string {
	if requested != "" {
		return requested
	}
	return c.name
}

// prepare resolves obj's kind and converts unstructured input to typed.
func (c *simClient) prepare(obj client.Object) (schema.GroupVersionKind, client.Object, error) {
	gvk, err := c.s.store.gvkFor(obj)
	if err != nil {
		return gvk, nil, err
	}
	in, err := c.typed(gvk, obj)
	return gvk, in, err
}

func subName(status bool) string {
	if status {
		return "status"
	}
	return ""
}

// applyConfiguration is what controller-runtime's client reads of an apply
// configuration to address the request (pkg/client/client_rest_resources.go:
// applyConfiguration; getObjMeta, gvkFromApplyConfiguration): client-go's
// generated apply configurations and client.ApplyConfigurationFromUnstructured
// have these getters.
type applyConfiguration interface {
	GetName() *string
	GetNamespace() *string
	GetKind() *string
	GetAPIVersion() *string
}

// applyTarget is the kind and key an apply of obj is sent to, read from
// its getters as controller-runtime's client reads them, without encoding
// it; an error names what is missing.
func applyTarget(obj runtime.ApplyConfiguration) (schema.GroupVersionKind, client.ObjectKey, error) {
	ac, ok := obj.(applyConfiguration)
	if !ok {
		return schema.GroupVersionKind{}, client.ObjectKey{}, fmt.Errorf("%T is a runtime.ApplyConfiguration but not an applyConfiguration (no GetName, GetNamespace, GetKind, GetAPIVersion)", obj)
	}
	gv, err := schema.ParseGroupVersion(ptr.Deref(ac.GetAPIVersion(), ""))
	if err != nil {
		return schema.GroupVersionKind{}, client.ObjectKey{}, fmt.Errorf("failed to parse %q as GroupVersion: %w", ptr.Deref(ac.GetAPIVersion(), ""), err)
	}
	return gv.WithKind(ptr.Deref(ac.GetKind(), "")), client.ObjectKey{Namespace: ptr.Deref(ac.GetNamespace(), ""), Name: ptr.Deref(ac.GetName(), "")}, nil
}
