//go:build e2e

package install

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// The attacks of issue 14 on the local control plane. The manager runs as
// the chart's ServiceAccount with the chart's cluster-wide RBAC and serves
// the admission webhook itself (the harness's is removed); the attacker is
// tenant-a/tenant, allowed to manage ApplicationUpgrades and to get and
// patch Deployments in tenant-a only.
func TestTenantCannotEscalate(t *testing.T) {
	env := newTenantEnv(t)
	ctx, admin, tenant, bin := env.ctx, env.admin, env.tenant, env.bin
	reader := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "reader"}}
	require.NoError(t, admin.Create(ctx, reader))
	grant(t, ctx, admin, "tenant-a", "reader", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}})

	// Cross-namespace references off (the chart's default).
	mgr := startProcess(t, "manager", bin, env.replicaArgs(t, "--leader-elect=false"), []string{"KUBECONFIG="})
	cross := betaUpgrade("tenant-a", "steal", v1beta1.Component{Name: "pay", DeploymentRef: v1beta1.DeploymentReference{Namespace: "victim", Name: "payments"}, Image: "evil.example.com/miner:1"})
	err := createWhenServing(ctx, tenant, cross)
	require.Error(t, err, "flag off: a cross-namespace reference is refused")
	assert.Contains(t, err.Error(), "--allow-cross-namespace-refs")
	assert.Error(t, tenant.Create(ctx, smuggle(t), client.DryRunAll), "the v1alpha1 annotation smuggle is refused")

	own := betaUpgrade("tenant-a", "own", v1beta1.Component{Name: "app", DeploymentRef: v1beta1.DeploymentReference{Name: "app"}, Image: "registry.example.com/app:v2"})
	require.NoError(t, tenant.Create(ctx, own))
	waitPhase(t, ctx, admin, "tenant-a", "own", v1beta1.PhaseCompleted)
	assert.Equal(t, "registry.example.com/app:v2", image(t, ctx, admin, "tenant-a", "app"))
	assert.Equal(t, "registry.example.com/payments:v1", image(t, ctx, admin, "victim", "payments"))

	// A ServiceAccount without patch: Failed with the API's 403, nothing written.
	sa := betaUpgrade("tenant-a", "as-reader", v1beta1.Component{Name: "app", DeploymentRef: v1beta1.DeploymentReference{Name: "app"}, Image: "registry.example.com/app:v3"})
	sa.Spec.ServiceAccountName = "reader"
	require.NoError(t, tenant.Create(ctx, sa))
	u := waitPhase(t, ctx, admin, "tenant-a", "as-reader", v1beta1.PhaseFailed)
	assert.Contains(t, u.Status.Message, "forbidden")
	assert.Contains(t, u.Status.Message, "system:serviceaccount:tenant-a:reader")
	assert.Equal(t, "registry.example.com/app:v2", image(t, ctx, admin, "tenant-a", "app"))

	// A ValidatingAdmissionPolicy refuses the image write: Failed with its message.
	denyImages(t, ctx, admin)
	vap := betaUpgrade("tenant-a", "denied", v1beta1.Component{Name: "app", DeploymentRef: v1beta1.DeploymentReference{Name: "app"}, Image: "registry.example.com/app:denied"})
	require.NoError(t, tenant.Create(ctx, vap))
	u = waitPhase(t, ctx, admin, "tenant-a", "denied", v1beta1.PhaseFailed)
	assert.Contains(t, u.Status.Message, "images tagged denied are not allowed")
	assert.Equal(t, int32(3), u.Status.Component("app").RefusedWrites)
	assert.Equal(t, "registry.example.com/app:v2", image(t, ctx, admin, "tenant-a", "app"))

	// Cross-namespace references on: the SubjectAccessReview decides.
	stopProcess(t, mgr)
	startProcess(t, "manager-cross", bin, env.replicaArgs(t, "--leader-elect=false", "--allow-cross-namespace-refs"), []string{"KUBECONFIG="})
	err = createWhenServing(ctx, tenant, cross.DeepCopy())
	require.Error(t, err, "flag on, no rights: refused by SubjectAccessReview")
	assert.Contains(t, err.Error(), `may not get deployments.apps "payments" in namespace "victim"`)

	// No disclosure: a Deployment that exists and one that does not get the
	// same refusal, and no image of the other namespace is shown.
	ghost := betaUpgrade("tenant-a", "steal", v1beta1.Component{Name: "pay", DeploymentRef: v1beta1.DeploymentReference{Namespace: "victim", Name: "ghost"}, Image: "evil.example.com/miner:1"})
	errGhost := tenant.Create(ctx, ghost)
	require.Error(t, errGhost)
	assert.Equal(t, strings.ReplaceAll(err.Error(), "payments", "ghost"), errGhost.Error(), "existence is not disclosed")
	assert.NotContains(t, err.Error(), "registry.example.com/payments")
	// The overlap guard says a Deployment is claimed without naming an
	// upgrade of a namespace the tenant cannot read (also under dry run).
	shared := tenantDeployment("tenant-a", "shared")
	shared.Spec.Paused = true
	require.NoError(t, admin.Create(ctx, shared))
	require.NoError(t, admin.Create(ctx, betaUpgrade("victim", "hold", v1beta1.Component{Name: "shared",
		DeploymentRef: v1beta1.DeploymentReference{Namespace: "tenant-a", Name: "shared"}, Image: "registry.example.com/shared:v2"})))
	mine := betaUpgrade("tenant-a", "mine", v1beta1.Component{Name: "shared", DeploymentRef: v1beta1.DeploymentReference{Name: "shared"}, Image: "registry.example.com/shared:v3"})
	for _, opts := range [][]client.CreateOption{nil, {client.DryRunAll}} {
		err := tenant.Create(ctx, mine.DeepCopy(), opts...)
		require.Error(t, err, "overlap refused (options %v)", opts)
		assert.Contains(t, err.Error(), "is already being upgraded by another applicationupgrade")
		assert.NotContains(t, err.Error(), "victim")
		assert.NotContains(t, err.Error(), "hold")
	}
	// An upgrade the admin made over app and victim/payments: the tenant may
	// edit ApplicationUpgrades in tenant-a, but any spec change starts a new
	// generation that writes every remaining image again, so removing app
	// (or switching the ServiceAccount) needs the rights on payments too.
	two := betaUpgrade("tenant-a", "two",
		v1beta1.Component{Name: "app", DeploymentRef: v1beta1.DeploymentReference{Name: "app"}, Image: "registry.example.com/app:v2"},
		v1beta1.Component{Name: "pay", DeploymentRef: v1beta1.DeploymentReference{Namespace: "victim", Name: "payments"}, Image: "registry.example.com/payments:v1", DependsOn: []string{"app"}})
	require.NoError(t, admin.Create(ctx, two))
	waitPhase(t, ctx, admin, "tenant-a", "two", v1beta1.PhaseCompleted)
	// An empty dependsOn added: the typed spec is equal, but the stored
	// one is not, so the API server bumps the generation before admission
	// (the operator would run it anew): checked like any change.
	emptyDeps := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/spec/components/0/dependsOn","value":[]}]`))
	err = tenant.Patch(ctx, &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "two"}}, emptyDeps)
	require.Error(t, err, "an empty dependsOn is a new generation over payments: refused without rights on it")
	assert.Contains(t, err.Error(), `may not patch deployments.apps "payments" in namespace "victim"`)
	removeApp := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/components/0"},{"op":"remove","path":"/spec/components/0/dependsOn"}]`))
	err = tenant.Patch(ctx, &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "two"}}, removeApp)
	require.Error(t, err, "removing a component restarts the upgrade over payments: refused without rights on it")
	assert.Contains(t, err.Error(), `may not patch deployments.apps "payments" in namespace "victim"`)
	var kept v1beta1.ApplicationUpgrade
	require.NoError(t, admin.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: "two"}, &kept))
	assert.Len(t, kept.Spec.Components, 2, "nothing half-written")
	require.NoError(t, admin.Delete(ctx, &kept))

	grant(t, ctx, admin, "victim", "tenant", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "patch"}, ResourceNames: []string{"payments"}})
	require.NoError(t, tenant.Create(ctx, cross.DeepCopy()), "flag on, with rights: admitted")
	waitPhase(t, ctx, admin, "tenant-a", "steal", v1beta1.PhaseCompleted)
	assert.Equal(t, "evil.example.com/miner:1", image(t, ctx, admin, "victim", "payments"))
}

// tenantEnv is the set-up of the tenant and HA suites, the chart installed
// as `helm install` would with the manager run from this repository's
// build: the local control plane; the chart's ServiceAccount, RBAC and a
// kubeconfig for it; namespaces upgrade-operator, tenant-a and victim with
// Deployments tenant-a/app and victim/payments; the tenant-a/tenant
// client. The admission webhook and the ApplicationUpgrade CRD's
// conversion point at a serviceProxy (the chart's webhook Service) in front
// of the manager replicas started with replicaArgs, so admission and
// v1alpha1 reads are served by the managers themselves (the harness's
// webhook is removed).
type tenantEnv struct {
	ctx           context.Context
	admin, tenant client.Client
	adminCfg      *rest.Config
	tenantCfg     *rest.Config
	bin           string

	chartArgs  []string // the chart's manager arguments, --cert-* removed
	kubeconfig string   // the chart's ServiceAccount
	certDir    string   // the serving certificate every replica uses
	proxy      *serviceProxy
}

// sets are the chart values (`helm install --set`) of the rendering.
func newTenantEnv(t *testing.T, sets ...string) *tenantEnv {
	t.Helper()
	data, err := HelmTemplate(context.Background(), "uo", releaseNamespace, sets...)
	objs := render(t, data, err)
	bin := buildManager(t)
	cp, admin := startControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)

	createNamespaces(t, admin, releaseNamespace, "tenant-a", "victim")
	require.NoError(t, CreateAll(ctx, admin, Select(objs, "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")))
	sas := Select(objs, "ServiceAccount")
	require.Len(t, sas, 1)
	mgrCfg, err := ServiceAccountConfig(ctx, cp.RESTConfig, sas[0].GetNamespace(), sas[0].GetName(), time.Hour)
	require.NoError(t, err)
	kubeconfig := filepath.Join(t.TempDir(), "manager.kubeconfig")
	require.NoError(t, WriteKubeconfig(mgrCfg, kubeconfig))

	for _, d := range []*appsv1.Deployment{tenantDeployment("tenant-a", "app"), tenantDeployment("victim", "payments")} {
		require.NoError(t, admin.Create(ctx, d))
	}
	tenant := tenantClient(t, ctx, admin, cp.RESTConfig)
	tenantCfg, err := ServiceAccountConfig(ctx, cp.RESTConfig, "tenant-a", "tenant", time.Hour)
	require.NoError(t, err)

	// The managers' webhooks replace the harness's, behind the proxy.
	certDir := t.TempDir()
	cert, err := appwebhook.SelfSigned([]string{"127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, cert.WriteFiles(certDir))
	proxy := newServiceProxy(t)
	require.NoError(t, client.IgnoreNotFound(admin.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: realcluster.HarnessWebhookName}})))
	// The chart's ValidatingWebhookConfigurations, their Service replaced
	// by the proxy's URL (the path kept) and the caBundle by the test CA.
	vwcs := Select(objs, "ValidatingWebhookConfiguration")
	require.NotEmpty(t, vwcs)
	for _, u := range vwcs {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &vwc))
		for i := range vwc.Webhooks {
			cc := &vwc.Webhooks[i].ClientConfig
			require.NotNil(t, cc.Service, "webhook %s of the chart calls its Service", vwc.Webhooks[i].Name)
			url := "https://" + proxy.addr() + ptr.Deref(cc.Service.Path, "/")
			vwc.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: cert.CA}
		}
		require.NoError(t, admin.Create(ctx, &vwc))
	}
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, admin.Get(ctx, client.ObjectKey{Name: appwebhook.CRDName}, &crd))
	crd.Spec.Conversion = appwebhook.URLConversion("https://"+proxy.addr()+appwebhook.ConvertPath, cert.CA)
	require.NoError(t, admin.Update(ctx, &crd))
	// The test serves its own certificate: the chart's in-process rotation
	// flags (--cert-*) would make the webhook server wait for the rotator's.
	var chartArgs []string
	for _, a := range managerArgs(t, objs) {
		if !strings.HasPrefix(a, "--cert-") {
			chartArgs = append(chartArgs, a)
		}
	}
	return &tenantEnv{ctx: ctx, admin: admin, adminCfg: cp.RESTConfig, tenant: tenant, tenantCfg: tenantCfg, bin: bin,
		chartArgs: chartArgs, kubeconfig: kubeconfig, certDir: certDir, proxy: proxy}
}

// replicaArgs returns the arguments of one more manager replica: the
// chart's, as the chart's ServiceAccount, its webhook on a port of its own
// added to the proxy's backends, then extra (later flags win). Start it
// with startProcess(t, name, env.bin, args, []string{"KUBECONFIG="}).
func (e *tenantEnv) replicaArgs(t *testing.T, extra ...string) []string {
	port := freePort(t)
	e.proxy.add(fmt.Sprintf("127.0.0.1:%d", port))
	args := append(slices.Clone(e.chartArgs), "--kubeconfig="+e.kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", port), "--webhook-cert-dir="+e.certDir)
	return append(args, extra...)
}

func tenantDeployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
				"pod-ready.stage.kwok.x-k8s.io/delay": "1s", "pod-delete.stage.kwok.x-k8s.io/delay": "1s"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example.com/" + name + ":v1"}}}}}}
}

func betaUpgrade(ns, name string, cs ...v1beta1.Component) *v1beta1.ApplicationUpgrade {
	return &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1beta1.ApplicationUpgradeSpec{Components: cs}}
}

// smuggle is a v1alpha1 upgrade whose conversion-data annotation points its
// worker at victim/payments (v1alpha1 references carry no namespace).
func smuggle(t *testing.T) *upgradesv1alpha1.ApplicationUpgrade {
	spec := v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
		{Name: "worker", DeploymentRef: v1beta1.DeploymentReference{Namespace: "victim", Name: "payments"}, Image: "evil.example.com/miner:1"},
		{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "app"}, Image: "registry.example.com/app:v9", DependsOn: []string{"worker"}}}}
	data, err := json.Marshal(map[string]any{"spec": spec, "status": v1beta1.ApplicationUpgradeStatus{}})
	require.NoError(t, err)
	return &upgradesv1alpha1.ApplicationUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "smuggle", Annotations: map[string]string{upgradesv1alpha1.ConversionDataAnnotation: string(data)}},
		Spec: upgradesv1alpha1.ApplicationUpgradeSpec{
			Worker: upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: "payments"}, Image: "evil.example.com/miner:1"},
			API:    upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: "app"}, Image: "registry.example.com/app:v9"}}}
}

// grant gives ServiceAccount tenant-a/sa rule in namespace ns.
func grant(t *testing.T, ctx context.Context, admin client.Client, ns, sa string, rule rbacv1.PolicyRule) {
	t.Helper()
	name := "grant-" + sa
	require.NoError(t, admin.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{rule}}))
	require.NoError(t, admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "tenant-a", Name: sa}}}))
}

// tenantClient is a client as tenant-a/tenant: ApplicationUpgrades and
// Deployments (get, patch) in tenant-a, nothing elsewhere.
func tenantClient(t *testing.T, ctx context.Context, admin client.Client, adminCfg *rest.Config) client.Client {
	t.Helper()
	require.NoError(t, admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "tenant"}}))
	require.NoError(t, admin.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "tenant"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{v1beta1.GroupVersion.Group}, Resources: []string{"applicationupgrades"}, Verbs: []string{"create", "get", "list", "watch", "update", "patch", "delete"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "patch"}}}}))
	require.NoError(t, admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "tenant-a", Name: "tenant"}}}))
	cfg, err := ServiceAccountConfig(ctx, adminCfg, "tenant-a", "tenant", time.Hour)
	require.NoError(t, err)
	c, err := client.New(cfg, client.Options{Scheme: realcluster.Scheme()})
	require.NoError(t, err)
	return c
}

// createWhenServing creates obj as c, retrying while the webhook is not
// yet listening (the manager just started: the API server cannot reach it
// through the proxy): a refusal or success returns.
func createWhenServing(ctx context.Context, c client.Client, obj client.Object) error {
	var last error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = c.Create(ctx, obj.DeepCopyObject().(client.Object))
		return last == nil || !strings.Contains(last.Error(), "failed calling webhook"), nil
	})
	return last
}

func waitPhase(t *testing.T, ctx context.Context, c client.Client, ns, name string, want v1beta1.Phase) *v1beta1.ApplicationUpgrade {
	t.Helper()
	var u v1beta1.ApplicationUpgrade
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &u); err != nil {
			return false, err
		}
		return u.Status.Phase == want, nil
	})
	require.NoError(t, err, "%s/%s: want %s, have %s: %s", ns, name, want, u.Status.Phase, u.Status.Message)
	return &u
}

func image(t *testing.T, ctx context.Context, c client.Client, ns, name string) string {
	t.Helper()
	var d appsv1.Deployment
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d))
	return d.Spec.Template.Spec.Containers[0].Image
}

// denyImages installs a ValidatingAdmissionPolicy refusing Deployments
// whose containers use a tag "denied".
func denyImages(t *testing.T, ctx context.Context, admin client.Client) {
	t.Helper()
	require.NoError(t, admin.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny-images"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: `object.spec.template.spec.containers.all(c, !c.image.endsWith(":denied"))`,
				Message: "images tagged denied are not allowed"}}}}))
	require.NoError(t, admin.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "deny-images"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "deny-images",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}))
	// The API server loads policies asynchronously: wait until a dry-run
	// write of a denied image is refused, so the upgrade meets the policy.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: "app"}, &d); err != nil {
			return false, err
		}
		d.Spec.Template.Spec.Containers[0].Image = "registry.example.com/app:denied"
		err := admin.Update(ctx, &d, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "images tagged denied"), nil
	})
	require.NoError(t, err, "the ValidatingAdmissionPolicy never became active")
}

// stopProcess interrupts p and waits for it to exit.
func stopProcess(t *testing.T, p *process) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("manager did not stop within 30 s")
	}
}
