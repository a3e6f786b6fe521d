package webhook

import (
	"encoding/json"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/input/hostile"
)

// smuggled is the attack of issue 14 through v1alpha1: a v1alpha1 object
// whose conversion-data annotation carries a v1beta1 spec that converts
// down to the same v1alpha1 spec (v1alpha1 has no namespace in its
// references) but points the worker at victim/payments. ConvertTo
// restores it, so the webhook (matchPolicy Equivalent: it receives the
// converted v1beta1 object) must judge the restored content.
func smuggled(t *testing.T, extra func(*v1beta1.ApplicationUpgradeSpec)) *v1beta1.ApplicationUpgrade {
	t.Helper()
	spec := v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
		{Name: "worker", DeploymentRef: v1beta1.DeploymentReference{Name: "payments", Namespace: "victim"}, Image: "evil.example.com/miner:1"},
		{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "app"}, Image: "registry.example.com/app:v2", DependsOn: []string{"worker"}},
	}}
	if extra != nil {
		extra(&spec)
	}
	data, err := json.Marshal(map[string]any{"spec": spec, "status": v1beta1.ApplicationUpgradeStatus{}})
	require.NoError(t, err)
	a := &v1alpha1.ApplicationUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "smuggle", Generation: 1,
			Annotations: map[string]string{v1alpha1.ConversionDataAnnotation: string(data)}},
		Spec: v1alpha1.ApplicationUpgradeSpec{
			Worker: v1alpha1.ComponentSpec{DeploymentRef: v1alpha1.DeploymentReference{Name: spec.Components[0].DeploymentRef.Name}, Image: spec.Components[0].Image},
			API:    v1alpha1.ComponentSpec{DeploymentRef: v1alpha1.DeploymentReference{Name: "app"}, Image: spec.Components[1].Image},
		},
	}
	var u v1beta1.ApplicationUpgrade
	require.NoError(t, a.ConvertTo(&u))
	return &u
}

func TestV1alpha1AnnotationSmuggleGetsTheV1beta1Checks(t *testing.T) {
	u := smuggled(t, nil)
	require.Equal(t, "victim", u.Spec.Components[0].DeploymentRef.Namespace, "the conversion restores the annotation's namespace: the webhook is the guard")

	_, err := validator(t, &rbac{grants: map[string]bool{"tenant get deployments tenant-a/*": true, "tenant patch deployments tenant-a/*": true}}, false).
		ValidateCreate(asUser("tenant"), u)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `spec.components[worker].deploymentRef.namespace is "victim"`)
	assert.Contains(t, err.Error(), "--allow-cross-namespace-refs")

	authz := &rbac{grants: map[string]bool{"tenant get deployments tenant-a/*": true, "tenant patch deployments tenant-a/*": true}}
	_, err = validator(t, authz, true).ValidateCreate(asUser("tenant"), u)
	require.Error(t, err, "flag on: the SubjectAccessReview refuses")
	assert.Contains(t, err.Error(), `user "tenant" may not get deployments.apps "payments" in namespace "victim"`)

	bad := smuggled(t, func(s *v1beta1.ApplicationUpgradeSpec) { s.Components[0].Image = "app:v2\x1b[2J" })
	_, err = validator(t, authz, true).ValidateCreate(asUser("tenant"), bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "control character U+001B")
}

// hostileUpgrades is the admission part of the hostile-input corpus
// (scenarios/input/hostile, also run on the real control plane by
// scenarios/real/install) plus a case that needs this test's authorizer.
func hostileUpgrades() map[string]*v1beta1.ApplicationUpgrade {
	out := map[string]*v1beta1.ApplicationUpgrade{}
	for _, c := range hostile.Refused("tenant-a", "up") {
		out[c.Name] = c.Upgrade
	}
	out["rights: a Deployment the tenant may not patch"] = upgrade("tenant-a", "up", comp("a", "locked"))
	return out
}

func TestAdmissionRefusesTheHostileCorpus(t *testing.T) {
	corpus := hostileUpgrades()
	require.GreaterOrEqual(t, len(corpus), 60)
	authz := &rbac{grants: map[string]bool{
		"tenant get deployments tenant-a/*": true, "tenant patch deployments tenant-a/*": true,
	}}
	authz.grants["tenant patch deployments tenant-a/locked"] = false
	locked := &lockedRBAC{rbac: authz, locked: "tenant-a/locked"}
	for name, u := range corpus {
		t.Run(name, func(t *testing.T) {
			v := validator(t, locked.rbac, false)
			v.Authorizer = locked
			_, err := v.ValidateCreate(asUser("tenant"), u)
			require.Error(t, err)
			for _, r := range err.Error() {
				assert.False(t, unicode.IsControl(r) || unicode.Is(unicode.Cf, r), "raw U+%04X in %q", r, err.Error())
			}
			assert.LessOrEqual(t, len(err.Error()), 20000)
		})
	}
}

// lockedRBAC is rbac with one Deployment on which patch is denied.
type lockedRBAC struct {
	*rbac
	locked string
}

func (l *lockedRBAC) Allowed(ctx contextT, u userT, a attrsT) (bool, string, error) {
	if a.Namespace+"/"+a.Name == l.locked && a.Verb == "patch" {
		return false, "RBAC: no rule allows it", nil
	}
	return l.rbac.Allowed(ctx, u, a)
}
