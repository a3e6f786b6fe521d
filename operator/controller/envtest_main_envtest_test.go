//go:build envtest

package controller

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// The envtest specs run the real reconciler against a real kube-apiserver
// and etcd (from `make controlplane`, found through KUBEBUILDER_ASSETS or
// ./bin). No controller runs: the test plays the Deployment controller by
// creating ReplicaSets and pods and writing Deployment status by hand, so
// every intermediate state (stale status, surge, terminating pod) is exact.
// Run with `make test-envtest`.

var envCfg *rest.Config

func TestMain(m *testing.M) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join("..", "..", "bin")
	}
	port, err := freePort()
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: find a port for the conversion webhook: %v\n", err)
		os.Exit(1)
	}
	// Scheme holds both versions, v1alpha1 convertible to the v1beta1 hub:
	// envtest points the CRD's conversion at https://127.0.0.1:<port>/convert
	// with its own CA, and convertServer serves it for the whole run.
	env := &envtest.Environment{
		Scheme:                   testScheme(),
		CRDDirectoryPaths:        []string{filepath.Join("..", "..", "deploy", "crd", "bases")},
		ErrorIfCRDPathMissing:    true,
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 2 * time.Minute, // shared, busy cores
		ControlPlaneStopTimeout:  time.Minute,
		WebhookInstallOptions:    envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1", LocalServingPort: port},
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: start etcd and kube-apiserver from %s (run 'make controlplane'): %v\n", assets, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopWebhook, err := serveConversion(ctx, env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: conversion webhook: %v\n", err)
		os.Exit(1)
	}
	envCfg = cfg
	code := m.Run()
	cancel()
	stopWebhook()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "envtest: stop: %v\n", err)
	}
	os.Exit(code)
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serveConversion starts the CRD conversion webhook (controller-runtime's
// handler over the scheme's Convertible/Hub types: the product's v1alpha1
// ConvertTo/ConvertFrom) on env's webhook host and port, with the serving
// certificate env.Start wrote, and returns once it accepts connections.
// The returned func waits for it to stop after ctx is cancelled.
func serveConversion(ctx context.Context, env *envtest.Environment) (func(), error) {
	o := env.WebhookInstallOptions
	srv := webhook.NewServer(webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir})
	srv.Register("/convert", conversion.NewWebhookHandler(env.Scheme, conversion.NewRegistry()))
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	started := srv.StartedChecker()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return started(nil) == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("serve on %s:%d: %w", o.LocalServingHost, o.LocalServingPort, err)
	}
	return func() {
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "envtest: conversion webhook: %v\n", err)
		}
	}, nil
}

const (
	workerV1 = "registry.example.com/job-worker:v1.0.0"
	workerV2 = "registry.example.com/job-worker:v2.0.0"
	apiV1    = "registry.example.com/job-api:v1.0.0"
	apiV2    = "registry.example.com/job-api:v2.0.0"
	// keepFinalizer holds a deleted pod in the terminating state, as a
	// kubelet does during the grace period.
	keepFinalizer = "envtest.lunadas.dev/terminating"
)

// envWorld is one namespace on the envtest API server. c is a direct
// (uncached) client, so every read sees the previous write and the
// reconciler's decisions are deterministic.
type envWorld struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
	r   *ApplicationUpgradeReconciler
	ns  string
}

func newEnvWorld(t *testing.T) *envWorld {
	t.Helper()
	c, err := client.NewWithWatch(envCfg, client.Options{Scheme: testScheme()})
	require.NoError(t, err)
	ctx := t.Context()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "envtest-"}}
	require.NoError(t, c.Create(ctx, nsObj))
	// No controller creates the default ServiceAccount; pod admission wants it.
	require.NoError(t, c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: nsObj.Name, Name: "default"}}))
	w := &envWorld{t: t, ctx: ctx, c: c, ns: nsObj.Name}
	w.r = &ApplicationUpgradeReconciler{Client: indexedClient(c), Clock: clock.RealClock{}}
	return w
}

// indexedClient evaluates the DeploymentRefIndex field selector on the
// client side with the reconciler's own extractor (an API server knows no
// such field); everything else goes straight to the API server.
func indexedClient(c client.WithWatch) client.Client {
	return interceptor.NewClient(c, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			ul, ok := list.(*v1beta1.ApplicationUpgradeList)
			if !ok || lo.FieldSelector == nil {
				return c.List(ctx, list, opts...)
			}
			want, found := lo.FieldSelector.RequiresExactMatch(DeploymentRefIndex)
			if !found {
				return c.List(ctx, list, opts...)
			}
			plain := *lo
			plain.FieldSelector = fields.Everything()
			if err := c.List(ctx, ul, &plain); err != nil {
				return err
			}
			kept := ul.Items[:0]
			for _, u := range ul.Items {
				for _, ref := range deploymentRefs(&u) {
					if ref == want {
						kept = append(kept, u)
						break
					}
				}
			}
			ul.Items = kept
			return nil
		},
	})
}

func (w *envWorld) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: w.ns, Name: name}
}

// createDeployment creates a Deployment of replicas pods with one container
// per (name, image) pair in containers.
func (w *envWorld) createDeployment(name string, replicas int32, containers ...string) *appsv1.Deployment {
	w.t.Helper()
	labels := map[string]string{"app": name}
	var cs []corev1.Container
	for i := 0; i+1 < len(containers); i += 2 {
		cs = append(cs, corev1.Container{Name: containers[i], Image: containers[i+1]})
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: cs}}},
	}
	require.NoError(w.t, w.c.Create(w.ctx, d), "create deployment %s", name)
	return d
}

// createUpgrade creates an ApplicationUpgrade of job-worker (container
// worker) and job-api (container api); edit adjusts the spec.
func (w *envWorld) createUpgrade(name, workerImage, apiImage string, edit func(*v1.ApplicationUpgrade)) {
	w.t.Helper()
	u := &v1.ApplicationUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: v1.ApplicationUpgradeSpec{
			Worker: v1.ComponentSpec{DeploymentRef: v1.DeploymentReference{Name: "job-worker"}, Image: workerImage, ContainerName: "worker"},
			API:    v1.ComponentSpec{DeploymentRef: v1.DeploymentReference{Name: "job-api"}, Image: apiImage, ContainerName: "api"},
		},
	}
	if edit != nil {
		edit(u)
	}
	require.NoError(w.t, w.c.Create(w.ctx, u))
}

func (w *envWorld) deployment(name string) *appsv1.Deployment {
	w.t.Helper()
	var d appsv1.Deployment
	require.NoError(w.t, w.c.Get(w.ctx, w.key(name), &d))
	return &d
}

func (w *envWorld) upgrade(name string) *v1.ApplicationUpgrade {
	w.t.Helper()
	var u v1.ApplicationUpgrade
	require.NoError(w.t, w.c.Get(w.ctx, w.key(name), &u))
	return &u
}

func imageOf(d *appsv1.Deployment, container string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == container {
			return c.Image
		}
	}
	return ""
}

// reconcile runs one pass of upgrade name (reconcilePass: Reconcile runs a
// second at once after a pass that leaves a component Upgrading; the specs
// step through the passes one by one) and returns the phase it left.
func (w *envWorld) reconcile(name string) v1.Phase {
	w.t.Helper()
	_, _, err := w.r.reconcilePass(w.ctx, ctrl.Request{NamespacedName: w.key(name)})
	require.NoError(w.t, err)
	return w.upgrade(name).Status.Phase
}

// reconcileUntil reconciles until the phase is want, at most n times, and
// fails with the phases seen otherwise.
func (w *envWorld) reconcileUntil(name string, want v1.Phase, n int) {
	w.t.Helper()
	var seen []v1.Phase
	for range n {
		p := w.reconcile(name)
		seen = append(seen, p)
		if p == want {
			return
		}
	}
	w.t.Fatalf("%s did not reach %s in %d reconciles: %v (message %q)", name, want, n, seen, w.upgrade(name).Status.Message)
}

// templateHash is a stable pod-template-hash for the Deployment's current
// template (the test's stand-in for the controller's hash).
func templateHash(d *appsv1.Deployment) string {
	h := fnv.New32a()
	for _, c := range d.Spec.Template.Spec.Containers {
		h.Write([]byte(c.Name + "=" + c.Image + ";"))
	}
	return fmt.Sprintf("%x", h.Sum32())
}

// newReplicaSet creates (or gets) the ReplicaSet of d's current template,
// controlled by d, as the Deployment controller does.
func (w *envWorld) newReplicaSet(d *appsv1.Deployment) *appsv1.ReplicaSet {
	w.t.Helper()
	hash := templateHash(d)
	tpl := d.Spec.Template.DeepCopy()
	tpl.Labels = map[string]string{}
	for k, v := range d.Spec.Template.Labels {
		tpl.Labels[k] = v
	}
	tpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: d.Name + "-" + hash, Labels: tpl.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, Selector: &metav1.LabelSelector{MatchLabels: tpl.Labels}, Template: *tpl},
	}
	if err := w.c.Create(w.ctx, rs); err != nil {
		require.NoError(w.t, w.c.Get(w.ctx, client.ObjectKeyFromObject(rs), rs), "create replicaset %s: %v", rs.Name, err)
	}
	return rs
}

// createPods creates n pods of rs, named <rs>-<i>, Running and Ready.
func (w *envWorld) createPods(rs *appsv1.ReplicaSet, n int) []string {
	w.t.Helper()
	var names []string
	for i := range n {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: fmt.Sprintf("%s-%d", rs.Name, i), Labels: rs.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Spec: *rs.Spec.Template.Spec.DeepCopy(),
		}
		require.NoError(w.t, w.c.Create(w.ctx, p), "create pod %s", p.Name)
		// Running and Ready, as a kubelet reports it (no kubelet here)
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
		require.NoError(w.t, w.c.Status().Update(w.ctx, p), "ready pod %s", p.Name)
		names = append(names, p.Name)
	}
	return names
}

// podsOf lists the pods of Deployment name, terminating ones included.
func (w *envWorld) podsOf(name string) []corev1.Pod {
	w.t.Helper()
	var pods corev1.PodList
	require.NoError(w.t, w.c.List(w.ctx, &pods, client.InNamespace(w.ns), client.MatchingLabels{"app": name}))
	return pods.Items
}

// setStatus writes the Deployment's status as the controller would.
func (w *envWorld) setStatus(name string, edit func(d *appsv1.Deployment, s *appsv1.DeploymentStatus)) {
	w.t.Helper()
	d := w.deployment(name)
	edit(d, &d.Status)
	require.NoError(w.t, w.c.Status().Update(w.ctx, d), "update status of deployment %s", name)
}

// complete is a finished rollout's status: generation observed and every
// counter equal to spec.replicas (terminatingReplicas unset, as on a
// cluster without the feature gate).
func complete(d *appsv1.Deployment, s *appsv1.DeploymentStatus) {
	n := *d.Spec.Replicas
	*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
}

// rollOut plays a whole rollout of name's current template: new ReplicaSet
// and pods, old pods deleted — held terminating by a finalizer when
// keepTerminating — and a complete status. It returns the held pods.
func (w *envWorld) rollOut(name string, keepTerminating bool) []string {
	w.t.Helper()
	d := w.deployment(name)
	rs := w.newReplicaSet(d)
	hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	var old []corev1.Pod
	for _, p := range w.podsOf(name) {
		if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
			old = append(old, p)
		}
	}
	if have := len(w.podsOf(name)) - len(old); have < int(*d.Spec.Replicas) {
		w.createPods(rs, int(*d.Spec.Replicas))
	}
	var held []string
	for i := range old {
		if keepTerminating {
			w.terminate(old[i].Name)
			held = append(held, old[i].Name)
		} else {
			require.NoError(w.t, w.c.Delete(w.ctx, &old[i]))
		}
	}
	w.setStatus(name, complete)
	return held
}

// terminate deletes pod but keeps it terminating (deletionTimestamp set)
// until finishTermination.
func (w *envWorld) terminate(pod string) {
	w.t.Helper()
	var p corev1.Pod
	require.NoError(w.t, w.c.Get(w.ctx, w.key(pod), &p))
	p.Finalizers = append(p.Finalizers, keepFinalizer)
	require.NoError(w.t, w.c.Update(w.ctx, &p))
	require.NoError(w.t, w.c.Delete(w.ctx, &p))
}

// finishTermination lets a terminating pod go, as the kubelet does at the
// end of the grace period.
func (w *envWorld) finishTermination(pods ...string) {
	w.t.Helper()
	for _, pod := range pods {
		var p corev1.Pod
		require.NoError(w.t, w.c.Get(w.ctx, w.key(pod), &p))
		p.Finalizers = nil
		require.NoError(w.t, w.c.Update(w.ctx, &p))
	}
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func (w *envWorld) eventually(timeout time.Duration, what string, cond func() bool) {
	w.t.Helper()
	err := wait.PollUntilContextTimeout(w.ctx, 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond(), nil })
	require.NoError(w.t, err, "waiting %s for %s", timeout, what)
}

func conditionStatus(u *v1.ApplicationUpgrade, typ string) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(u.Status.Conditions, typ); c != nil {
		return c.Status
	}
	return ""
}

func messageHas(u *v1.ApplicationUpgrade, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(u.Status.Message, p) {
			return false
		}
	}
	return true
}

// startManager runs a controller-runtime manager with the reconciler's own
// SetupWithManager (field index, watches of upgrades, Deployments,
// ReplicaSets and pods) and the product's pod cache transform, scoped to
// w's namespace. (operator/manager imports this package, so the test wires
// the same pieces itself.) It stops when the test ends.
func (w *envWorld) startManager() {
	w.t.Helper()
	mgr, err := ctrl.NewManager(envCfg, ctrl.Options{
		Scheme: testScheme(),
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{w.ns: {}},
			ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: StripPod}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(w.t, err)
	r := &ApplicationUpgradeReconciler{Client: mgr.GetClient(), Clock: clock.RealClock{},
		Recorder: mgr.GetEventRecorder("upgrade-operator"), WatchNamespaces: []string{w.ns}}
	require.NoError(w.t, r.SetupWithManager(w.ctx, mgr))
	ctx, cancel := context.WithCancel(w.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	w.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			w.t.Errorf("manager: %v", err)
		}
	})
}
