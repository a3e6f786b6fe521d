//go:build e2e

package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/input/hostile"
)

// TestTenantHostileCorpus runs issue 14's bad-input corpus as the
// restricted tenant against the manager deployed as the chart deploys it
// (its ServiceAccount, RBAC and webhook): every admission case
// (scenarios/input/hostile) and every raw-JSON case is refused with a readable
// message; the runtime cases (paused and Recreate Deployments, a
// containerName naming an initContainer or no container, 50 containers, a
// forged status, an edit and a deletion mid-rollout) end handled, with a
// message; the manager never panics; and no image is written that the
// input did not ask for.
func TestTenantHostileCorpus(t *testing.T) {
	env := newTenantEnv(t)
	ctx, admin, tenant := env.ctx, env.admin, env.tenant
	mgr := startProcess(t, "manager", env.bin, env.replicaArgs(t, "--leader-elect=false"), []string{"KUBECONFIG="})

	for _, d := range hostileDeployments() {
		require.NoError(t, admin.Create(ctx, d))
	}
	before := allImages(t, ctx, admin, "tenant-a", "victim")

	refused := hostile.Refused("tenant-a", "hostile")
	raw := hostile.RefusedJSON("tenant-a", "raw")
	require.GreaterOrEqual(t, len(refused)+len(raw), 75, "with the 8 runtime cases below: at least 80 hostile inputs")
	require.Error(t, createWhenServing(ctx, tenant, refused[0].Upgrade), "the webhook serves")
	for _, c := range refused {
		t.Run("refused/"+c.Name, func(t *testing.T) {
			err := tenant.Create(ctx, c.Upgrade.DeepCopy())
			require.Error(t, err)
			assertReadable(t, err.Error())
		})
	}
	for name, body := range raw {
		t.Run("refused/"+name, func(t *testing.T) {
			code, msg := postStrict(t, ctx, env.tenantCfg, "tenant-a", body)
			t.Logf("HTTP %d: %s", code, msg)
			assert.GreaterOrEqual(t, code, 400, "refused: %s", msg)
			assertReadable(t, msg)
		})
	}
	var list v1beta1.ApplicationUpgradeList
	require.NoError(t, admin.List(ctx, &list, client.InNamespace("tenant-a")))
	assert.Empty(t, list.Items, "no refused upgrade was stored")

	// Runtime cases: admitted, then handled with a message.
	want := map[string]string{} // namespace/deployment/container -> image after the run
	for k, v := range before {
		want[k] = v
	}
	create := func(name string, cs ...v1beta1.Component) {
		t.Helper()
		require.NoError(t, tenant.Create(ctx, betaUpgrade("tenant-a", name, cs...)))
	}
	comp := func(dep, container, image string, deps ...string) v1beta1.Component {
		return v1beta1.Component{Name: dep, DeploymentRef: v1beta1.DeploymentReference{Name: dep}, ContainerName: container, Image: image, DependsOn: deps}
	}

	create("h-recreate", comp("recreate", "", "registry.example.com/recreate:v2"))
	create("h-wide", comp("wide", "c17", "registry.example.com/c17:v2"))
	// A container the workload does not have is refused at admission
	// (the webhook reads the workload once the tenant may get it).
	for name, c := range map[string]v1beta1.Component{
		"h-init":  comp("withinit", "init", "registry.example.com/init:v2"),
		"h-ghost": comp("plain", "ghost", "registry.example.com/ghost:v2"),
	} {
		err := tenant.Create(ctx, betaUpgrade("tenant-a", name, c))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), fmt.Sprintf("no container %q (containers: main)", c.ContainerName), name)
	}
	create("h-paused", comp("paused", "", "registry.example.com/paused:v2"))
	want["tenant-a/recreate/main"] = "registry.example.com/recreate:v2"
	want["tenant-a/wide/c17"] = "registry.example.com/c17:v2"

	waitPhase(t, ctx, admin, "tenant-a", "h-recreate", v1beta1.PhaseCompleted)
	waitPhase(t, ctx, admin, "tenant-a", "h-wide", v1beta1.PhaseCompleted)
	u := waitMessage(t, ctx, admin, "h-paused", "is paused: resume it")
	assert.NotContains(t, []v1beta1.Phase{v1beta1.PhaseCompleted, v1beta1.PhaseFailed}, u.Status.Phase, "a paused Deployment waits for a person")

	// A forged status is dropped at create (status is a subresource).
	forged := betaUpgrade("tenant-a", "h-forged", comp("forged", "", "registry.example.com/forged:v2"))
	forged.Status = v1beta1.ApplicationUpgradeStatus{Phase: v1beta1.PhaseCompleted, Message: "all done", ObservedGeneration: 99}
	require.NoError(t, tenant.Create(ctx, forged))
	assert.NotEqual(t, v1beta1.PhaseCompleted, forged.Status.Phase, "the stored object has no forged status")
	assert.NotEqual(t, int64(99), forged.Status.ObservedGeneration)
	waitPhase(t, ctx, admin, "tenant-a", "h-forged", v1beta1.PhaseCompleted)
	want["tenant-a/forged/main"] = "registry.example.com/forged:v2"

	// An edit mid-rollout: the newest image wins, the upgrade completes.
	create("h-edit", comp("slow", "", "registry.example.com/slow:v2"))
	waitComponent(t, ctx, admin, "h-edit", "slow", v1beta1.ComponentRollingOut)
	require.NoError(t, mergePatch(ctx, tenant, "h-edit", `{"spec":{"components":[{"name":"slow","deploymentRef":{"name":"slow"},"image":"registry.example.com/slow:v3"}]}}`))
	u = waitPhase(t, ctx, admin, "tenant-a", "h-edit", v1beta1.PhaseCompleted)
	assert.Equal(t, "registry.example.com/slow:v3", u.Status.Component("slow").Image)
	want["tenant-a/slow/main"] = "registry.example.com/slow:v3"

	// A deletion mid-rollout: the dependent's image is never written.
	create("h-delete", comp("slowworker", "", "registry.example.com/slowworker:v2"), comp("delapi", "", "registry.example.com/delapi:v2", "slowworker"))
	waitComponent(t, ctx, admin, "h-delete", "slowworker", v1beta1.ComponentRollingOut)
	require.NoError(t, tenant.Delete(ctx, betaUpgrade("tenant-a", "h-delete")))
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: "h-delete"}, &v1beta1.ApplicationUpgrade{})
		return apierrors.IsNotFound(err), nil
	}), "the upgrade is deleted")
	waitRolledOut(t, ctx, admin, "slowworker")
	want["tenant-a/slowworker/main"] = "registry.example.com/slowworker:v2"

	after := allImages(t, ctx, admin, "tenant-a", "victim")
	// The paused Deployment's template may carry the target (written, not rolled) or not.
	if after["tenant-a/paused/main"] == "registry.example.com/paused:v2" {
		want["tenant-a/paused/main"] = "registry.example.com/paused:v2"
	}
	assert.Equal(t, want, after, "only the images the inputs asked for were written")

	select {
	case err := <-mgr.done:
		t.Fatalf("the manager stopped: %v", err)
	default:
	}
	logText, err := os.ReadFile(mgr.log)
	require.NoError(t, err)
	assert.NotContains(t, string(logText), "panic", "the manager's log shows no panic")
	assert.NotContains(t, string(logText), "Observed a panic")
}

// hostileDeployments are the tenant-a Deployments of the runtime cases.
func hostileDeployments() []*appsv1.Deployment {
	recreate := tenantDeployment("tenant-a", "recreate")
	recreate.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	wide := tenantDeployment("tenant-a", "wide")
	wide.Spec.Template.Spec.Containers = nil
	for i := 0; i < 50; i++ {
		wide.Spec.Template.Spec.Containers = append(wide.Spec.Template.Spec.Containers,
			corev1.Container{Name: fmt.Sprintf("c%02d", i), Image: fmt.Sprintf("registry.example.com/c%02d:v1", i)})
	}
	withInit := tenantDeployment("tenant-a", "withinit")
	withInit.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "registry.example.com/init:v1"}}
	paused := tenantDeployment("tenant-a", "paused")
	paused.Spec.Paused = true
	out := []*appsv1.Deployment{recreate, wide, withInit, paused, tenantDeployment("tenant-a", "forged"), tenantDeployment("tenant-a", "delapi"), tenantDeployment("tenant-a", "plain")}
	for _, name := range []string{"slow", "slowworker"} {
		d := tenantDeployment("tenant-a", name)
		d.Spec.Replicas = ptr.To[int32](2)
		d.Spec.Template.Annotations["pod-ready.stage.kwok.x-k8s.io/delay"] = "3s"
		out = append(out, d)
	}
	return out
}

// allImages maps namespace/deployment/container to the image of every
// container and init container of every Deployment in namespaces.
func allImages(t *testing.T, ctx context.Context, c client.Client, namespaces ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, ns := range namespaces {
		var ds appsv1.DeploymentList
		require.NoError(t, c.List(ctx, &ds, client.InNamespace(ns)))
		for _, d := range ds.Items {
			for _, cs := range [][]corev1.Container{d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers} {
				for _, ctr := range cs {
					out[ns+"/"+d.Name+"/"+ctr.Name] = ctr.Image
				}
			}
		}
	}
	return out
}

// assertReadable: a message a person can read on a terminal — no control
// or format characters, bounded length.
func assertReadable(t *testing.T, msg string) {
	t.Helper()
	assert.NotEmpty(t, msg)
	for _, r := range msg {
		if r == '\n' {
			continue
		}
		assert.False(t, unicode.IsControl(r) || unicode.Is(unicode.Cf, r), "raw U+%04X in %q", r, msg)
	}
	assert.LessOrEqual(t, len(msg), 20000)
}

// postStrict creates body as cfg's user the way kubectl create does
// (fieldValidation=Strict) and returns the HTTP status and the Status
// message.
func postStrict(t *testing.T, ctx context.Context, cfg *rest.Config, ns, body string) (int, string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	url := fmt.Sprintf("%s/apis/upgrades.lunadas.dev/v1beta1/namespaces/%s/applicationupgrades?fieldValidation=Strict", strings.TrimSuffix(cfg.Host, "/"), ns)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var st struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &st)
	return resp.StatusCode, st.Message
}

func waitMessage(t *testing.T, ctx context.Context, c client.Client, name, want string) *v1beta1.ApplicationUpgrade {
	t.Helper()
	var u v1beta1.ApplicationUpgrade
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: name}, &u); err != nil {
			return false, err
		}
		return strings.Contains(u.Status.Message, want), nil
	})
	require.NoError(t, err, "tenant-a/%s: want a message with %q, have %s: %q", name, want, u.Status.Phase, u.Status.Message)
	assertReadable(t, u.Status.Message)
	return &u
}

func waitComponent(t *testing.T, ctx context.Context, c client.Client, name, component string, want v1beta1.ComponentPhase) {
	t.Helper()
	var u v1beta1.ApplicationUpgrade
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: name}, &u); err != nil {
			return false, err
		}
		return u.Status.Component(component).Phase == want, nil
	})
	require.NoError(t, err, "tenant-a/%s: component %s never %s: %+v", name, component, want, u.Status)
}

// waitRolledOut waits until tenant-a/name's rollout is complete by its
// counters (the Deployment controller's view).
func waitRolledOut(t *testing.T, ctx context.Context, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: name}, &d); err != nil {
			return false, err
		}
		st := d.Status
		return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == *d.Spec.Replicas && st.Replicas == *d.Spec.Replicas && st.AvailableReplicas == *d.Spec.Replicas, nil
	})
	require.NoError(t, err, "tenant-a/%s never rolled out", name)
}

// mergePatch merge-patches the ApplicationUpgrade tenant-a/name as c.
func mergePatch(ctx context.Context, c client.Client, name, patch string) error {
	return c.Patch(ctx, betaUpgrade("tenant-a", name), client.RawPatch("application/merge-patch+json", []byte(patch)))
}
