package deploy

import (
	"fmt"
	"strings"
	"time"

	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// kubePrefix marks a Kubernetes step in status.activeDeploy.releaseDeploying.
const kubePrefix = "k8s-"

// Deploying is the seed's releaseDeploying for a step: the product release
// id ("starlingx-27.03.0") or "k8s-<version>" ("k8s-v1.34.1").
func Deploying(s plan.DeployStep) string {
	if s.Kind == plan.KubeUpgrade {
		return kubePrefix + s.Kube.String()
	}
	return s.Release.String()
}

// parseDeploying reads a releaseDeploying value back into a step.
func parseDeploying(s string) (plan.DeployStep, bool) {
	if v, ok := strings.CutPrefix(s, kubePrefix); ok {
		k, err := release.ParseKubeVersion(v)
		return plan.DeployStep{Kind: plan.KubeUpgrade, Kube: k}, err == nil
	}
	id, err := release.ParseID(s)
	return plan.DeployStep{Kind: plan.SwDeploy, Release: id}, err == nil
}

// reached reports whether the running release already has what step deploys.
func reached(step plan.DeployStep, running release.Composite) bool {
	if step.Kind == plan.KubeUpgrade {
		return !step.Kube.IsZero() && running.Kubernetes.Compare(step.Kube) >= 0
	}
	return !step.Release.IsZero() && running.Platform.Compare(step.Release) >= 0
}

// stepOf is the step a strategy deploys; ok is false while its target is
// unknown (a kube-upgrade still building).
func stepOf(s *Strategy) (plan.DeployStep, bool) {
	if s.Kind == plan.KubeUpgrade {
		v, err := release.ParseKubeVersion(s.Target)
		return plan.DeployStep{Kind: plan.KubeUpgrade, Kube: v}, err == nil
	}
	id, err := release.ParseID(s.Target)
	return plan.DeployStep{Kind: plan.SwDeploy, Release: id}, err == nil
}

// sameStep reports whether two steps deploy the same target.
func sameStep(a, b plan.DeployStep) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Kind == plan.KubeUpgrade {
		return a.Kube == b.Kube
	}
	return a.Release.Equal(b.Release)
}

// isMajor reports whether step moves the product to another major release.
func isMajor(step plan.DeployStep, running release.Composite) bool {
	return step.Kind == plan.SwDeploy && !step.Release.SameMajor(running.Platform)
}

// FormatDuration is the seed's timeDuration: "18:37" (mm:ss) under an
// hour, "1:02:03" (h:mm:ss) from an hour on; negative durations are 0.
func FormatDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	h, m, sec := s/3600, (s/60)%60, s%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d", m, sec)
}

// stepList is "sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1)".
func stepList(steps []plan.DeployStep) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.String()
	}
	return strings.Join(parts, " → ")
}
