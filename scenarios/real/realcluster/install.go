// Package realcluster drives a real Kubernetes API server (the local control
// plane of scenarios/real/controlplane, Kind, or any kubeconfig): it installs the
// CRDs, applies manifests and records the event log from watches.
package realcluster

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
)

// Scheme is the operator's scheme plus apiextensions/v1 (for CRDs).
func Scheme() *runtime.Scheme {
	s := manager.NewScheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}

// InstallCRDs creates (or updates) every CRD in dir of fsys and waits up to
// timeout for each to be Established. The ApplicationUpgrade CRD's
// conversion webhook points at this process's conversion server
// (LocalConversion), so v1alpha1 and v1beta1 are both readable for as long
// as the process runs, whatever happens to the operator; the operator's
// admission webhook (graph checks, overlap guard) is served there too and
// registered as the ValidatingWebhookConfiguration HarnessWebhookName. For an API server
// that cannot reach 127.0.0.1, or a process that exits after installing,
// use InstallCRDsAsGenerated.
func InstallCRDs(ctx context.Context, c client.Client, fsys fs.FS, dir string, timeout time.Duration) error {
	conv, err := LocalConversion()
	if err != nil {
		return fmt.Errorf("install crds: %w", err)
	}
	if err := installCRDs(ctx, c, fsys, dir, timeout, conv); err != nil {
		return err
	}
	return installValidatingWebhook(ctx, c)
}

// InstallCRDsAsGenerated is InstallCRDs with the CRDs exactly as generated:
// the ApplicationUpgrade CRD has no conversion webhook (strategy None) until
// a manager started with --webhook-self-signed points it at itself (make
// install, then make run); until then only v1beta1 objects are usable.
func InstallCRDsAsGenerated(ctx context.Context, c client.Client, fsys fs.FS, dir string, timeout time.Duration) error {
	return installCRDs(ctx, c, fsys, dir, timeout, nil)
}

func installCRDs(ctx context.Context, c client.Client, fsys fs.FS, dir string, timeout time.Duration, conv *apiextensionsv1.CustomResourceConversion) error {
	objs, err := manifests.LoadFS(fsys, dir, c.Scheme())
	if err != nil {
		return err
	}
	for i, o := range objs {
		if crd, ok := o.(*apiextensionsv1.CustomResourceDefinition); ok {
			objs[i] = withConversion(crd, conv)
		}
	}
	if err := Apply(ctx, c, objs); err != nil {
		return err
	}
	for _, o := range objs {
		crd, ok := o.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKeyFromObject(crd), &got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("crd %s not established within %s: %w", crd.Name, timeout, err)
		}
	}
	return nil
}

// Apply creates each object, or updates it (keeping its resourceVersion)
// when it exists; CRDs and Namespaces go first, as kubectl apply -k orders
// them. Errors name the object.
func Apply(ctx context.Context, c client.Client, objs []client.Object) error {
	ordered := append([]client.Object(nil), objs...)
	sort.SliceStable(ordered, func(i, j int) bool { return applyRank(ordered[i]) < applyRank(ordered[j]) })
	for _, o := range ordered {
		obj := o.DeepCopyObject().(client.Object)
		err := c.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			existing := obj.DeepCopyObject().(client.Object)
			if err = c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err == nil {
				obj.SetResourceVersion(existing.GetResourceVersion())
				err = c.Update(ctx, obj)
			}
		}
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", kindOf(c, o), path.Join(o.GetNamespace(), o.GetName()), err)
		}
	}
	return nil
}

func kindOf(c client.Client, o client.Object) string {
	gvk, err := c.GroupVersionKindFor(o)
	if err != nil {
		return fmt.Sprintf("%T", o)
	}
	return gvk.Kind
}

func applyRank(o client.Object) int {
	switch o.(type) {
	case *apiextensionsv1.CustomResourceDefinition:
		return 0
	case *corev1.Namespace:
		return 1
	}
	return 2
}

// UninstallCRDs deletes every CRD in dir of fsys (and with it every custom
// resource of that kind); CRDs that are already gone are skipped. It
// returns the names it deleted.
func UninstallCRDs(ctx context.Context, c client.Client, fsys fs.FS, dir string) ([]string, error) {
	objs, err := manifests.LoadFS(fsys, dir, c.Scheme())
	if err != nil {
		return nil, err
	}
	var deleted []string
	for _, o := range objs {
		crd, ok := o.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			continue
		}
		if err := c.Delete(ctx, crd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return deleted, fmt.Errorf("delete crd %s: %w", crd.Name, err)
		}
		deleted = append(deleted, crd.Name)
	}
	return deleted, nil
}
