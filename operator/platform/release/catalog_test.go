package release

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCatalogLookups(t *testing.T) {
	id, v := MustParseID, MustParseKubeVersion
	c := Catalog{
		Products: []Product{
			{ID: id("starlingx-13.01.0"), State: ProductDeployed},
			{ID: id("starlingx-13.01.9"), State: ProductAvailable},
			{ID: id("starlingx-13.01.10"), State: ProductAvailable},
			{ID: id("starlingx-13.01.11"), State: ProductUnavailable},
			{ID: id("starlingx-27.03.0"), State: ProductAvailable},
		},
		Kubes: []Kube{
			{Version: v("v1.33.0"), State: KubeActive},
			{Version: v("v1.34.1"), State: KubeAvailable, UpgradeFrom: []KubeVersion{v("v1.33.0")}},
		},
	}
	assert.Equal(t, "starlingx-13.01.10", c.HighestPatch(id("starlingx-13.01.0")).String(), "numeric, skips unavailable, stays in the major")
	assert.Equal(t, "starlingx-13.01.11", c.HighestPatch(id("starlingx-13.01.11")).String(), "never below the start")

	p, ok := c.Product(id("starlingx-13.1.0"))
	assert.True(t, ok)
	assert.Equal(t, ProductDeployed, p.State)
	_, ok = c.Product(id("starlingx-99.99.0"))
	assert.False(t, ok)

	k, ok := c.Kube(v("v1.34.1"))
	assert.True(t, ok)
	assert.True(t, k.UpgradableFrom(v("v1.33.0")))
	assert.False(t, k.UpgradableFrom(v("v1.32.0")))
	assert.True(t, Kube{}.UpgradableFrom(v("v1.32.0")), "no upgrade_from list means no restriction")

	for s, want := range map[ProductState]bool{ProductAvailable: true, ProductDeploying: true, ProductDeployed: true, ProductCommitted: true, ProductDeployedPartial: true, ProductNoState: false,
		ProductUploading: false, ProductUploadFailed: false, ProductUnavailable: false, ProductRemoving: false} {
		assert.Equal(t, want, s.Deployable(), s)
	}
	for s, want := range map[KubeState]bool{KubeActive: true, KubeAvailable: true, KubePartial: true, KubeUnavailable: false} {
		assert.Equal(t, want, s.Usable(), s)
	}
}
