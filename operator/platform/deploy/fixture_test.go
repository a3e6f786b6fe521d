package deploy

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// demoLive is the demo system (fakevim's) running composite.
func demoLive(composite string, mode v1alpha1.SystemMode) Live {
	c := release.Composite{}
	if composite != "" {
		var err error
		if c, err = release.ParseComposite(composite); err != nil {
			panic(err)
		}
	}
	old := []string{"v1.32.2", "v1.33.0", "v1.34.1"}
	next := []string{"v1.34.1", "v1.35.0"}
	state := func(id string) v1alpha1.ProductReleaseState {
		r := release.MustParseID(id)
		switch {
		case r.SameMajor(c.Platform) && r.Compare(c.Platform) <= 0:
			return "deployed"
		case !r.SameMajor(c.Platform) && r.Compare(c.Platform) < 0:
			return "unavailable"
		}
		return "available"
	}
	prod := func(id string, kube []string, req ...string) v1alpha1.UploadedProductRelease {
		_ = kube // USM releases carry no Kubernetes versions; sysinv lists the running release's
		return v1alpha1.UploadedProductRelease{ReleaseID: id, State: state(id), Requires: req}
	}
	l := Live{Mode: mode, Running: c, ActiveController: "controller-0"}
	l.Products = []v1alpha1.UploadedProductRelease{
		prod("starlingx-13.01.0", old), prod("starlingx-13.01.1", old, "starlingx-13.01.0"),
		prod("starlingx-13.01.2", old, "starlingx-13.01.1"), prod("starlingx-27.03.0", next, "starlingx-13.01.2"),
		prod("starlingx-27.03.1", next, "starlingx-27.03.0"),
	}
	listed := old // sysinv lists the running release's versions only
	if !c.Platform.IsZero() && !c.Platform.SameMajor(release.MustParseID("starlingx-13.01.0")) {
		listed = next
	}
	for _, v := range listed {
		st := v1alpha1.K8sVersionState("available")
		if v == c.Kubernetes.String() {
			st = "active"
		}
		l.Kubes = append(l.Kubes, v1alpha1.UploadedK8sVersion{Version: v, State: st})
	}
	return l
}

// upgrade is `system` at generation gen with spec target and the status a
// previous reconcile wrote for observedGen.
func upgrade(target string, gen, observedGen int64, mut func(st *v1alpha1.UpgradeStatus)) *v1alpha1.Upgrade {
	c, err := release.ParseComposite(target)
	if err != nil {
		panic(err)
	}
	u := &v1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.SystemName, Generation: gen}}
	u.Spec.Release = v1alpha1.ReleaseSpec{Platform: c.Platform.String(), Kubernetes: c.Kubernetes.String()}
	u.Status.ObservedGeneration = observedGen
	if mut != nil {
		mut(&u.Status)
	}
	return u
}

// deployingTo is a status recorded at the start of a deployment from
// from to to with plan steps, the step recorded as deploying.
func deployingTo(from, to, deploying string, steps ...string) func(st *v1alpha1.UpgradeStatus) {
	return func(st *v1alpha1.UpgradeStatus) {
		st.Release = from
		st.ActiveDeploy = v1alpha1.ActiveDeploy{Status: v1alpha1.DeployStatusDeploying, DeployFromRelease: from, DeployToRelease: to,
			ReleaseDeploying: deploying, TimeStart: t0.Add(-time.Hour).Format(time.RFC3339)}
		st.DeployPlan = v1alpha1.DeployPlan{FromRelease: from, ToRelease: to, ValidationResult: "OK"}
		for _, s := range steps {
			st.DeployPlan.DeploySteps = append(st.DeployPlan.DeploySteps, planStep(s))
		}
	}
}

func planStep(s string) v1alpha1.DeployPlanStep {
	step, ok := parseDeploying(s)
	if !ok {
		panic(s)
	}
	return v1alpha1.DeployPlanStep{Type: v1alpha1.DeployStepType(step.Kind), Target: step.Target()}
}

func sw(target string, state vim.StrategyState) *Strategy {
	return &Strategy{Kind: plan.SwDeploy, UUID: "uuid-sw", State: state, Target: target, Progress: "apply(50%)/stg:(2/4) sw-upgrade-controllers"}
}

func kube(target string, state vim.StrategyState) *Strategy {
	return &Strategy{Kind: plan.KubeUpgrade, UUID: "uuid-kube", State: state, Target: target, Progress: "apply(69%)/stg:(3/4) kube-upgrade-complete"}
}

// applyFailedThen is a sw-deploy strategy whose apply failed and whose
// abort phase (the VIM's own, nfv_common Strategy.phase_complete) is in
// state.
func applyFailedThen(state vim.StrategyState) *Strategy {
	s := sw("starlingx-13.01.2", state)
	s.ApplyFailed, s.Reason = true, "deploy host failed"
	return s
}
