package simulator

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Status is the /status subresource writer: Update and Patch change only
// status (plus annotations on built-in kinds), never spec or generation.
func (c *simClient) Status() client.SubResourceWriter { return &subResourceClient{c: c, sub: "status"} }

// SubResource supports "status" and pods' "binding" (Create with a
// corev1.Binding, as kube-scheduler binds).
func (c *simClient) SubResource(sub string) client.SubResourceClient {
	return &subResourceClient{c: c, sub: sub}
}

type subResourceClient struct {
	c   *simClient
	sub string
}

func (r *subResourceClient) unsupported(verb string, obj runtime.Object) error {
	return fmt.Errorf("%s of subresource %q of %T is not supported by the simulator", verb, r.sub, obj)
}

func (r *subResourceClient) Get(ctx context.Context, obj, subResource client.Object, _ ...client.SubResourceGetOption) error {
	if r.sub != "status" {
		return r.unsupported("get", obj)
	}
	return r.c.Get(ctx, client.ObjectKeyFromObject(obj), subResource)
}

func (r *subResourceClient) Create(_ context.Context, obj, subResource client.Object, _ ...client.SubResourceCreateOption) error {
	b, ok := subResource.(*corev1.Binding)
	if r.sub != "binding" || !ok {
		return r.unsupported("create", obj)
	}
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	after, err := r.c.admitWrite("create", gvk, obj.GetNamespace(), obj.GetName(), "binding")
	if err != nil {
		return err
	}
	return result(after, r.c.s.store.bind(client.ObjectKeyFromObject(obj), b.Target.Name))
}

func (r *subResourceClient) Update(_ context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if r.sub != "status" {
		return r.unsupported("update", obj)
	}
	uo := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	return r.c.update(obj, uo.FieldManager, true, isDryRun(uo.DryRun))
}

func (r *subResourceClient) Patch(_ context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if r.sub != "status" {
		return r.unsupported("patch", obj)
	}
	po := (&client.SubResourcePatchOptions{}).ApplyOptions(opts)
	return r.c.patch(obj, patch, po.FieldManager, true, isDryRun(po.DryRun))
}

func (r *subResourceClient) Apply(_ context.Context, obj runtime.ApplyConfiguration, _ ...client.SubResourceApplyOption) error {
	return fmt.Errorf("server-side apply of %T is not supported by the simulator", obj)
}

// bind assigns a pod to a node as the pods/binding subresource does
// (pkg/registry/core/pod/storage: assignPod): spec.nodeName is set and a
// PodScheduled=True condition added, without a generation bump. A pod that
// is already bound or being deleted is a 409 Conflict.
func (st *store) bind(key client.ObjectKey, node string) error {
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	cur, _ := st.get(gvk, key).(*corev1.Pod)
	if cur == nil {
		return notFound(gvk, key.Name)
	}
	if cur.Spec.NodeName != "" {
		return apierrors.NewConflict(resourceFor(gvk), key.Name, fmt.Errorf("pod %s is already assigned to node %q", key, cur.Spec.NodeName))
	}
	if cur.DeletionTimestamp != nil {
		return apierrors.NewConflict(resourceFor(gvk), key.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", key))
	}
	// A shallow copy: what it keeps of cur is shared with the stored
	// object, which no write changes in place; the conditions, changed
	// here, are its own.
	next := new(corev1.Pod)
	*next = *cur
	next.Spec.NodeName = node
	next.Status.Conditions = slices.Clone(cur.Status.Conditions)
	setPodCondition(&next.Status, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(st.s.now.Truncate(1e9)),
	})
	next.ResourceVersion = st.nextRV()
	st.commit(watch.Modified, gvk, next, cur)
	return nil
}

// setPodCondition adds or replaces a pod condition, keeping the transition
// time when the status does not change (podutil.UpdatePodCondition).
func setPodCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type != c.Type {
			continue
		}
		if st.Conditions[i].Status == c.Status {
			c.LastTransitionTime = st.Conditions[i].LastTransitionTime
		}
		st.Conditions[i] = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}
