package faults

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/simulator"
)

// process is one operator replica (Replica: its controller,
// incarnations and leader election) with its client (named after it, so
// faults hit only the operator), its informers when the schedule needs a
// cache (Cache: reads come from them), and its network stall.
type process struct {
	*Replica
	in *Injector
	// writer is the process's client; reader is writer reading through
	// the cache when the process has one
	writer, reader client.Client
	cache          *Cache
	stallUntil     time.Time
}

func (p *process) stalled() bool { return p.in.sim.Now().Before(p.stallUntil) }

// start cold-starts the process's controller: fresh informers, every
// object enqueued. As controller-runtime waits for its caches to sync,
// the controller starts only once every informer has listed; a failed
// list is retried a second later.
func (p *process) start(ctx context.Context) {
	if p.cache == nil {
		p.Ctl.Restart()
		return
	}
	incarnation := p.Incarnation
	p.cache.Start(ctx, p.Ctl, p.Name, func() bool {
		return p.Alive && p.Incarnation == incarnation && p.Ctl.Crashed() && (p.Leading() || !p.in.leaseMode)
	})
}

// pause stops the process's informers with it (Replica.Pause).
func (p *process) pause() {
	if p.cache != nil {
		p.cache.Pause()
	}
}

// resume continues them (Replica.Resume).
func (p *process) resume() {
	if p.cache != nil {
		p.cache.Resume(p.in.ctx)
	}
}

// opClient is the operator's client: p.reader, which reads from the
// process's informers when it has them (Cache.Reader), else from the
// API; writes go to the API under the process's name. Successful
// Deployment writes are counted for the duplicate-write check.
type opClient struct {
	client.Client
	p *process
}

// newOpClient is p's operator client.
func newOpClient(p *process) *opClient { return &opClient{Client: p.reader, p: p} }

func (c *opClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.p.in.write(c.p, obj, func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

// Apply is the operator's image write (server-side apply of a
// Deployment, StatefulSet or DaemonSet), judged as write judges patches.
func (c *opClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	kind, name, namespace, tpl := appliedWorkload(obj)
	if kind == "" || name == nil {
		return c.Client.Apply(ctx, obj, opts...)
	}
	key := types.NamespacedName{Name: *name}
	if namespace != nil {
		key.Namespace = *namespace
	}
	imgs := func() string {
		var out []string
		if tpl != nil && tpl.Spec != nil {
			for _, ct := range tpl.Spec.Containers {
				if ct.Image != nil {
					out = append(out, *ct.Image)
				}
			}
		}
		return strings.Join(out, ",")
	}
	return c.p.in.writeWorkload(c.p, kind, key, imgs, func() error { return c.Client.Apply(ctx, obj, opts...) })
}

// appliedWorkload is the kind ("deployment", "statefulset", "daemonset"),
// name, namespace and pod template of a workload apply configuration;
// kind "" for any other.
func appliedWorkload(obj runtime.ApplyConfiguration) (kind string, name, namespace *string, tpl *corev1ac.PodTemplateSpecApplyConfiguration) {
	switch ac := obj.(type) {
	case *appsv1ac.DeploymentApplyConfiguration:
		if ac.Spec != nil {
			tpl = ac.Spec.Template
		}
		return "deployment", ac.Name, ac.Namespace, tpl
	case *appsv1ac.StatefulSetApplyConfiguration:
		if ac.Spec != nil {
			tpl = ac.Spec.Template
		}
		return "statefulset", ac.Name, ac.Namespace, tpl
	case *appsv1ac.DaemonSetApplyConfiguration:
		if ac.Spec != nil {
			tpl = ac.Spec.Template
		}
		return "daemonset", ac.Name, ac.Namespace, tpl
	}
	return "", nil, nil, nil
}

func (c *opClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.p.in.write(c.p, obj, func() error { return c.Client.Update(ctx, obj, opts...) })
}

// newProcess makes replica n; its reconciler is base with the process's client.
func (in *Injector) newProcess(ctx context.Context, n int) (*process, error) {
	p := &process{in: in}
	p.Replica = NewReplica(in.sim, fmt.Sprintf("operator-%d", n), ReplicaHooks{
		Stalled: func() error {
			if p.stalled() {
				return timeoutErr()
			}
			return nil
		},
		Start:  func() { p.start(in.ctx) },
		Led:    func() { in.startedLeading(p) },
		Lost:   func() bool { return in.stoppedLeading(p) },
		Pause:  p.pause,
		Resume: p.resume,
	})
	p.writer = in.sim.ClientFor(p.Name)
	p.reader = p.writer
	if in.cacheMode {
		cache, err := NewCache(ctx, in.sim, p.Name)
		if err != nil {
			return nil, err
		}
		p.cache, p.reader = cache, cache.Reader(p.writer)
	}
	in.procs = append(in.procs, p)
	in.byClient[p.Name] = p
	in.auxClient[p.Name+"/informer"] = p
	return p, nil
}

// write performs one workload write of the operator (a Deployment,
// StatefulSet or DaemonSet; other kinds pass through). What it committed
// is seen by observeCommit during the call — also when the operator is
// told it failed (an ambiguous write). A call that succeeds without
// changing anything is a duplicate write.
func (in *Injector) write(p *process, obj client.Object, call func() error) error {
	kind, tpl := workloadTemplate(obj)
	if kind == "" {
		return call()
	}
	return in.writeWorkload(p, kind, client.ObjectKeyFromObject(obj), func() string { return templateImages(tpl) }, call)
}

// writeWorkload is write for the workload kind/key; imgs describes the
// images the write left (after the call).
func (in *Injector) writeWorkload(p *process, kind string, key types.NamespacedName, imgs func() string, call func() error) error {
	in.inWrite = &pendingWrite{p: p, kind: kind, key: key}
	err := call()
	w := in.inWrite
	in.inWrite = nil
	if err == nil && !w.committed {
		in.violate("duplicate write: %s wrote %s %s at %s although it already had image %s",
			p.Name, kind, key, simulator.FormatElapsed(in.sim.Elapsed()), imgs())
	}
	return err
}

// workloadTemplate is obj's kind ("deployment", "statefulset",
// "daemonset") and pod template; "" for any other kind.
func workloadTemplate(obj client.Object) (string, *corev1.PodTemplateSpec) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return "deployment", &o.Spec.Template
	case *appsv1.StatefulSet:
		return "statefulset", &o.Spec.Template
	case *appsv1.DaemonSet:
		return "daemonset", &o.Spec.Template
	}
	return "", nil
}

// pendingWrite is an operator write in progress.
type pendingWrite struct {
	p         *process
	kind      string
	key       types.NamespacedName
	committed bool
}

// observeCommit records an operator write of a workload's images as it
// commits, and checks it is the first of that image, and not made for an
// upgrade deleted long ago.
func (in *Injector) observeCommit(ev simulator.WatchEvent) {
	w := in.inWrite
	kind, tpl := workloadTemplate(ev.Object)
	if w == nil || kind != w.kind || client.ObjectKeyFromObject(ev.Object) != w.key {
		return
	}
	if old, ok := ev.Old.(client.Object); ok && old != nil && !reflect.ValueOf(old).IsNil() {
		if _, oldTpl := workloadTemplate(old); oldTpl != nil && templateImages(oldTpl) == templateImages(tpl) {
			return
		}
	}
	w.committed = true
	img := templateImages(tpl)
	name := w.key.String()
	if kind != "deployment" {
		name = kind + "/" + name
	}
	in.writeLog = append(in.writeLog, Write{At: in.sim.Elapsed(), Process: w.p.Name, Deployment: name, Image: img})
	if in.writes[name+"="+img]++; in.writes[name+"="+img] == 2 {
		in.violate("duplicate write: %s %s written twice with image %s (again by %s at %s)",
			kind, w.key, img, w.p.Name, simulator.FormatElapsed(in.sim.Elapsed()))
	}
	if !in.deletedAt.IsZero() && in.sim.Now().Sub(in.deletedAt) > deleteSettle {
		in.violate("%s %s written by %s at %s, %s after its upgrade was deleted", kind, w.key, w.p.Name,
			simulator.FormatElapsed(in.sim.Elapsed()), in.sim.Now().Sub(in.deletedAt))
	}
}

// templateImages is a pod template's images, comma-separated.
func templateImages(t *corev1.PodTemplateSpec) string {
	imgs := make([]string, len(t.Spec.Containers))
	for i, c := range t.Spec.Containers {
		imgs[i] = c.Image
	}
	return strings.Join(imgs, ",")
}

func images(d *appsv1.Deployment) string {
	imgs := make([]string, len(d.Spec.Template.Spec.Containers))
	for i, c := range d.Spec.Template.Spec.Containers {
		imgs[i] = c.Image
	}
	return strings.Join(imgs, ",")
}

// Injected API errors.
func conflictErr(gr schema.GroupResource, name string) error {
	return apierrors.NewConflict(gr, name,
		fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again (injected)"))
}

func unavailableErr() error {
	return apierrors.NewServiceUnavailable("the server is currently unable to handle the request (injected)")
}

func timeoutErr() error {
	return apierrors.NewTimeoutError("the request did not complete within the allowed duration (injected)", 1)
}

var errKilled = fmt.Errorf("operator process killed (injected crash)")

func groupResource(gvk schema.GroupVersionKind) schema.GroupResource {
	return schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
}

func notFound(gvk schema.GroupVersionKind, name string) error {
	return apierrors.NewNotFound(groupResource(gvk), name)
}
