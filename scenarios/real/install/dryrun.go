package install

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DryRun is `kubectl apply --dry-run=server -f -` with controller-runtime's
// client: each object is created with dryRun=All, or, when it exists,
// updated with dryRun=All over the live resourceVersion, both with
// fieldValidation=Strict as kubectl sends it (an unknown or duplicate field
// is an error, not silently dropped). The API server runs defaulting,
// validation (OpenAPI schemas of built-in types and CRDs) and admission,
// and persists nothing. Every failure is reported, joined.
func DryRun(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	var errs []error
	for _, o := range objs {
		obj := o.DeepCopy()
		err := c.Create(ctx, obj, client.DryRunAll, client.FieldValidation("Strict"))
		if apierrors.IsAlreadyExists(err) {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(obj.GroupVersionKind())
			if err = c.Get(ctx, client.ObjectKeyFromObject(obj), live); err == nil {
				obj.SetResourceVersion(live.GetResourceVersion())
				err = c.Update(ctx, obj, client.DryRunAll, client.FieldValidation("Strict"))
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("dry-run %s: %w", Name(o), err))
		}
	}
	return errors.Join(errs...)
}

// CreateAll creates objs for real (no dry run), in order; existing ones are
// left as they are.
func CreateAll(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := c.Create(ctx, o.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s: %w", Name(o), err)
		}
	}
	return nil
}
