package simulator

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// HubConversion is a ConvertFunc over controller-runtime's hub-and-spoke
// conversion, in process: what conversion.NewWebhookHandler does per
// object, without HTTP. The kind's versions are types in scheme; one is a
// conversion.Hub, the others conversion.Convertible. Spoke to hub is
// ConvertTo, hub to spoke ConvertFrom, spoke to spoke goes through a fresh
// hub. Errors: a version that is not in scheme, no hub, a type that is
// neither hub nor convertible, or the Convert* error itself.
func HubConversion(scheme *runtime.Scheme) ConvertFunc {
	return func(obj runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
		from, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return nil, err
		}
		dst, err := scheme.New(to.WithKind(from.Kind))
		if err != nil {
			return nil, fmt.Errorf("convert %s to %s: %w", from, to, err)
		}
		if err := hubConvert(scheme, from, obj, dst); err != nil {
			return nil, err
		}
		dst.GetObjectKind().SetGroupVersionKind(to.WithKind(from.Kind))
		return dst, nil
	}
}

func hubConvert(scheme *runtime.Scheme, from schema.GroupVersionKind, src, dst runtime.Object) error {
	srcHub, srcIsHub := src.(conversion.Hub)
	dstHub, dstIsHub := dst.(conversion.Hub)
	srcSpoke, srcIsSpoke := src.(conversion.Convertible)
	dstSpoke, dstIsSpoke := dst.(conversion.Convertible)
	switch {
	case srcIsHub && dstIsSpoke:
		return dstSpoke.ConvertFrom(srcHub)
	case srcIsSpoke && dstIsHub:
		return srcSpoke.ConvertTo(dstHub)
	case srcIsSpoke && dstIsSpoke:
		hub, err := hubOf(scheme, from.GroupKind())
		if err != nil {
			return err
		}
		if err := srcSpoke.ConvertTo(hub); err != nil {
			return err
		}
		return dstSpoke.ConvertFrom(hub)
	}
	return fmt.Errorf("convert %T to %T: neither is a conversion.Hub with the other conversion.Convertible", src, dst)
}

// hubOf is a new object of gk's hub version.
func hubOf(scheme *runtime.Scheme, gk schema.GroupKind) (conversion.Hub, error) {
	for _, gv := range scheme.VersionsForGroupKind(gk) {
		o, err := scheme.New(gv.WithKind(gk.Kind))
		if err != nil {
			continue
		}
		if h, ok := o.(conversion.Hub); ok {
			return h, nil
		}
	}
	return nil, fmt.Errorf("%s has no conversion.Hub version in the scheme", gk)
}
