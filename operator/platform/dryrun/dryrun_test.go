package dryrun

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// status13 is a duplex system running starlingx-13.01.1 / v1.33.0 with
// 13.01.2 and the 27.03 major uploaded.
func status13() v1alpha1.UpgradeStatus {
	return v1alpha1.UpgradeStatus{
		Release:    "starlingx-13.01.1 / v1.33.0",
		SystemMode: v1alpha1.SystemModeDuplex,
		UploadedProductReleases: []v1alpha1.UploadedProductRelease{
			{ReleaseID: "starlingx-13.01.1", State: "deployed"},
			{ReleaseID: "starlingx-13.01.2", State: "available"},
			{ReleaseID: "starlingx-27.03.0", State: "available", Requires: []string{"starlingx-13.01.2"}},
		},
		UploadedK8sVersions: []v1alpha1.UploadedK8sVersion{
			{Version: "v1.33.0", State: "active"},
			{Version: "v1.34.1", State: "available", UpgradeFrom: []string{"v1.33.0"}},
		},
	}
}

func spec(platform, k8s string, dry bool) v1alpha1.UpgradeSpec {
	return v1alpha1.UpgradeSpec{
		Release:      v1alpha1.ReleaseSpec{Platform: platform, Kubernetes: k8s},
		DeployPolicy: v1alpha1.DeployPolicy{DryRun: dry},
	}
}

func TestDeployPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec v1alpha1.UpgradeSpec
		st   func(*v1alpha1.UpgradeStatus)
		want v1alpha1.DeployPlan
	}{
		{name: "major upgrade, dry run", spec: spec("starlingx-27.03.0", "v1.35.0", true),
			want: v1alpha1.DeployPlan{DryRun: true, FromRelease: "starlingx-13.01.1 / v1.33.0", ToRelease: "starlingx-27.03.0 / v1.35.0", ValidationResult: "OK",
				DeploySteps: []v1alpha1.DeployPlanStep{
					{Type: "sw-deploy", Target: "starlingx-13.01.2", Reason: "highest patch of 13.01, deployed before the major upgrade"},
					{Type: "kube-upgrade", Target: "v1.34.1", Reason: "highest Kubernetes sysinv lists for starlingx-13.01.2, which starlingx-27.03.0 must also run, needed before the major upgrade"},
					{Type: "sw-deploy", Target: "starlingx-27.03.0", Reason: "entry point of major release 27.03",
						Check: "checked at precheck: the USM deploy precheck refuses 'starlingx-27.03.0' unless its feed includes the active Kubernetes v1.34.1"},
					{Type: "kube-upgrade", Target: "v1.35.0", Reason: "target Kubernetes version",
						Check: "checked when the step starts: sysinv lists the Kubernetes versions of the release it runs, and v1.35.0 is not listed for it yet; once starlingx-27.03.0 runs the plan is recomputed from its list, one step per minor version on a duplex system"},
				}}},
		{name: "no target k8s: toRelease is where the plan ends", spec: spec("starlingx-27.03.0", "", false),
			want: v1alpha1.DeployPlan{FromRelease: "starlingx-13.01.1 / v1.33.0", ToRelease: "starlingx-27.03.0 / v1.34.1", ValidationResult: "OK",
				DeploySteps: []v1alpha1.DeployPlanStep{
					{Type: "sw-deploy", Target: "starlingx-13.01.2", Reason: "highest patch of 13.01, deployed before the major upgrade"},
					{Type: "kube-upgrade", Target: "v1.34.1", Reason: "highest Kubernetes sysinv lists for starlingx-13.01.2, which starlingx-27.03.0 must also run, needed before the major upgrade"},
					{Type: "sw-deploy", Target: "starlingx-27.03.0", Reason: "entry point of major release 27.03",
						Check: "checked at precheck: the USM deploy precheck refuses 'starlingx-27.03.0' unless its feed includes the active Kubernetes v1.34.1"},
				}}},
		{name: "nothing to do", spec: spec("starlingx-13.01.1", "v1.33.0", true),
			want: v1alpha1.DeployPlan{DryRun: true, FromRelease: "starlingx-13.01.1 / v1.33.0", ToRelease: "starlingx-13.01.1 / v1.33.0", ValidationResult: "OK"}},
		{name: "invalid: not uploaded", spec: spec("starlingx-99.99.0", "", true),
			want: v1alpha1.DeployPlan{DryRun: true, FromRelease: "starlingx-13.01.1 / v1.33.0", ToRelease: "starlingx-99.99.0",
				ValidationResult: "product release 'starlingx-99.99.0' is not uploaded"}},
		{name: "invalid: k8s sysinv does not list for the running release", spec: spec("starlingx-13.01.1", "v1.35.0", true),
			want: v1alpha1.DeployPlan{DryRun: true, FromRelease: "starlingx-13.01.1 / v1.33.0", ToRelease: "starlingx-13.01.1 / v1.35.0",
				ValidationResult: "cannot kube-upgrade(v1.35.0) (target Kubernetes version): kubernetes version 'v1.35.0' is not one of the Kubernetes versions sysinv lists for 'starlingx-13.01.1' (v1.33.0, v1.34.1)"}},
		{name: "invalid: running release unknown", spec: spec("starlingx-13.01.2", "", false), st: func(s *v1alpha1.UpgradeStatus) { s.Release = "" },
			want: v1alpha1.DeployPlan{ToRelease: "starlingx-13.01.2",
				ValidationResult: "status.release is empty: the running release is not known yet; wait for the controller to observe the system"}},
		{name: "invalid: malformed catalog", spec: spec("starlingx-13.01.2", "", false),
			st: func(s *v1alpha1.UpgradeStatus) { s.UploadedK8sVersions[0].Version = "1.33.0" },
			want: v1alpha1.DeployPlan{FromRelease: "starlingx-13.01.1 / v1.33.0", ToRelease: "starlingx-13.01.2",
				ValidationResult: `status.uploadedK8sVersions[0]: kubernetes version "1.33.0" does not start with 'v' (want vMAJOR.MINOR.PATCH, e.g. v1.34.1): malformed`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := status13()
			if tc.st != nil {
				tc.st(&st)
			}
			assert.Equal(t, tc.want, DeployPlan(tc.spec, st))
		})
	}
}
