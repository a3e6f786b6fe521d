//go:build e2e

package install

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/fakevim"
	starlingxv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// TestChartPlatformAgainstFakeVIM is `helm install --set platform.enabled=true
// --set vim.credentialsSecret=keystone` on the local control plane: the
// manager runs with the chart's arguments (--platform, the credentials
// directory the chart mounts, made here from a Secret written as
// docs/README.md says: the openrc variables), against fakevim over HTTP;
// it bootstraps `system` from the live system, the chart's `Upgrade`
// webhook refuses what it must, and the seed's usage examples (`kubectl
// patch upgrade system --type merge -p …`) deploy a patch and then a
// Kubernetes version.
func TestChartPlatformAgainstFakeVIM(t *testing.T) {
	const password = "chart-e2e-password"
	start := time.Now().UTC()
	model, err := starlingx.New(starlingx.DemoConfig(starlingx.Simplex, start))
	require.NoError(t, err)
	srv, err := fakevim.New(fakevim.Options{Model: model, Clock: fakevim.NewSpeedClock(start, 600, nil).Now, Password: password})
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	srv.SetURLs(fakevim.ServiceURLs{Keystone: hs.URL, VIM: hs.URL, USM: hs.URL, Sysinv: hs.URL})

	env := newTenantEnv(t, "platform.enabled=true", "vim.credentialsSecret=keystone")
	ctx, admin := env.ctx, env.admin
	// The Secret as docs/README.md writes it, and the directory the
	// kubelet would mount from it at the chart's --starlingx-credentials-dir.
	data := map[string][]byte{vim.KeyAuthURL: []byte(hs.URL + "/v3"), vim.KeyUsername: []byte("admin"), vim.KeyPassword: []byte(password)}
	require.NoError(t, admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "keystone"}, Data: data}))
	dir := t.TempDir()
	for k, v := range data {
		require.NoError(t, os.WriteFile(filepath.Join(dir, k), v, 0o600))
	}
	assert.Contains(t, env.chartArgs, "--platform")
	assert.Contains(t, env.chartArgs, "--starlingx-credentials-dir=/etc/upgrade-operator/keystone")
	startProcess(t, "manager", env.bin, env.replicaArgs(t, "--starlingx-credentials-dir="+dir), []string{"KUBECONFIG="})

	system := func() *starlingxv1alpha1.Upgrade {
		var u starlingxv1alpha1.Upgrade
		if err := admin.Get(ctx, client.ObjectKey{Name: starlingxv1alpha1.SystemName}, &u); err != nil {
			return nil
		}
		return &u
	}
	waitSystem := func(what string, cond func(u *starlingxv1alpha1.Upgrade) bool) {
		t.Helper()
		var last *starlingxv1alpha1.Upgrade
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
			last = system()
			return last != nil && cond(last), nil
		})
		require.NoError(t, err, "waiting for %s; system: %+v", what, last)
	}
	waitSystem("the bootstrap from the live system", func(u *starlingxv1alpha1.Upgrade) bool {
		return u.Status.Release == "starlingx-13.01.0 / v1.33.0" && meta.IsStatusConditionTrue(u.Status.Conditions, starlingxv1alpha1.ConditionReady)
	})

	patch := func(body string) error {
		return admin.Patch(ctx, &starlingxv1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: starlingxv1alpha1.SystemName}}, client.RawPatch(types.MergePatchType, []byte(body)))
	}
	err = patch(`{"spec":{"release":{"platform":"starlingx-99.99.0"}}}`)
	require.Error(t, err, "the chart's Upgrade webhook refuses a release that is not uploaded")
	assert.Contains(t, err.Error(), "Product release 'starlingx-99.99.0' is not uploaded")
	err = admin.Delete(ctx, &starlingxv1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: starlingxv1alpha1.SystemName}})
	require.Error(t, err, "the chart's Upgrade webhook refuses deleting system")

	for _, step := range []struct{ patch, runs string }{
		{`{"spec":{"release":{"platform":"starlingx-13.01.1"}}}`, "starlingx-13.01.1 / v1.33.0"},
		{`{"spec":{"release":{"kubernetes":"v1.34.1"}}}`, "starlingx-13.01.1 / v1.34.1"},
	} {
		require.NoError(t, patch(step.patch))
		waitSystem(step.runs, func(u *starlingxv1alpha1.Upgrade) bool {
			return u.Status.Release == step.runs && u.Status.ActiveDeploy.Status == starlingxv1alpha1.DeployStatusNone &&
				meta.IsStatusConditionTrue(u.Status.Conditions, starlingxv1alpha1.ConditionReady)
		})
		t.Logf("%s: runs %s", step.patch, step.runs)
	}
}
