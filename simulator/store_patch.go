package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

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
	cand, err := st.applyPatchTo(gvk, curV, pt, data)
	if err != nil {
		return nil, err
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

// applyPatchTo returns a fresh object: curV with the patch applied. A merge
// patch is applied to the typed object (mergePatchTyped) when it can be;
// everything else goes through JSON: encode curV, patch, decode. With
// CheckSharedReads on, every typed merge is compared with the JSON path
// and a difference panics.
func (st *store) applyPatchTo(gvk schema.GroupVersionKind, curV client.Object, pt types.PatchType, data []byte) (client.Object, error) {
	var typed client.Object
	ok := false
	if pt == types.MergePatchType {
		if typed, ok = mergePatchTyped(curV, data); ok {
			typed.GetObjectKind().SetGroupVersionKind(gvk)
			if !st.s.shared.on {
				return typed, nil
			}
		}
	}
	doc, err := json.Marshal(curV)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", gvk.Kind, objectName(curV), err)
	}
	patched, err := applyPatch(gvk, curV, pt, doc, data)
	if err != nil {
		if ok {
			panic(fmt.Sprintf("simulator: the typed merge patch of %s %s succeeded where the JSON path failed: %v", gvk.Kind, objectName(curV), err))
		}
		return nil, err
	}
	cand, err := st.decode(gvk, patched)
	if err != nil {
		err = apierrors.NewBadRequest(fmt.Sprintf("patch of %s %s: %v", gvk.Kind, objectName(curV), err))
	}
	if ok {
		if err != nil {
			panic(fmt.Sprintf("simulator: the typed merge patch of %s %s succeeded where the JSON path failed: %v", gvk.Kind, objectName(curV), err))
		}
		if d := firstDifference(reflect.ValueOf(cand), reflect.ValueOf(typed), ""); d != "" {
			panic(fmt.Sprintf("simulator: the typed merge patch of %s %s differs from the JSON path at %s; patch %s", gvk.Kind, objectName(curV), d, data))
		}
	}
	return cand, err
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
