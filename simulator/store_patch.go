package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patch applies a patch to the stored version of obj (PATCH), then writes
// the result as an update would. A resourceVersion inside the patch (as
// client.MergeFromWithOptimisticLock sends) must match the stored one, or
// the patch is a 409 Conflict; without one the patch is unconditional.
// Strategic merge patches are accepted for built-in kinds only (a custom
// resource answers 415, as kube-apiserver does). A patch at a version other
// than the storage one applies to the object converted to that version.
func (st *store) patch(gvk schema.GroupVersionKind, obj client.Object, pt types.PatchType, data []byte, manager string, status, dryRun bool) (client.Object, error) {
	sgvk := st.storageGVK(gvk)
	cur, err := st.current(sgvk, obj, status)
	if err != nil {
		return nil, err
	}
	curV, err := st.convert(cur, sgvk, gvk)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(curV)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", gvk.Kind, objectName(cur), err)
	}
	patched, err := applyPatch(gvk, curV, pt, doc, data)
	if err != nil {
		return nil, err
	}
	cand, err := st.decode(gvk, patched)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("patch of %s %s: %v", gvk.Kind, objectName(cur), err))
	}
	if rv := cand.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(resourceFor(gvk), cur.GetName(), fmt.Errorf("%s", errModified))
	}
	cand.SetName(cur.GetName())
	cand.SetNamespace(cur.GetNamespace())
	st.applyDefaults(cand)
	if cand, err = st.trackUpdate(gvk, curV, cand, manager, status); err != nil {
		return nil, err
	}
	cand.SetResourceVersion(cur.GetResourceVersion())
	return st.write(gvk, cur, curV, cand, status, dryRun)
}

func applyPatch(gvk schema.GroupVersionKind, cur client.Object, pt types.PatchType, doc, data []byte) ([]byte, error) {
	var out []byte
	var err error
	switch pt {
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(doc, data)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(data); err == nil {
			out, err = p.Apply(doc)
		}
	case types.StrategicMergePatchType:
		if !isBuiltin(cur) {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", resourceFor(gvk), cur.GetName(),
				"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", 0, false)
		}
		out, err = strategicpatch.StrategicMergePatch(doc, data, cur)
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("patch type %q of %s %s is not supported by the simulator", pt, gvk.Kind, objectName(cur)))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s patch of %s %s: %v", pt, gvk.Kind, objectName(cur), err))
	}
	return out, nil
}
