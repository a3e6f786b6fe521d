package plan

import (
	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

var (
	id   = release.MustParseID
	kv   = release.MustParseKubeVersion
	kvs  = func(ss ...string) []release.KubeVersion { return mapSlice(ss, kv) }
	ids  = func(ss ...string) []release.ID { return mapSlice(ss, id) }
	comp = func(p, k string) release.Composite {
		c := release.Composite{Platform: id(p)}
		if k != "" {
			c.Kubernetes = kv(k)
		}
		return c
	}
)

func mapSlice[T any](ss []string, f func(string) T) []T {
	out := make([]T, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// stx is the uploaded catalog of a system running `running`: releases up
// to it are deployed, newer ones available, starlingx-13.01.3 unavailable.
//
//	13.01.0 .1 .2      k8s v1.32.2 v1.33.0 v1.34.1
//	27.03.0 .1 .2      k8s v1.34.1 v1.35.0 v1.36.1 (27.03.0 requires 13.01.2)
//	k8s versions: v1.32.2, v1.33.0 ← v1.32.2, v1.34.1 ← v1.33.0,
//	              v1.35.0 ← v1.34.1, v1.36.1 ← v1.35.0
func stx(running release.Composite) release.Catalog {
	k13 := kvs("v1.32.2", "v1.33.0", "v1.34.1")
	k27 := kvs("v1.34.1", "v1.35.0", "v1.36.1")
	c := release.Catalog{
		Products: []release.Product{
			{ID: id("starlingx-13.01.0"), Kube: k13},
			{ID: id("starlingx-13.01.1"), Requires: ids("starlingx-13.01.0"), Kube: k13},
			{ID: id("starlingx-13.01.2"), Requires: ids("starlingx-13.01.1"), Kube: k13},
			{ID: id("starlingx-13.01.3"), Requires: ids("starlingx-13.01.2"), Kube: k13},
			{ID: id("starlingx-27.03.0"), Requires: ids("starlingx-13.01.2"), Kube: k27},
			{ID: id("starlingx-27.03.1"), Requires: ids("starlingx-27.03.0"), Kube: k27},
			{ID: id("starlingx-27.03.2"), Requires: ids("starlingx-27.03.1"), Kube: k27},
		},
		Kubes: []release.Kube{
			{Version: kv("v1.32.2")},
			{Version: kv("v1.33.0"), UpgradeFrom: kvs("v1.32.2")},
			{Version: kv("v1.34.1"), UpgradeFrom: kvs("v1.33.0")},
			{Version: kv("v1.35.0"), UpgradeFrom: kvs("v1.34.1")},
			{Version: kv("v1.36.1"), UpgradeFrom: kvs("v1.35.0")},
		},
	}
	for i := range c.Products {
		p := &c.Products[i]
		switch {
		case p.ID.Equal(id("starlingx-13.01.3")):
			p.State = release.ProductUnavailable
		case p.ID.Compare(running.Platform) <= 0:
			p.State = release.ProductDeployed
		default:
			p.State = release.ProductAvailable
		}
	}
	for i := range c.Kubes {
		k := &c.Kubes[i]
		k.State = release.KubeAvailable
		if k.Version == running.Kubernetes {
			k.State = release.KubeActive
		}
	}
	return c
}
