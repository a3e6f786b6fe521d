package simulator

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	out, err := c.s.store.create(gvk, in, isDryRun(co.DryRun))
	if err != nil {
		return result(after, err)
	}
	return result(after, assign(obj, out))
}

func (c *simClient) Update(_ context.Context, obj client.Object, opts ...client.UpdateOption) error {
	uo := (&client.UpdateOptions{}).ApplyOptions(opts)
	return c.update(obj, false, isDryRun(uo.DryRun))
}

func (c *simClient) update(obj client.Object, status, dryRun bool) error {
	gvk, in, err := c.prepare(obj)
	if err != nil {
		return err
	}
	after, err := c.admitWrite("update", gvk, obj.GetNamespace(), obj.GetName(), subName(status))
	if err != nil {
		return err
	}
	out, err := c.s.store.update(gvk, in, status, dryRun)
	if err != nil {
		return result(after, err)
	}
	return result(after, assign(obj, out))
}

func (c *simClient) Patch(_ context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	po := (&client.PatchOptions{}).ApplyOptions(opts)
	return c.patch(obj, patch, false, isDryRun(po.DryRun))
}

func (c *simClient) patch(obj client.Object, patch client.Patch, status, dryRun bool) error {
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
	out, err := c.s.store.patch(gvk, in, patch.Type(), data, status, dryRun)
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

// Apply (server-side apply) is not modelled.
func (c *simClient) Apply(_ context.Context, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
	return fmt.Errorf("server-side apply of %T is not supported by the simulator: use Patch or Update", obj)
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
