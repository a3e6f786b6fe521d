package webhook

import (
	"errors"
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/observed"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// The messages the seed fixes.
const (
	msgOnlySystem   = "only the 'system' Upgrade CR is allowed; cannot create '%s'"
	msgNoDelete     = "The 'system' Upgrade CR cannot be deleted."
	msgNotUploaded  = "Product release '%s' is not uploaded"
	msgNoCatalogYet = " (status.uploadedProductReleases is empty: the operator has not observed the system yet)"
)

// checkName admits only the singleton named `system`.
func checkName(name string) error {
	if name != v1alpha1.SystemName {
		return fmt.Errorf(msgOnlySystem, name)
	}
	return nil
}

// checkRelease validates a spec.release change against the stored object's
// status: the catalog rules, or only the abort rule while a deployment runs.
func checkRelease(old, updated *v1alpha1.Upgrade) error {
	target, err := release.ParseSpec(updated.Spec.Release.Platform, updated.Spec.Release.Kubernetes)
	if err != nil {
		return fmt.Errorf("spec.release: %w", err)
	}
	if old.Status.ActiveDeploy.Status == v1alpha1.DeployStatusDeploying {
		return checkAbort(old.Status.ActiveDeploy, target)
	}
	cat, err := observed.Catalog(old.Status)
	if err != nil {
		return fmt.Errorf("cannot check spec.release against the uploaded releases: %w", err)
	}
	product, err := checkProduct(target.Platform, cat)
	if err != nil {
		return err
	}
	if err := checkKube(target.Kubernetes, product.ID, cat); err != nil {
		return err
	}
	return checkEntryPoint(old.Status, target.Platform, cat)
}

// checkAbort: while a deployment runs spec.release may only go back to
// deployFromRelease, which aborts it.
func checkAbort(ad v1alpha1.ActiveDeploy, target release.Composite) error {
	from, err := release.ParseComposite(ad.DeployFromRelease)
	if err == nil && target.Equal(from) {
		return nil
	}
	return fmt.Errorf("A deployment to '%s' is in progress; spec.release cannot change until it ends, except back to '%s' (platform and kubernetes) to abort it",
		ad.DeployToRelease, ad.DeployFromRelease)
}

// checkProduct: the target release is uploaded and deployable.
func checkProduct(id release.ID, cat release.Catalog) (release.Product, error) {
	p, ok := cat.Product(id)
	if !ok {
		msg := fmt.Sprintf(msgNotUploaded, id)
		if len(cat.Products) == 0 {
			msg += msgNoCatalogYet
		}
		return p, errors.New(msg)
	}
	if !p.State.Deployable() {
		return p, fmt.Errorf("Product release '%s' %s", id, stateAdvice(p.State))
	}
	return p, nil
}

// stateAdvice says what a non-deployable product state means for the user.
func stateAdvice(s release.ProductState) string {
	switch s {
	case release.ProductUnavailable:
		return "is unavailable; choose an available release"
	case release.ProductUploading:
		return "is still uploading; wait until it is available"
	case release.ProductUploadFailed:
		return "failed to upload (upload-failed); delete it and upload it again"
	case release.ProductRemoving:
		return "is being removed; choose an available release"
	}
	return fmt.Sprintf("is in state '%s'; it must be available", s)
}

// checkKube: the target Kubernetes version (when given) is one sysinv
// lists and not unavailable, when sysinv can tell: it lists the running
// release's versions only (sysinv/common/kubernetes.py get_kube_versions),
// so for a later patch an unlisted version, and for another major any
// version, is checked when its step starts (the plan's step Check says so).
func checkKube(v release.KubeVersion, target release.ID, cat release.Catalog) error {
	if v.IsZero() || plan.Deferred(target, v, cat) {
		return nil
	}
	k, ok := cat.Kube(v)
	if !ok {
		return fmt.Errorf("Kubernetes version '%s' is not one of the versions sysinv lists for product release '%s' (status.uploadedK8sVersions)", v, target)
	}
	if !k.State.Usable() {
		return fmt.Errorf("Kubernetes version '%s' is unavailable; choose an available version", v)
	}
	return nil
}

// checkEntryPoint: a major upgrade needs the new major's GA (the ISO entry
// point) uploaded and deployable.
func checkEntryPoint(st v1alpha1.UpgradeStatus, target release.ID, cat release.Catalog) error {
	current, err := observed.Current(st)
	if err != nil {
		return fmt.Errorf("cannot tell whether '%s' is a major upgrade: %w", target, err)
	}
	if target.SameMajor(current.Platform) {
		return nil
	}
	ga := target.GA()
	p, ok := cat.Product(ga)
	if !ok {
		return fmt.Errorf("Major upgrade to '%s' needs its entry-point release '%s', which is not uploaded; upload the %s ISO first", target, ga, ga.Major())
	}
	if !p.State.Deployable() {
		return fmt.Errorf("Major upgrade to '%s' needs its entry-point release '%s', which %s", target, ga, stateAdvice(p.State))
	}
	return nil
}

// checkRollback: rollbackPolicy snapshot only on AIO-SX (simplex).
func checkRollback(mode v1alpha1.SystemMode) error {
	switch mode {
	case v1alpha1.SystemModeSimplex:
		return nil
	case "":
		return fmt.Errorf("rollbackPolicy 'snapshot' is only allowed on AIO-SX systems, and the system mode is not known yet (status.systemMode is empty); use 'default' or retry once the operator has observed the system")
	}
	return fmt.Errorf("rollbackPolicy 'snapshot' is only allowed on AIO-SX systems; this system is %s: use 'default'", mode)
}
