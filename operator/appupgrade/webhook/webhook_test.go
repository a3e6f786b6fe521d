package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// comp is a component named name on Deployment dep ("ns/name" or "name"),
// depending on deps.
func comp(name, dep string, deps ...string) v1beta1.Component {
	ref := v1beta1.DeploymentReference{Name: dep}
	for i := range dep {
		if dep[i] == '/' {
			ref = v1beta1.DeploymentReference{Namespace: dep[:i], Name: dep[i+1:]}
		}
	}
	return v1beta1.Component{Name: name, DeploymentRef: ref, Image: "registry.example.com/" + name + ":v2", DependsOn: deps}
}

func upgrade(ns, name string, cs ...v1beta1.Component) *v1beta1.ApplicationUpgrade {
	return &v1beta1.ApplicationUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec:       v1beta1.ApplicationUpgradeSpec{Components: cs},
	}
}

func withPhase(u *v1beta1.ApplicationUpgrade, p v1beta1.Phase, observed int64) v1beta1.ApplicationUpgrade {
	u.Status.Phase, u.Status.ObservedGeneration = p, observed
	return *u
}

func deleting(u *v1beta1.ApplicationUpgrade) v1beta1.ApplicationUpgrade {
	now := metav1.Now()
	u.DeletionTimestamp = &now
	u.Finalizers = []string{"upgrades.lunadas.dev/finalizer"}
	return *u
}

func TestCheck(t *testing.T) {
	chain := []v1beta1.Component{comp("worker", "job-worker"), comp("api", "job-api", "worker")}
	other := func(p v1beta1.Phase) v1beta1.ApplicationUpgrade {
		return withPhase(upgrade("job-system", "other", comp("w", "job-worker")), p, 1)
	}
	cases := []struct {
		name   string
		u      *v1beta1.ApplicationUpgrade
		others []v1beta1.ApplicationUpgrade
		want   []string // substrings; none means admitted
		policy Policy
		absent []string // substrings the refusal must not contain
	}{
		{name: "a valid chain, alone", u: upgrade("job-system", "up", chain...)},
		{name: "duplicate names", u: upgrade("job-system", "up", comp("a", "d1"), comp("a", "d2")),
			want: []string{`two components named "a": names must be unique`}},
		{name: "unknown dependsOn", u: upgrade("job-system", "up", comp("a", "d1", "ghost")),
			want: []string{`ghost`}},
		{name: "self-dependency", u: upgrade("job-system", "up", comp("a", "d1", "a")),
			want: []string{`depends on itself: remove "a" from its dependsOn`}},
		{name: "a cycle is named", u: upgrade("job-system", "up", comp("a", "d1", "c"), comp("b", "d2", "a"), comp("c", "d3", "b")),
			want: []string{"a", "b", "c", "cycle"}},
		{name: "the same Deployment twice, namespace-normalised", u: upgrade("job-system", "up", comp("a", "d1"), comp("b", "job-system/d1")),
			want: []string{"both reference deployment job-system/d1"}},
		{name: "same name in another namespace is another Deployment", u: upgrade("job-system", "up", comp("a", "d1"), comp("b", "other/d1")),
			policy: Policy{AllowCrossNamespaceRefs: true}},
		{name: "cross-namespace references are refused by default, naming the flag", u: upgrade("tenant-a", "up", comp("a", "victim/payments")),
			want: []string{`spec.components[a].deploymentRef.namespace is "victim"`, "--allow-cross-namespace-refs"}},
		{name: "a refused cross-namespace reference is not checked for overlap", u: upgrade("ops", "up", comp("w", "job-system/job-worker")),
			others: []v1beta1.ApplicationUpgrade{other(v1beta1.PhaseProgressing)},
			want:   []string{"cross-namespace references are disabled"}, absent: []string{"already being upgraded", "job-system/other"}},
		{name: "overlap with an active upgrade", u: upgrade("job-system", "up", chain...), others: []v1beta1.ApplicationUpgrade{other(v1beta1.PhaseProgressing)},
			want: []string{"spec.components[worker]: deployment job-system/job-worker is already being upgraded by applicationupgrade job-system/other"}},
		{name: "overlap with a Pending upgrade (no status yet)", u: upgrade("job-system", "up", chain...), others: []v1beta1.ApplicationUpgrade{other("")},
			want: []string{"applicationupgrade job-system/other"}},
		{name: "overlap across namespaces, the other upgrade visible to the requester", u: upgrade("ops", "up", comp("w", "job-system/job-worker")), others: []v1beta1.ApplicationUpgrade{other(v1beta1.PhaseProgressing)},
			policy: Policy{AllowCrossNamespaceRefs: true, CanGet: func(ns, name string) bool { return ns == "job-system" && name == "other" }},
			want:   []string{"deployment job-system/job-worker is already being upgraded by applicationupgrade job-system/other"}},
		{name: "overlap across namespaces, the other upgrade not visible: not named", u: upgrade("ops", "up", comp("w", "job-system/job-worker")), others: []v1beta1.ApplicationUpgrade{other(v1beta1.PhaseProgressing)},
			policy: Policy{AllowCrossNamespaceRefs: true, CanGet: func(string, string) bool { return false }},
			want:   []string{"deployment job-system/job-worker is already being upgraded by another applicationupgrade"}, absent: []string{"other:", "job-system/other"}},
		{name: "an upgrade of another namespace claiming a Deployment here is not named", u: upgrade("job-system", "up", comp("w", "job-worker")),
			others: []v1beta1.ApplicationUpgrade{withPhase(upgrade("ops", "secret-plan", comp("w", "job-system/job-worker")), v1beta1.PhaseProgressing, 1)},
			want:   []string{"is already being upgraded by another applicationupgrade"}, absent: []string{"secret-plan", "ops/"}},
		{name: "a Completed upgrade does not claim", u: upgrade("job-system", "up", chain...), others: []v1beta1.ApplicationUpgrade{other(v1beta1.PhaseCompleted)}},
		{name: "a Failed upgrade does not claim", u: upgrade("job-system", "up", chain...), others: []v1beta1.ApplicationUpgrade{other(v1beta1.PhaseFailed)}},
		{name: "Completed for an older generation still claims", u: upgrade("job-system", "up", chain...),
			others: []v1beta1.ApplicationUpgrade{func() v1beta1.ApplicationUpgrade {
				o := other(v1beta1.PhaseCompleted)
				o.Generation = 2
				return o
			}()},
			want: []string{"applicationupgrade job-system/other"}},
		{name: "an upgrade being deleted does not claim", u: upgrade("job-system", "up", chain...),
			others: []v1beta1.ApplicationUpgrade{deleting(upgrade("job-system", "other", comp("w", "job-worker")))}},
		{name: "itself in the list is skipped", u: upgrade("job-system", "up", chain...), others: []v1beta1.ApplicationUpgrade{*upgrade("job-system", "up", chain...)}},
		{name: "graph and overlap problems are all reported", u: upgrade("job-system", "up", comp("worker", "job-worker", "worker")),
			others: []v1beta1.ApplicationUpgrade{other(v1beta1.PhaseProgressing)},
			want:   []string{"depends on itself", "already being upgraded by applicationupgrade job-system/other"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Check(nil, tc.u, tc.others)
			if len(tc.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			for _, a := range tc.absent {
				assert.NotContains(t, err.Error(), a)
			}
		})
	}
}

// On update only the Deployments the update adds are checked for overlap:
// an upgrade admitted before another claimed its Deployment keeps working.
func TestCheckUpdateOnlyAddedDeployments(t *testing.T) {
	old := upgrade("job-system", "up", comp("worker", "job-worker"))
	others := []v1beta1.ApplicationUpgrade{withPhase(upgrade("job-system", "other", comp("w", "job-worker"), comp("a", "job-api")), v1beta1.PhaseProgressing, 1)}
	kept := upgrade("job-system", "up", comp("worker", "job-worker"), comp("db", "db"))
	assert.NoError(t, Check(old, kept, others))
	added := upgrade("job-system", "up", comp("worker", "job-worker"), comp("api", "job-api", "worker"))
	err := Check(old, added, others)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "deployment job-system/job-api is already being upgraded by applicationupgrade job-system/other")
	assert.NotContains(t, err.Error(), "job-worker")
}

// The handler reads the other upgrades through its Reader; metadata-only
// updates and objects being deleted pass without a list.
func TestValidatorHandler(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, v1beta1.AddToScheme(s))
	active := withPhase(upgrade("job-system", "other", comp("w", "job-worker")), v1beta1.PhaseProgressing, 1)
	v := &Validator{Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(&active).Build()}
	ctx := context.Background()

	u := upgrade("job-system", "up", comp("worker", "job-worker"), comp("api", "job-api", "worker"))
	_, err := v.ValidateCreate(ctx, u)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "applicationupgrade job-system/other")

	free := upgrade("job-system", "up", comp("api", "job-api"))
	_, err = v.ValidateCreate(ctx, free)
	assert.NoError(t, err)

	relabelled := u.DeepCopy()
	relabelled.Labels = map[string]string{"team": "jobs"}
	_, err = v.ValidateUpdate(ctx, u, relabelled)
	assert.NoError(t, err, "a metadata-only update is admitted")

	now := metav1.Now()
	deleting := u.DeepCopy()
	deleting.DeletionTimestamp = &now
	unfinalized := deleting.DeepCopy()
	unfinalized.Finalizers = nil
	_, err = v.ValidateUpdate(ctx, deleting, unfinalized)
	assert.NoError(t, err, "a metadata update of an object being deleted (its finalizer removed) is admitted")
	gone := deleting.DeepCopy()
	gone.Spec.Components = append(gone.Spec.Components, comp("theirs", "victim/theirs"))
	_, err = v.ValidateUpdate(ctx, deleting, gone)
	require.Error(t, err, "a spec change of an object being deleted is refused: nothing would check what it names (attacker trial)")
	assert.Contains(t, err.Error(), "is being deleted: its spec cannot change")

	// An empty list added changes the stored spec and its generation (the
	// API server bumps it before admission) but not the typed spec: still a
	// change, checked like any other (an attacker re-ran an admin's
	// upgrade this way, rolling a Deployment back).
	bumped := u.DeepCopy()
	bumped.Generation = u.Generation + 1
	bumped.Spec.Components[0].DependsOn = []string{}
	assert.True(t, SpecChanged(u, bumped), "a new generation is a spec change")
	assert.False(t, SpecChanged(u, relabelled))

	_, err = v.ValidateUpdate(ctx, free, u)
	require.Error(t, err, "an update adding a claimed Deployment is refused")
	assert.Contains(t, err.Error(), "deployment job-system/job-worker")

	_, err = v.ValidateDelete(ctx, u)
	assert.NoError(t, err)
}

func TestSelfSignedServesItsHosts(t *testing.T) {
	c, err := SelfSigned([]string{"127.0.0.1", "upgrade-operator-webhook.upgrade-operator-system.svc"}, time.Hour)
	require.NoError(t, err)
	assert.Contains(t, string(c.CA), "BEGIN CERTIFICATE")
	conv := URLConversion("https://127.0.0.1:1/convert", c.CA)
	assert.Equal(t, "https://127.0.0.1:1/convert", *conv.Webhook.ClientConfig.URL)
	assert.Equal(t, []string{"v1"}, conv.Webhook.ConversionReviewVersions)
}
