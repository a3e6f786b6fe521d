package appupgrade

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

func comp(name, deployment string, deps ...string) v1beta1.Component {
	return v1beta1.Component{Name: name, DeploymentRef: v1beta1.DeploymentReference{Name: deployment}, Image: name + ":v2", DependsOn: deps}
}

func TestWavesOfADiamond(t *testing.T) {
	w, err := Waves([]v1beta1.Component{comp("api", "api", "worker", "indexer"), comp("worker", "w", "db"), comp("indexer", "i", "db"), comp("db", "db")})
	require.NoError(t, err)
	require.Equal(t, map[string]int32{"db": 0, "worker": 1, "indexer": 1, "api": 2}, w)
}

func TestWavesNamesTheCycle(t *testing.T) {
	_, err := Waves([]v1beta1.Component{comp("a", "a", "b"), comp("b", "b", "c"), comp("c", "c", "a"), comp("d", "d")})
	var cyc *CycleError
	require.True(t, errors.As(err, &cyc))
	require.Equal(t, []string{"a", "b", "c", "a"}, cyc.Path)
	require.Contains(t, err.Error(), "a → b → c → a")
}

func TestValidate(t *testing.T) {
	up := func(ns string, cs ...v1beta1.Component) *v1beta1.ApplicationUpgrade {
		return &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "u"}, Spec: v1beta1.ApplicationUpgradeSpec{Components: cs}}
	}
	other := comp("b", "x")
	other.DeploymentRef.Namespace = "ns"
	cases := []struct {
		name string
		u    *v1beta1.ApplicationUpgrade
		want string
	}{
		{"valid chain", up("ns", comp("a", "a"), comp("b", "b", "a")), ""},
		{"empty", up("ns"), "spec.components is empty"},
		{"duplicate name", up("ns", comp("a", "a"), comp("a", "b")), `two components named "a"`},
		{"self", up("ns", comp("a", "a", "a")), "depends on itself"},
		{"unknown", up("ns", comp("a", "a", "zz")), `names "zz", which is not a component`},
		{"cycle", up("ns", comp("a", "a", "b"), comp("b", "b", "a")), "cycle a → b → a"},
		{"same deployment, explicit own namespace", up("ns", comp("a", "x"), other), "both reference deployment ns/x"},
		{"same name, other namespace is fine", up("other", comp("a", "x"), other), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := Validate(c.u)
			if c.want == "" {
				require.Empty(t, errs)
				return
			}
			require.NotEmpty(t, errs)
			require.Contains(t, errors.Join(errs...).Error(), c.want)
		})
	}
}
