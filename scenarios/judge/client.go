package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Faults injects faults at the operator's API boundary, call by call. The
// same hook works on both backends: the recording client is the operator's
// only way to the API.
type Faults interface {
	// Inject returns the error op fails with (the API is not called), or
	// nil; a *CommitThenFail makes the call, then fails it.
	Inject(op *Op) error
	// After is called when the call has returned (or failed).
	After(op *Op)
}

// CommitThenFail is an ambiguous write: the API is called (the write
// commits) and the operator is told Err, so it cannot tell the write
// happened. The history records the call as failed; Judge finds the
// committed write in the event log (LogWrites).
type CommitThenFail struct{ Err error }

func (e *CommitThenFail) Error() string { return e.Err.Error() }

// WrapClient returns c recording every call into r as made by operator
// process replica, failing calls faults injects (faults may be nil).
func (r *Recorder) WrapClient(c client.Client, replica int, faults Faults) client.Client {
	return &recordingClient{Client: c, r: r, replica: replica, faults: faults}
}

type recordingClient struct {
	client.Client
	r       *Recorder
	replica int
	faults  Faults
}

// do records one call around fn.
func (c *recordingClient) do(ctx context.Context, verb, sub string, obj runtime.Object, key client.ObjectKey, fn func() error) error {
	op := &Op{Replica: c.replica, Verb: verb, Sub: sub, Namespace: key.Namespace, Name: key.Name}
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		op.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	info := infoFrom(ctx)
	if info != nil {
		op.Reconcile, op.Request, op.Upgrade, op.PrevPhase, op.PrevComponents = info.n, info.request, info.upgrade, info.phase, info.comps
	}
	c.r.begin(op)
	var err, after error
	if c.faults != nil {
		if err = c.faults.Inject(op); err != nil {
			op.Injected = true
		}
		if a, ok := err.(*CommitThenFail); ok {
			err, after = nil, a.Err
		}
	}
	if err == nil {
		err = fn()
	}
	if err == nil && after != nil {
		err = after
	}
	if err != nil {
		op.Err = err.Error()
	} else {
		describe(op, obj, info)
	}
	c.r.end(op)
	if c.faults != nil {
		c.faults.After(op)
	}
	return err
}

func (c *recordingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.do(ctx, "get", "", obj, key, func() error { return c.Client.Get(ctx, key, obj, opts...) })
}

func (c *recordingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	return c.do(ctx, "list", "", list, client.ObjectKey{Namespace: lo.Namespace}, func() error { return c.Client.List(ctx, list, opts...) })
}

func (c *recordingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.do(ctx, "create", "", obj, client.ObjectKeyFromObject(obj), func() error { return c.Client.Create(ctx, obj, opts...) })
}

func (c *recordingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.do(ctx, "update", "", obj, client.ObjectKeyFromObject(obj), func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c *recordingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.do(ctx, "patch", "", obj, client.ObjectKeyFromObject(obj), func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

// Apply records a server-side apply as the patch it is on the wire (verb
// patch), described by the object the server returned.
func (c *recordingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	u, err := applyTarget(obj)
	if err != nil {
		return err
	}
	var out client.Object = u
	switch u.GroupVersionKind() {
	case appsv1.SchemeGroupVersion.WithKind("Deployment"):
		out = &appsv1.Deployment{}
	case appsv1.SchemeGroupVersion.WithKind("StatefulSet"):
		out = &appsv1.StatefulSet{}
	case appsv1.SchemeGroupVersion.WithKind("DaemonSet"):
		out = &appsv1.DaemonSet{}
	}
	return c.do(ctx, "patch", "", out, client.ObjectKeyFromObject(u), func() error {
		if err := c.Client.Apply(ctx, obj, opts...); err != nil {
			return err
		}
		data, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("encode applied %s: %w", client.ObjectKeyFromObject(u), err)
		}
		return json.Unmarshal(data, out)
	})
}

// applyTarget is the kind, namespace and name an apply configuration names.
func applyTarget(obj runtime.ApplyConfiguration) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode apply configuration %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("apply configuration %T: %w", obj, err)
	}
	return u, nil
}

func (c *recordingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.do(ctx, "delete", "", obj, client.ObjectKeyFromObject(obj), func() error { return c.Client.Delete(ctx, obj, opts...) })
}

func (c *recordingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	do := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	return c.do(ctx, "deletecollection", "", obj, client.ObjectKey{Namespace: do.Namespace}, func() error { return c.Client.DeleteAllOf(ctx, obj, opts...) })
}

func (c *recordingClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *recordingClient) SubResource(sub string) client.SubResourceClient {
	return &recordingSubResource{SubResourceClient: c.Client.SubResource(sub), c: c, sub: sub}
}

type recordingSubResource struct {
	client.SubResourceClient
	c   *recordingClient
	sub string
}

func (s *recordingSubResource) Get(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceGetOption) error {
	return s.c.do(ctx, "get", s.sub, obj, client.ObjectKeyFromObject(obj), func() error { return s.SubResourceClient.Get(ctx, obj, subResource, opts...) })
}

func (s *recordingSubResource) Create(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	return s.c.do(ctx, "create", s.sub, obj, client.ObjectKeyFromObject(obj), func() error { return s.SubResourceClient.Create(ctx, obj, subResource, opts...) })
}

func (s *recordingSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.do(ctx, "update", s.sub, obj, client.ObjectKeyFromObject(obj), func() error { return s.SubResourceClient.Update(ctx, obj, opts...) })
}

func (s *recordingSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.do(ctx, "patch", s.sub, obj, client.ObjectKeyFromObject(obj), func() error { return s.SubResourceClient.Patch(ctx, obj, patch, opts...) })
}

// describe fills op with what a successful call read or wrote, and teaches
// info the reconciled upgrade's spec and phase when the call read it.
func describe(op *Op, obj runtime.Object, info *reconcileInfo) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		op.RV = o.ResourceVersion
		op.Images = templateImages(o)
		op.Replicas = 1
		if o.Spec.Replicas != nil {
			op.Replicas = *o.Spec.Replicas
		}
		if !op.Write() {
			c := counters(o)
			op.Status = &c
		}
	case *appsv1.StatefulSet:
		op.RV = o.ResourceVersion
		op.Images = podTemplateImages(&o.Spec.Template)
		op.Replicas = 1
		if o.Spec.Replicas != nil {
			op.Replicas = *o.Spec.Replicas
		}
	case *appsv1.DaemonSet:
		// no spec.replicas: Replicas 0 keeps what the log says (judge)
		op.RV = o.ResourceVersion
		op.Images = podTemplateImages(&o.Spec.Template)
	case *upgradesv1alpha1.ApplicationUpgrade:
		hub := &upgradesv1beta1.ApplicationUpgrade{}
		if err := o.ConvertTo(hub); err == nil {
			describeUpgrade(op, hub, string(o.Status.Phase), info)
		}
	case *upgradesv1beta1.ApplicationUpgrade:
		describeUpgrade(op, o, string(o.Status.Phase), info)
	case *appsv1.ReplicaSetList:
		op.Items = replicaSetItems(o.Items)
	case *corev1.PodList:
		op.Items = podItems(o.Items)
	case *upgradesv1alpha1.ApplicationUpgradeList:
		op.Items = fmt.Sprintf("%d upgrades", len(o.Items))
	case *upgradesv1beta1.ApplicationUpgradeList:
		op.Items = fmt.Sprintf("%d upgrades", len(o.Items))
	case client.Object:
		op.RV = o.GetResourceVersion()
	}
}

// describeUpgrade fills op from an upgrade (as the hub, v1beta1) whose
// phase in the version read or written is phase.
func describeUpgrade(op *Op, u *upgradesv1beta1.ApplicationUpgrade, phase string, info *reconcileInfo) {
	op.RV = u.ResourceVersion
	op.Phase = phase
	op.Components = componentPhases(u)
	spec := specOf(u)
	op.Upgrade = spec
	if info != nil && info.request == u.Namespace+"/"+u.Name && !op.Write() {
		info.upgrade, info.phase, info.comps = spec, op.Phase, op.Components
	}
}

func componentPhases(u *upgradesv1beta1.ApplicationUpgrade) map[string]string {
	if len(u.Status.Components) == 0 {
		return nil
	}
	out := make(map[string]string, len(u.Status.Components))
	for _, c := range u.Status.Components {
		out[c.Name] = string(c.Phase)
	}
	return out
}

// SpecOf is the graph of u (a v1beta1 upgrade, the hub) as the judge
// reads it (Input.Upgrades).
func SpecOf(u *upgradesv1beta1.ApplicationUpgrade) *UpgradeSpec { return specOf(u) }

// kindOf is a workload kind as eventlog.Event.Kind says it ("" for a Deployment).
func kindOf(kind string) string {
	if kind == "Deployment" {
		return ""
	}
	return kind
}

// specOf is the graph of u; Worker and API are set when v1alpha1 can say it.
func specOf(u *upgradesv1beta1.ApplicationUpgrade) *UpgradeSpec {
	s := &UpgradeSpec{Name: u.Name, Namespace: u.Namespace, Generation: u.Generation}
	for _, c := range u.Spec.Components {
		cs := ComponentSpec{Name: c.Name, Deployment: c.WorkloadName(), Image: c.Image, Kind: kindOf(string(c.Kind())),
			DependsOn: append([]string(nil), c.DependsOn...)}
		if ns := c.DeploymentNamespace(u.Namespace); ns != u.Namespace {
			cs.Namespace = ns
		}
		s.Components = append(s.Components, cs)
	}
	if eventlog.AlphaShaped(u.Spec) {
		api, worker := u.Spec.Components[0], u.Spec.Components[1]
		if len(worker.DependsOn) > 0 {
			api, worker = worker, api
		}
		s.Worker, s.WorkerImage, s.API, s.APIImage = worker.DeploymentRef.Name, worker.Image, api.DeploymentRef.Name, api.Image
	}
	return s
}

func templateImages(d *appsv1.Deployment) []string { return podTemplateImages(&d.Spec.Template) }

func podTemplateImages(t *corev1.PodTemplateSpec) []string {
	out := make([]string, len(t.Spec.Containers))
	for i, c := range t.Spec.Containers {
		out[i] = c.Image
	}
	return out
}

func counters(d *appsv1.Deployment) eventlog.Counters {
	c := eventlog.Counters{Generation: d.Generation, ObservedGeneration: d.Status.ObservedGeneration, Spec: 1,
		Replicas: d.Status.Replicas, Updated: d.Status.UpdatedReplicas, Ready: d.Status.ReadyReplicas,
		Available: d.Status.AvailableReplicas, Terminating: d.Status.TerminatingReplicas}
	if d.Spec.Replicas != nil {
		c.Spec = *d.Spec.Replicas
	}
	return c
}

func replicaSetItems(rss []appsv1.ReplicaSet) string {
	parts := make([]string, 0, len(rss))
	for _, rs := range rss {
		spec := int32(1)
		if rs.Spec.Replicas != nil {
			spec = *rs.Spec.Replicas
		}
		parts = append(parts, fmt.Sprintf("%s(%d/%d)", rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey], rs.Status.AvailableReplicas, spec))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d replicasets: %s", len(rss), strings.Join(parts, " "))
}

func podItems(pods []corev1.Pod) string {
	type count struct{ n, terminating int }
	by := map[string]*count{}
	for _, p := range pods {
		h := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		if by[h] == nil {
			by[h] = &count{}
		}
		by[h].n++
		if p.DeletionTimestamp != nil {
			by[h].terminating++
		}
	}
	hashes := make([]string, 0, len(by))
	for h := range by {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	parts := make([]string, 0, len(hashes))
	for _, h := range hashes {
		s := fmt.Sprintf("%d×%s", by[h].n, h)
		if t := by[h].terminating; t > 0 {
			s += fmt.Sprintf(" (%d terminating)", t)
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("%d pods: %s", len(pods), strings.Join(parts, ", "))
}
