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

// stx is the uploaded catalog of a system running `running` as a real
// system shows it: USM releases up to it are deployed, newer ones
// available, starlingx-13.01.3 unavailable (no Kubernetes versions in
// them); sysinv's kube_versions list the running 13.01 release's versions
// (get_kube_versions: v1.32.2, v1.33.0 ← v1.32.2, v1.34.1 ← v1.33.0),
// those below the active one unavailable (kube_get_version_states).
// 27.03.0 requires 13.01.2; its own versions (v1.34.1, v1.35.0, v1.36.1
// in the simulator) are not visible before it runs.
func stx(running release.Composite) release.Catalog {
	c := release.Catalog{
		Products: []release.Product{
			{ID: id("starlingx-13.01.0")},
			{ID: id("starlingx-13.01.1"), Requires: ids("starlingx-13.01.0")},
			{ID: id("starlingx-13.01.2"), Requires: ids("starlingx-13.01.1")},
			{ID: id("starlingx-13.01.3"), Requires: ids("starlingx-13.01.2")},
			{ID: id("starlingx-27.03.0"), Requires: ids("starlingx-13.01.2")},
			{ID: id("starlingx-27.03.1"), Requires: ids("starlingx-27.03.0")},
			{ID: id("starlingx-27.03.2"), Requires: ids("starlingx-27.03.1")},
		},
		Kubes: []release.Kube{
			{Version: kv("v1.32.2")},
			{Version: kv("v1.33.0"), UpgradeFrom: kvs("v1.32.2")},
			{Version: kv("v1.34.1"), UpgradeFrom: kvs("v1.33.0")},
		},
		KubesOf: running.Platform,
	}
	if !running.Platform.SameMajor(id("starlingx-13.01.0")) {
		c.Kubes = []release.Kube{
			{Version: kv("v1.34.1")},
			{Version: kv("v1.35.0"), UpgradeFrom: kvs("v1.34.1")},
			{Version: kv("v1.36.1"), UpgradeFrom: kvs("v1.35.0")},
		}
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
		switch c := k.Version.Compare(running.Kubernetes); {
		case c == 0:
			k.State = release.KubeActive
		case c > 0:
			k.State = release.KubeAvailable
		default:
			k.State = release.KubeUnavailable
		}
	}
	return c
}
