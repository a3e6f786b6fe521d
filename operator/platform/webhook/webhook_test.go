package webhook

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

func TestValidateUpdate(t *testing.T) {
	for _, tc := range updateCases() {
		t.Run(tc.name, func(t *testing.T) {
			spec, st := baseSpec(), baseStatus()
			if tc.from != nil {
				tc.from(&spec)
			}
			if tc.status != nil {
				tc.status(&st)
			}
			old := newSystem(spec, st)
			updated := old.DeepCopy()
			tc.change(&updated.Spec)
			_, err := (&Validator{}).ValidateUpdate(context.Background(), old, updated)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestValidateCreate(t *testing.T) {
	other := &v1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: v1alpha1.UpgradeSpec{Release: v1alpha1.ReleaseSpec{Platform: "starlingx-99.99.0"}}}
	_, err := (&Validator{}).ValidateCreate(context.Background(), other)
	assert.EqualError(t, err, "only the 'system' Upgrade CR is allowed; cannot create 'other'")

	sys := newSystem(baseSpec(), v1alpha1.UpgradeStatus{})
	_, err = (&Validator{}).ValidateCreate(context.Background(), sys)
	assert.NoError(t, err, "the catalog rules do not apply on create")

	sys.Spec.DeployPolicy.RollbackPolicy = v1alpha1.RollbackPolicySnapshot
	_, err = (&Validator{}).ValidateCreate(context.Background(), sys)
	assert.ErrorContains(t, err, "the system mode is not known yet")
	_, err = (&Validator{System: StaticSystemInfo(v1alpha1.SystemModeSimplex)}).ValidateCreate(context.Background(), sys)
	assert.NoError(t, err, "an injected SystemInfo knows the mode on create")
	_, err = (&Validator{System: failingInfo{}}).ValidateCreate(context.Background(), sys)
	assert.EqualError(t, err, "cannot check rollbackPolicy 'snapshot': the system mode is unknown: sysinv unreachable")
}

func TestValidateDelete(t *testing.T) {
	_, err := (&Validator{}).ValidateDelete(context.Background(), newSystem(baseSpec(), baseStatus()))
	assert.EqualError(t, err, "The 'system' Upgrade CR cannot be deleted.")
	_, err = (&Validator{}).ValidateDelete(context.Background(), &v1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: "leftover"}})
	assert.NoError(t, err, "objects created before the webhook existed can be cleaned up")
}

func TestValidateUpdateMalformedStatus(t *testing.T) {
	st := baseStatus()
	st.UploadedProductReleases[0].ReleaseID = "13.01.0"
	old := newSystem(baseSpec(), st)
	updated := old.DeepCopy()
	setRelease("starlingx-13.01.2", "")(&updated.Spec)
	_, err := (&Validator{}).ValidateUpdate(context.Background(), old, updated)
	assert.ErrorContains(t, err, `cannot check spec.release against the uploaded releases: status.uploadedProductReleases[0]: release id "13.01.0"`)

	st = baseStatus()
	st.Release = ""
	old = newSystem(baseSpec(), st)
	updated = old.DeepCopy()
	setRelease("starlingx-27.03.0", "")(&updated.Spec)
	_, err = (&Validator{}).ValidateUpdate(context.Background(), old, updated)
	assert.ErrorContains(t, err, "cannot tell whether 'starlingx-27.03.0' is a major upgrade: status.release is empty")

	updated.Spec.Release.Kubernetes = "v1.034.1"
	_, err = (&Validator{}).ValidateUpdate(context.Background(), old, updated)
	assert.ErrorContains(t, err, `spec.release: kubernetes version "v1.034.1" has a part "034" that is not a decimal number without leading zeros`)
}

type failingInfo struct{}

func (failingInfo) SystemMode(context.Context, *v1alpha1.Upgrade) (v1alpha1.SystemMode, error) {
	return "", errors.New("sysinv unreachable")
}
