package webhook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// checkAlphaWrite refuses a write made through v1alpha1 (the admission
// request's requestKind; the webhook is registered for v1beta1 with
// matchPolicy Equivalent, so the object arrives converted) whose converted
// result is not what v1alpha1 can say: v1alpha1.AlphaWriteError — the
// conversion annotation dropped, altered or hand-set, or an edit a
// one-component graph cannot represent. old is nil on create. Requests
// without an admission request in ctx (direct calls) are not judged here.
func checkAlphaWrite(ctx context.Context, old, u *v1beta1.ApplicationUpgrade) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || req.RequestKind == nil || req.RequestKind.Version != v1alpha1.GroupVersion.Version {
		return nil
	}
	return v1alpha1.AlphaWriteError(old, u)
}
