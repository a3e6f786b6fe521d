//go:build e2e

package install

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// TestGitOpsToolsOwnTheDeployments runs issue 19's GitOps actors on the
// local control plane against the manager deployed as the chart deploys it.
// Each case is a namespace with a worker (3 replicas, pods ready after 3 s)
// and an api, created by the tool, and an ApplicationUpgrade worker → api.
// The tool's first reconcile lands right after the operator writes the
// worker's image (mid-rollout), then one every interval:
//
//   - Flux (kustomize-controller): server-side apply with force under
//     `kustomize-controller` every 10 s (the check); configured, the
//     Deployments carry `kustomize.toolkit.fluxcd.io/ssa: IfNotPresent`;
//   - Helm 3: `helm upgrade` every 10 s, the strategic three-way merge patch
//     Helm computes (helm.sh/helm/v3 pkg/kube/client.go createPatch:
//     strategicpatch.CreateThreeWayMergePatch(previous release, new
//     rendering, live, overwrite=true)) under `helm`: it puts back a live
//     change of any field the chart renders, even when the rendered value
//     did not change; configured, the chart renders the live image
//     (`lookup`);
//   - Argo CD with automated sync and self-heal every 3 s: a diff of Git
//     and live (ignoring, when configured, every field the
//     `upgrade-operator` manager owns: ignoreDifferences
//     managedFieldsManagers, RespectIgnoreDifferences=true), then a
//     server-side apply with force under `argocd-controller`.
//
// With docs/gitops.md's configuration the upgrade completes and each image
// is written once, with no revert, also after Completed; without it the
// worker is reported Reverted (naming the tool's manager), the api is never
// written and the upgrade never Completed; a Flux revert after Completed
// takes Completed back (Ready=False, ImageReverted).
func TestGitOpsToolsOwnTheDeployments(t *testing.T) {
	env := newTenantEnv(t)
	ctx, admin := env.ctx, env.admin
	startProcess(t, "manager", env.bin, env.replicaArgs(t, "--leader-elect=false"), []string{"KUBECONFIG="})
	wc, err := client.NewWithWatch(env.adminCfg, client.Options{Scheme: admin.Scheme()})
	require.NoError(t, err)

	cases := []struct {
		ns         string
		tool       string
		documented bool
		late       bool // the tool first reconciles after Completed
	}{
		{"flux-doc", "kustomize-controller", true, false},
		{"flux-git", "kustomize-controller", false, false},
		{"flux-late", "kustomize-controller", false, true},
		{"helm-lookup", "helm", true, false},
		{"helm-values", "helm", false, false},
		{"argo-ignore", "argocd-controller", true, false},
		{"argo-plain", "argocd-controller", false, false},
	}
	for _, tc := range cases {
		createNamespaces(t, admin, tc.ns)
	}
	for _, tc := range cases {
		t.Run(tc.ns, func(t *testing.T) {
			t.Parallel()
			a := &gitopsActor{tool: tc.tool, documented: tc.documented, c: admin, ns: tc.ns, original: map[string]map[string]any{}}
			require.NoError(t, a.install(ctx))
			hist := watchImages(t, ctx, wc, tc.ns)
			require.NoError(t, createWhenServing(ctx, admin, betaUpgrade(tc.ns, "up",
				v1beta1.Component{Name: "worker", DeploymentRef: v1beta1.DeploymentReference{Name: "worker"}, Image: gitImage("worker", "v2")},
				v1beta1.Component{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "api"}, Image: gitImage("api", "v2"), DependsOn: []string{"worker"}})))

			if tc.late {
				u := waitUpgrade(t, ctx, admin, tc.ns, "completed", func(u *v1beta1.ApplicationUpgrade) bool { return u.Status.Phase == v1beta1.PhaseCompleted })
				require.NotNil(t, u)
			} else {
				waitImage(t, ctx, admin, tc.ns, "worker", gitImage("worker", "v2")) // the operator wrote it: the tool reconciles now
			}
			stop := a.run(ctx, t)
			defer stop()

			if tc.documented {
				waitUpgrade(t, ctx, admin, tc.ns, "completed", func(u *v1beta1.ApplicationUpgrade) bool { return u.Status.Phase == v1beta1.PhaseCompleted })
				a.waitTicks(t, ctx, a.ticks.Load()+1) // one more reconcile after Completed
				u := waitUpgrade(t, ctx, admin, tc.ns, "still completed", func(u *v1beta1.ApplicationUpgrade) bool { return true })
				assert.Equal(t, v1beta1.PhaseCompleted, u.Status.Phase, "a reconcile after Completed reverts nothing")
				assert.Equal(t, []string{gitImage("worker", "v1"), gitImage("worker", "v2")}, hist.of("worker"), "the worker's image: written once, never reverted")
				assert.Equal(t, []string{gitImage("api", "v1"), gitImage("api", "v2")}, hist.of("api"))
				// kubectl get deploy -o yaml --show-managed-fields: the
				// operator owns the one image (and the list item's key).
				var live appsv1.Deployment
				require.NoError(t, admin.Get(ctx, client.ObjectKey{Namespace: tc.ns, Name: "worker"}, &live))
				var owned []string
				for _, e := range live.ManagedFields {
					if e.Manager == "upgrade-operator" {
						owned = append(owned, string(e.FieldsV1.Raw))
					}
				}
				assert.Equal(t, []string{`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"worker\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`}, owned)
				t.Logf("%s: completed; %d reconciles of %s, no revert", tc.ns, a.ticks.Load(), tc.tool)
				return
			}
			u := waitUpgrade(t, ctx, admin, tc.ns, "the revert reported", func(u *v1beta1.ApplicationUpgrade) bool {
				c := meta.FindStatusCondition(u.Status.Conditions, v1beta1.ConditionReady)
				return u.Status.Component("worker").Phase == v1beta1.ComponentReverted && c != nil && c.Status == metav1.ConditionFalse && c.Reason == "ImageReverted"
			})
			assert.NotEqual(t, v1beta1.PhaseCompleted, u.Status.Phase)
			assert.Contains(t, u.Status.Component("worker").Message, tc.tool, "the message names the manager that put the image back")
			a.waitTicks(t, ctx, a.ticks.Load()+1) // and the tool keeps reconciling: no write fight
			u = waitUpgrade(t, ctx, admin, tc.ns, "still reverted", func(u *v1beta1.ApplicationUpgrade) bool { return true })
			assert.Equal(t, v1beta1.ComponentReverted, u.Status.Component("worker").Phase)
			assert.Equal(t, 1, count(hist.of("worker"), gitImage("worker", "v2")), "the operator wrote the worker's image once: %v", hist.of("worker"))
			if tc.late {
				// Completed first: the tool then puts both images back.
				assert.Equal(t, []string{gitImage("api", "v1"), gitImage("api", "v2"), gitImage("api", "v1")}, hist.of("api"))
			} else {
				assert.Equal(t, []string{gitImage("api", "v1")}, hist.of("api"), "the api is never written while its dependency is reverted")
			}
			t.Logf("%s: %s", tc.ns, u.Status.Component("worker").Message)
		})
	}
}

func gitImage(name, tag string) string { return "registry.example.com/" + name + ":" + tag }

// gitManifest is the Deployment as Git (or the chart) holds it; with
// withImage false the container entry carries only its name.
func gitManifest(ns, name string, withImage bool, image string) map[string]any {
	replicas, ready := int64(1), "1s"
	if name == "worker" {
		replicas, ready = 3, "3s"
	}
	container := map[string]any{"name": name}
	if withImage {
		container["image"] = image
	}
	labels := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels, "annotations": map[string]any{
					"pod-ready.stage.kwok.x-k8s.io/delay": ready, "pod-delete.stage.kwok.x-k8s.io/delay": "1s"}},
				"spec": map[string]any{"containers": []any{container}},
			},
		},
	}
}

// gitopsActor is one GitOps tool reconciling the worker and api
// Deployments of a namespace from Git (image v1).
type gitopsActor struct {
	tool       string // its field manager
	documented bool
	c          client.Client
	ns         string
	original   map[string]map[string]any // Helm: the previous release's manifests
	ticks      atomic.Int32
}

// install creates the Deployments as the tool does the first time.
func (a *gitopsActor) install(ctx context.Context) error {
	for _, name := range []string{"worker", "api"} {
		m := gitManifest(a.ns, name, true, gitImage(name, "v1"))
		switch a.tool {
		case "helm":
			body, err := json.Marshal(m)
			if err != nil {
				return err
			}
			var d appsv1.Deployment
			if err := json.Unmarshal(body, &d); err != nil {
				return err
			}
			if err := a.c.Create(ctx, &d, client.FieldOwner("helm")); err != nil {
				return err
			}
			a.original[name] = m
		default:
			if err := a.apply(ctx, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// apply is a server-side apply with force under the tool's manager.
func (a *gitopsActor) apply(ctx context.Context, m map[string]any) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	meta := m["metadata"].(map[string]any)
	obj := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: meta["namespace"].(string), Name: meta["name"].(string)}}
	return a.c.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner(a.tool), client.ForceOwnership)
}

// sync is one reconcile of both Deployments.
func (a *gitopsActor) sync(ctx context.Context) error {
	for _, name := range []string{"worker", "api"} {
		var live appsv1.Deployment
		if err := a.c.Get(ctx, client.ObjectKey{Namespace: a.ns, Name: name}, &live); err != nil {
			return err
		}
		liveImage := live.Spec.Template.Spec.Containers[0].Image
		switch a.tool {
		case "kustomize-controller":
			// Documented: `kustomize.toolkit.fluxcd.io/ssa: IfNotPresent` on
			// the Deployment in Git: kustomize-controller applies it only
			// when it is absent (kustomization_controller.go,
			// applyOpts.IfNotPresentSelector).
			if a.documented {
				continue
			}
			if err := a.apply(ctx, gitManifest(a.ns, name, true, gitImage(name, "v1"))); err != nil {
				return err
			}
		case "helm":
			// Documented: the chart renders the live image (lookup).
			image := gitImage(name, "v1")
			if a.documented {
				image = liveImage
			}
			modified := gitManifest(a.ns, name, true, image)
			if err := a.helmUpgrade(ctx, &live, a.original[name], modified); err != nil {
				return err
			}
			a.original[name] = modified
		case "argocd-controller":
			git := gitManifest(a.ns, name, true, gitImage(name, "v1"))
			if a.documented && ownsImage(live.ManagedFields, "upgrade-operator", name) {
				// ignoreDifferences managedFieldsManagers [upgrade-operator] +
				// RespectIgnoreDifferences: the live value is kept.
				git = gitManifest(a.ns, name, true, liveImage)
			}
			if git["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] == liveImage {
				continue // Synced: no drift, no sync
			}
			if err := a.apply(ctx, git); err != nil {
				return err
			}
		}
	}
	a.ticks.Add(1)
	return nil
}

// helmUpgrade patches live as Helm 3's `helm upgrade` does for a typed
// object (pkg/kube/client.go, createPatch and updateResource): a strategic
// merge patch from CreateThreeWayMergePatch(original, modified, current,
// overwrite=true), skipped when empty.
func (a *gitopsActor) helmUpgrade(ctx context.Context, live *appsv1.Deployment, original, modified map[string]any) error {
	oldData, err := json.Marshal(original)
	if err != nil {
		return err
	}
	newData, err := json.Marshal(modified)
	if err != nil {
		return err
	}
	currentData, err := json.Marshal(live)
	if err != nil {
		return err
	}
	patchMeta, err := strategicpatch.NewPatchMetaFromStruct(&appsv1.Deployment{})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(oldData, newData, currentData, patchMeta, true)
	if err != nil || string(patch) == "{}" {
		return err
	}
	return a.c.Patch(ctx, live.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, patch), client.FieldOwner("helm"))
}

// ownsImage reports whether manager's managedFields entry holds
// spec.template.spec.containers[name=container].image — the rule Argo
// CD's managedFieldsManagers applies (gitops-engine does not build here).
func ownsImage(entries []metav1.ManagedFieldsEntry, manager, container string) bool {
	for _, e := range entries {
		if e.Manager != manager || e.FieldsV1 == nil {
			continue
		}
		var f map[string]any
		if json.Unmarshal(e.FieldsV1.Raw, &f) != nil {
			continue
		}
		node := any(f)
		for _, k := range []string{"f:spec", "f:template", "f:spec", "f:containers", fmt.Sprintf(`k:{"name":%q}`, container)} {
			m, ok := node.(map[string]any)
			if !ok {
				return false
			}
			node = m[k]
		}
		if m, ok := node.(map[string]any); ok {
			if _, ok := m["f:image"]; ok {
				return true
			}
		}
	}
	return false
}

// run reconciles now, then every interval of the tool, until stopped.
func (a *gitopsActor) run(ctx context.Context, t *testing.T) func() {
	interval := 10 * time.Second
	if a.tool == "argocd-controller" {
		interval = 3 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if err := a.sync(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("%s in %s: %v", a.tool, a.ns, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (a *gitopsActor) waitTicks(t *testing.T, ctx context.Context, n int32) {
	t.Helper()
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return a.ticks.Load() >= n, nil
	}), "%s: %d reconciles", a.tool, n)
}

// imageHistory is every distinct image each Deployment's first container
// had, in order, from a watch.
type imageHistory struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (h *imageHistory) of(name string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen[name])
}

func watchImages(t *testing.T, ctx context.Context, c client.WithWatch, ns string) *imageHistory {
	t.Helper()
	var list appsv1.DeploymentList
	require.NoError(t, c.List(ctx, &list, client.InNamespace(ns)))
	h := &imageHistory{seen: map[string][]string{}}
	record := func(d *appsv1.Deployment) {
		img := d.Spec.Template.Spec.Containers[0].Image
		h.mu.Lock()
		if s := h.seen[d.Name]; len(s) == 0 || s[len(s)-1] != img {
			h.seen[d.Name] = append(s, img)
		}
		h.mu.Unlock()
	}
	for i := range list.Items {
		record(&list.Items[i])
	}
	w, err := c.Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if d, ok := ev.Object.(*appsv1.Deployment); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				record(d)
			}
		}
	}()
	return h
}

func waitImage(t *testing.T, ctx context.Context, c client.Client, ns, name, image string) {
	t.Helper()
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
			return false, err
		}
		return d.Spec.Template.Spec.Containers[0].Image == image, nil
	}), "%s/%s never had image %s", ns, name, image)
}

func waitUpgrade(t *testing.T, ctx context.Context, c client.Client, ns, what string, cond func(*v1beta1.ApplicationUpgrade) bool) *v1beta1.ApplicationUpgrade {
	t.Helper()
	var u v1beta1.ApplicationUpgrade
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "up"}, &u); err != nil {
			return false, err
		}
		return cond(&u), nil
	})
	require.NoError(t, err, "%s/up: %s; have %s: %s %+v", ns, what, u.Status.Phase, u.Status.Message, u.Status.Components)
	return &u
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}
