package webhook

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// baseStatus is a duplex system running starlingx-13.01.1 / v1.33.0 with:
//
//	13.01.0 .1 deployed, .2 available, .3 unavailable, .4 uploading, .5 upload-failed
//	27.03.0 .1 available
//	40.05.1 available without its GA 40.05.0; 50.01.0 unavailable, 50.01.1 available
//	sysinv lists 13.01.1's Kubernetes versions: v1.32.2 (unavailable),
//	v1.33.0 (active), v1.34.1 (available)
func baseStatus() v1alpha1.UpgradeStatus {
	var k13, k27 []string
	rel := func(id string, state v1alpha1.ProductReleaseState, _ []string) v1alpha1.UploadedProductRelease {
		return v1alpha1.UploadedProductRelease{ReleaseID: id, State: state}
	}
	return v1alpha1.UpgradeStatus{
		Release:    "starlingx-13.01.1 / v1.33.0",
		SystemMode: v1alpha1.SystemModeDuplex,
		ActiveDeploy: v1alpha1.ActiveDeploy{
			Status: v1alpha1.DeployStatusNone,
		},
		UploadedProductReleases: []v1alpha1.UploadedProductRelease{
			rel("starlingx-13.01.0", "deployed", k13),
			rel("starlingx-13.01.1", "deployed", k13),
			rel("starlingx-13.01.2", "available", k13),
			rel("starlingx-13.01.3", "unavailable", k13),
			rel("starlingx-13.01.4", "uploading", k13),
			rel("starlingx-13.01.5", "upload-failed", k13),
			rel("starlingx-27.03.0", "available", k27),
			rel("starlingx-27.03.1", "available", k27),
			rel("starlingx-40.05.1", "available", k27),
			rel("starlingx-50.01.0", "unavailable", k27),
			rel("starlingx-50.01.1", "available", k27),
		},
		UploadedK8sVersions: []v1alpha1.UploadedK8sVersion{
			{Version: "v1.32.2", State: "unavailable"},
			{Version: "v1.33.0", State: "active", UpgradeFrom: []string{"v1.32.2"}},
			{Version: "v1.34.1", State: "available", UpgradeFrom: []string{"v1.33.0"}},
		},
	}
}

// deploying marks a deployment from the base release to 27.03.0 / v1.35.0 as running.
func deploying(st *v1alpha1.UpgradeStatus) {
	st.ActiveDeploy = v1alpha1.ActiveDeploy{
		Status:            v1alpha1.DeployStatusDeploying,
		DeployFromRelease: "starlingx-13.01.1 / v1.33.0",
		DeployToRelease:   "starlingx-27.03.0 / v1.35.0",
		ReleaseDeploying:  "starlingx-13.01.2",
	}
}

// baseSpec runs what the base status runs.
func baseSpec() v1alpha1.UpgradeSpec {
	return v1alpha1.UpgradeSpec{
		Release: v1alpha1.ReleaseSpec{Platform: "starlingx-13.01.1", Kubernetes: "v1.33.0"},
		DeployPolicy: v1alpha1.DeployPolicy{
			AlarmRestriction:       v1alpha1.AlarmRestrictionStrict,
			ControllerApplyType:    v1alpha1.ApplyTypeSerial,
			WorkerApplyType:        v1alpha1.ApplyTypeSerial,
			MaxParallelWorkerHosts: 2,
			InstanceAction:         v1alpha1.InstanceActionStopStart,
			RollbackPolicy:         v1alpha1.RollbackPolicyDefault,
		},
	}
}

func setRelease(platform, k8s string) func(*v1alpha1.UpgradeSpec) {
	return func(s *v1alpha1.UpgradeSpec) { s.Release = v1alpha1.ReleaseSpec{Platform: platform, Kubernetes: k8s} }
}

func setRollback(p v1alpha1.RollbackPolicy) func(*v1alpha1.UpgradeSpec) {
	return func(s *v1alpha1.UpgradeSpec) { s.DeployPolicy.RollbackPolicy = p }
}

func setMode(m v1alpha1.SystemMode) func(*v1alpha1.UpgradeStatus) {
	return func(st *v1alpha1.UpgradeStatus) { st.SystemMode = m }
}

// updateCase is one spec update of the `system` Upgrade: the stored object
// has spec `from` (base spec when nil) and status base+`status`; the update
// applies `change`. wantErr "" means admitted.
type updateCase struct {
	name    string
	from    func(*v1alpha1.UpgradeSpec)
	status  func(*v1alpha1.UpgradeStatus)
	change  func(*v1alpha1.UpgradeSpec)
	wantErr string
}

// updateCases covers every update rule, admitted and refused.
func updateCases() []updateCase {
	return []updateCase{
		{name: "patch upload accepted", change: setRelease("starlingx-13.01.2", "v1.33.0")},
		{name: "k8s upgrade accepted", change: setRelease("starlingx-13.01.1", "v1.34.1")},
		{name: "patch and k8s accepted", change: setRelease("starlingx-13.01.2", "v1.34.1")},
		{name: "major upgrade accepted", change: setRelease("starlingx-27.03.0", "v1.35.0")},
		{name: "major upgrade to a patch accepted", change: setRelease("starlingx-27.03.1", "v1.35.0")},
		{name: "omitting kubernetes accepted", change: setRelease("starlingx-13.01.2", "")},
		{name: "k8s a later patch may bring accepted (checked when the step starts)", change: setRelease("starlingx-13.01.2", "v1.34.9")},
		{name: "policy change does not recheck the release", status: func(st *v1alpha1.UpgradeStatus) { st.UploadedProductReleases = nil },
			change: func(s *v1alpha1.UpgradeSpec) { s.DeployPolicy.DryRun = true }},
		{name: "seed: release not uploaded", change: setRelease("starlingx-99.99.0", "v1.33.0"),
			wantErr: "Product release 'starlingx-99.99.0' is not uploaded"},
		{name: "release not uploaded, catalog not observed yet", status: func(st *v1alpha1.UpgradeStatus) { st.UploadedProductReleases = nil },
			change:  setRelease("starlingx-13.01.2", "v1.33.0"),
			wantErr: "Product release 'starlingx-13.01.2' is not uploaded (status.uploadedProductReleases is empty: the operator has not observed the system yet)"},
		{name: "release unavailable", change: setRelease("starlingx-13.01.3", "v1.33.0"),
			wantErr: "Product release 'starlingx-13.01.3' is unavailable; choose an available release"},
		{name: "release uploading", change: setRelease("starlingx-13.01.4", "v1.33.0"),
			wantErr: "Product release 'starlingx-13.01.4' is still uploading; wait until it is available"},
		{name: "release upload failed", change: setRelease("starlingx-13.01.5", "v1.33.0"),
			wantErr: "Product release 'starlingx-13.01.5' failed to upload (upload-failed); delete it and upload it again"},
		{name: "k8s sysinv does not list for the running release", change: setRelease("starlingx-13.01.1", "v1.35.0"),
			wantErr: "Kubernetes version 'v1.35.0' is not one of the versions sysinv lists for product release 'starlingx-13.01.1' (status.uploadedK8sVersions)"},
		{name: "k8s unavailable", change: setRelease("starlingx-13.01.2", "v1.32.2"),
			wantErr: "Kubernetes version 'v1.32.2' is unavailable; choose an available version"},
		{name: "major without its entry point", change: setRelease("starlingx-40.05.1", "v1.35.0"),
			wantErr: "Major upgrade to 'starlingx-40.05.1' needs its entry-point release 'starlingx-40.05.0', which is not uploaded; upload the 40.05 ISO first"},
		{name: "major with an unavailable entry point", change: setRelease("starlingx-50.01.1", "v1.35.0"),
			wantErr: "Major upgrade to 'starlingx-50.01.1' needs its entry-point release 'starlingx-50.01.0', which is unavailable; choose an available release"},
		{name: "release change while deploying", status: deploying, from: setRelease("starlingx-27.03.0", "v1.35.0"),
			change:  setRelease("starlingx-27.03.1", "v1.35.0"),
			wantErr: "A deployment to 'starlingx-27.03.0 / v1.35.0' is in progress; spec.release cannot change until it ends, except back to 'starlingx-13.01.1 / v1.33.0' (platform and kubernetes) to abort it"},
		{name: "half an abort while deploying", status: deploying, from: setRelease("starlingx-27.03.0", "v1.35.0"),
			change:  setRelease("starlingx-13.01.1", "v1.35.0"),
			wantErr: "A deployment to 'starlingx-27.03.0 / v1.35.0' is in progress"},
		{name: "abort back to deployFromRelease accepted", status: deploying, from: setRelease("starlingx-27.03.0", "v1.35.0"),
			change: setRelease("starlingx-13.01.1", "v1.33.0")},
		{name: "policy change while deploying accepted", status: deploying, from: setRelease("starlingx-27.03.0", "v1.35.0"),
			change: func(s *v1alpha1.UpgradeSpec) { s.DeployPolicy.WorkerApplyType = v1alpha1.ApplyTypeParallel }},
		{name: "release change after a failed deployment accepted", status: func(st *v1alpha1.UpgradeStatus) {
			deploying(st)
			st.ActiveDeploy.Status = v1alpha1.DeployStatusApplyFailed
		}, change: setRelease("starlingx-13.01.2", "v1.33.0")},
		{name: "snapshot on AIO-SX accepted", status: setMode(v1alpha1.SystemModeSimplex), change: setRollback(v1alpha1.RollbackPolicySnapshot)},
		{name: "snapshot on duplex", change: setRollback(v1alpha1.RollbackPolicySnapshot),
			wantErr: "rollbackPolicy 'snapshot' is only allowed on AIO-SX systems; this system is duplex: use 'default'"},
		{name: "snapshot on duplex-direct", status: setMode(v1alpha1.SystemModeDuplexDirect), change: setRollback(v1alpha1.RollbackPolicySnapshot),
			wantErr: "rollbackPolicy 'snapshot' is only allowed on AIO-SX systems; this system is duplex-direct: use 'default'"},
		{name: "snapshot with the mode unknown", status: setMode(""), change: setRollback(v1alpha1.RollbackPolicySnapshot),
			wantErr: "rollbackPolicy 'snapshot' is only allowed on AIO-SX systems, and the system mode is not known yet (status.systemMode is empty)"},
		{name: "two violations reported together", change: func(s *v1alpha1.UpgradeSpec) {
			setRelease("starlingx-99.99.0", "")(s)
			setRollback(v1alpha1.RollbackPolicySnapshot)(s)
		}, wantErr: "Product release 'starlingx-99.99.0' is not uploaded; rollbackPolicy 'snapshot' is only allowed on AIO-SX systems"},
	}
}

// newSystem is a `system` Upgrade with spec and status.
func newSystem(spec v1alpha1.UpgradeSpec, st v1alpha1.UpgradeStatus) *v1alpha1.Upgrade {
	return &v1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.SystemName}, Spec: spec, Status: st}
}
