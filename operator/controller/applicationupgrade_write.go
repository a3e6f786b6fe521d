package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// FieldManager is the field manager every write of the operator is
// recorded under (metadata.managedFields[].manager). It is pinned, not
// derived from the binary's User-Agent, so GitOps tools can be told to
// leave its fields alone: Argo CD's ignoreDifferences
// managedFieldsManagers, Flux's and Helm's server-side apply (docs/gitops.md).
const FieldManager = appupgrade.FieldManager

// imageApply is the server-side apply configuration of one image write to a
// Deployment (workloadApply for the other kinds): its identity, the resourceVersion that was read (an optimistic
// lock: a decision taken on a stale read fails with 409 Conflict instead of
// writing twice) and one container with its merge key `name` and `image`.
// Applied under FieldManager, the operator owns exactly
// spec.template.spec.containers[name=<container>].image and nothing else;
// the other containers, the sidecars, and every other field of this one
// stay with whoever set them.
func imageApply(d *appsv1.Deployment, container, image string) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment(d.Name, d.Namespace).
		WithResourceVersion(d.ResourceVersion).
		WithSpec(appsv1ac.DeploymentSpec().
			WithTemplate(corev1ac.PodTemplateSpec().
				WithSpec(corev1ac.PodSpec().
					WithContainers(corev1ac.Container().WithName(container).WithImage(image)))))
}

// writeImage writes one container image by server-side apply under
// FieldManager with force: the image field may be owned by the manifest's
// applier (kubectl, Helm, Flux's kustomize-controller), and taking it over
// is the operator's job; force takes only the fields in the apply
// configuration. It returns the Deployment's generation after the write.
// Errors name the container, Deployment, image and component and wrap the
// API error (409 Conflict on a stale read: retried with back-off).
func (r *ApplicationUpgradeReconciler) writeImage(ctx context.Context, g appupgrade.Graph, w appupgrade.ImageWrite) (int64, error) {
	var obj client.Object
	for _, c := range g.Components {
		if c.Spec.Name == w.Component {
			obj, _ = c.Workload.(client.Object)
			if obj == nil && c.Deployment != nil {
				obj = c.Deployment
			}
		}
	}
	if obj == nil {
		return 0, fmt.Errorf("set image of component %s: %s was not observed", w.Component, w.Workload)
	}
	dc, err := r.deploymentClient(g.Upgrade)
	if err != nil {
		return 0, err
	}
	ac, meta, err := workloadApply(obj, w.Container, w.Image)
	if err != nil {
		return 0, err
	}
	sent := r.now()
	if err := dc.Apply(ctx, ac, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return 0, fmt.Errorf("set image of container %q in %s to %s (component %s): %w", w.Container, w.Workload, appupgrade.SafeText(w.Image, 300), w.Component, err)
	}
	log.FromContext(ctx).Info("image written", "component", w.Component, strings.ToLower(string(w.Workload.Kind)), w.Workload.NamespacedName().String(),
		"image", appupgrade.SafeText(w.Image, 300), "workloadResourceVersion", rvOf(meta()), "sent", sent.UTC().Format(time.RFC3339Nano))
	r.observeWrite(g.Upgrade, w.Component, w.Workload.Kind)
	r.eventRelated(g.Upgrade, obj, corev1.EventTypeNormal, writeReason(g, w.Component),
		fmt.Sprintf("Set %s image to %s on %s", w.Component, w.Image, w.Workload))
	return genOf(meta()), nil
}
