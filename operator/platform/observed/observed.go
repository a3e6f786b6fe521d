// Package observed reads what the controller observed on the live system,
// as recorded in an Upgrade's status, into the planner's terms: the running
// composite release, the catalog of uploaded releases and Kubernetes
// versions, and the system mode. Pure: it only converts.
package observed

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// Current is the running composite release, parsed from status.release
// ("starlingx-13.01.0 / v1.34.1").
func Current(st v1alpha1.UpgradeStatus) (release.Composite, error) {
	if st.Release == "" {
		return release.Composite{}, fmt.Errorf("status.release is empty: the running release is not known yet; wait for the controller to observe the system")
	}
	c, err := release.ParseComposite(st.Release)
	if err != nil {
		return c, fmt.Errorf("status.release: %w", err)
	}
	return c, nil
}

// Mode is the planner's system mode from status.systemMode ("" when not
// observed yet, which the planner treats as duplex).
func Mode(st v1alpha1.UpgradeStatus) plan.SystemMode { return plan.SystemMode(st.SystemMode) }

// Catalog converts status.uploadedProductReleases and
// status.uploadedK8sVersions; the Kubernetes versions are sysinv's, so
// they describe the running product release of status.release (KubesOf).
// A malformed id or version is an error naming the entry (the controller
// wrote something it should not have).
func Catalog(st v1alpha1.UpgradeStatus) (release.Catalog, error) {
	var cat release.Catalog
	if c, err := release.ParseComposite(st.Release); err == nil {
		cat.KubesOf = c.Platform
	}
	for i, r := range st.UploadedProductReleases {
		p, err := product(r)
		if err != nil {
			return release.Catalog{}, fmt.Errorf("status.uploadedProductReleases[%d]: %w", i, err)
		}
		cat.Products = append(cat.Products, p)
	}
	for i, k := range st.UploadedK8sVersions {
		v, err := release.ParseKubeVersion(k.Version)
		if err != nil {
			return release.Catalog{}, fmt.Errorf("status.uploadedK8sVersions[%d]: %w", i, err)
		}
		from, err := kubeVersions(k.UpgradeFrom)
		if err != nil {
			return release.Catalog{}, fmt.Errorf("status.uploadedK8sVersions[%d] (%s).upgradeFrom: %w", i, k.Version, err)
		}
		cat.Kubes = append(cat.Kubes, release.Kube{Version: v, State: release.KubeState(k.State), UpgradeFrom: from})
	}
	return cat, nil
}

func product(r v1alpha1.UploadedProductRelease) (release.Product, error) {
	id, err := release.ParseProductID(r.ReleaseID)
	if err != nil {
		return release.Product{}, err
	}
	p := release.Product{ID: id, State: release.ProductState(r.State)}
	for _, q := range r.Requires {
		qid, err := release.ParseProductID(q)
		if err != nil {
			return release.Product{}, fmt.Errorf("%s.requires: %w", r.ReleaseID, err)
		}
		p.Requires = append(p.Requires, qid)
	}
	return p, nil
}

func kubeVersions(ss []string) ([]release.KubeVersion, error) {
	var out []release.KubeVersion
	for _, s := range ss {
		v, err := release.ParseKubeVersion(s)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
