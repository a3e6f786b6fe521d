package observed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

func TestCatalog(t *testing.T) {
	st := v1alpha1.UpgradeStatus{
		Release: "starlingx-13.01.0 / v1.33.0",
		UploadedProductReleases: []v1alpha1.UploadedProductRelease{
			{ReleaseID: "starlingx-13.01.0", State: "deployed"},
			{ReleaseID: "starlingx-13.01.1", State: "available", Requires: []string{"starlingx-13.01.0"}},
		},
		UploadedK8sVersions: []v1alpha1.UploadedK8sVersion{
			{Version: "v1.33.0", State: "active"},
			{Version: "v1.34.1", State: "available", UpgradeFrom: []string{"v1.33.0"}},
		},
	}
	cat, err := Catalog(st)
	require.NoError(t, err)
	p, ok := cat.Product(release.MustParseID("starlingx-13.01.1"))
	require.True(t, ok)
	assert.Equal(t, release.ProductAvailable, p.State)
	assert.Equal(t, "starlingx-13.01.0", cat.KubesOf.String(), "sysinv's versions describe the running release")
	assert.Equal(t, "starlingx-13.01.0", p.Requires[0].String())
	k, ok := cat.Kube(release.MustParseKubeVersion("v1.34.1"))
	require.True(t, ok)
	assert.True(t, k.UpgradableFrom(release.MustParseKubeVersion("v1.33.0")))
}

func TestCatalogMalformed(t *testing.T) {
	for name, st := range map[string]v1alpha1.UpgradeStatus{
		"status.uploadedProductReleases[0]: release id \"13.01.x\"":    {UploadedProductReleases: []v1alpha1.UploadedProductRelease{{ReleaseID: "13.01.x"}}},
		"starlingx-13.01.0.requires: release id \"x\"":                 {UploadedProductReleases: []v1alpha1.UploadedProductRelease{{ReleaseID: "starlingx-13.01.0", Requires: []string{"x"}}}},
		"status.uploadedK8sVersions[0]: kubernetes version \"1.33.0\"": {UploadedK8sVersions: []v1alpha1.UploadedK8sVersion{{Version: "1.33.0"}}},
		"status.uploadedK8sVersions[0] (v1.34.1).upgradeFrom":          {UploadedK8sVersions: []v1alpha1.UploadedK8sVersion{{Version: "v1.34.1", UpgradeFrom: []string{"v1"}}}},
	} {
		_, err := Catalog(st)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
		assert.ErrorIs(t, err, release.ErrMalformed)
	}
}

func TestCurrentAndMode(t *testing.T) {
	c, err := Current(v1alpha1.UpgradeStatus{Release: "starlingx-13.01.0 / v1.34.1"})
	require.NoError(t, err)
	assert.Equal(t, "starlingx-13.01.0 / v1.34.1", c.String())
	_, err = Current(v1alpha1.UpgradeStatus{})
	assert.ErrorContains(t, err, "status.release is empty")
	_, err = Current(v1alpha1.UpgradeStatus{Release: "starlingx-13.01.0"})
	assert.ErrorContains(t, err, "status.release: composite release")
	assert.Equal(t, plan.Simplex, Mode(v1alpha1.UpgradeStatus{SystemMode: v1alpha1.SystemModeSimplex}))
	assert.True(t, Mode(v1alpha1.UpgradeStatus{}).OneMinorPerStep())
}
