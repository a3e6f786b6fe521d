package cluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

func TestNamespaceForIsAValidName(t *testing.T) {
	for _, name := range []string{"C01 a single old worker pod uses its whole grace period, and more words than fit", "!!", "C12 the worker Deployment does not exist, then the spec is fixed"} {
		ns := namespaceFor(name, 42)
		assert.Empty(t, validation.IsDNS1123Label(ns), ns)
		assert.Equal(t, ns, namespaceFor(name, 42))
	}
}

func TestAdmissionRefusesACycleNamingIt(t *testing.T) {
	u := &upgradesv1beta1.ApplicationUpgrade{}
	u.Name = "circular"
	for _, c := range [][2]string{{"a", "c"}, {"b", "a"}, {"c", "b"}} {
		u.Spec.Components = append(u.Spec.Components, upgradesv1beta1.Component{Name: c[0], DeploymentRef: upgradesv1beta1.DeploymentReference{Name: c[0]}, Image: c[0] + ":2", DependsOn: []string{c[1]}})
	}
	err := admitAlone(u)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "dependency cycle a → c → b → a") {
		t.Fatalf("admit = %v, want Invalid (the webhook's 422 for an object wrong in itself) naming the cycle a → c → b → a", err)
	}
	u.Spec.Components[0].DependsOn = nil
	if err := admitAlone(u); err != nil {
		t.Fatalf("admit of an acyclic graph = %v", err)
	}
	alpha := &upgradesv1alpha1.ApplicationUpgrade{Spec: upgradesv1alpha1.ApplicationUpgradeSpec{
		Worker: upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: "w"}, Image: "w:2"},
		API:    upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: "a"}, Image: "a:2"}}}
	if err := admitAlone(alpha); err != nil {
		t.Fatalf("a v1alpha1 upgrade is always a valid graph: %v", err)
	}
}

// admitAlone is the admission decision for obj with no other upgrade stored.
func admitAlone(obj client.Object) error {
	hub, err := toHub(obj)
	if hub == nil || err != nil {
		return err
	}
	return denial(webhook.Check(nil, hub, nil))
}

func TestSimRefusesWhatTheFeaturesCannotInjectInOneLine(t *testing.T) {
	s, err := NewSim(t.Context(), Options{Scenario: "refusals", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"stale@1s":              "",
		"drop@1s:kind=pods":     "",
		"node-lost@1s":          "",
		"gitops-revert@1h":      "",
		"webhook-down@1h":       "",
		"bad-image:dep=api":     "changes the manifests before a make simulate run",
		"lease-lost@0s":         "add a standby replica first",
		"pause@0s":              "add a standby replica first",
		"unavailable@1:n=2":     "",
		"crash@1:p=10":          "",
		"kcm-lag@0s:lag=1s":     "",
		"conflict@1:per=target": "",
	} {
		fs, err := faults.ParseFaults(spec)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Inject(t.Context(), fs[0])
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", spec, err)
		case want != "" && (!errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want one line containing %q", spec, err, want)
		}
	}
}
