package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ControllerRevision helpers after kubernetes/kubernetes
// pkg/controller/history/controller_history.go (v1.37.2), shared by the
// StatefulSet and DaemonSet models.

// templatePatch is the revision data both controllers store: a strategic
// merge patch {"spec":{"template":{..., "$patch":"replace"}}} that restores
// the pod template, with keys in sorted order (both getPatch functions,
// pkg/controller/statefulset/stateful_set_utils.go and
// pkg/controller/daemon/update.go, round-trip through a map before
// marshalling). The simulator marshals the typed template where the
// StatefulSet controller encodes the whole object with the legacy codec;
// the bytes are the same for the template.
func templatePatch(spec any) ([]byte, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	template, ok := raw["template"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec has no template")
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// hashControllerRevision mirrors history.HashControllerRevision: FNV-32
// over the revision's raw data and the collision count's decimal digits,
// rendered with rand.SafeEncodeString.
func hashControllerRevision(cr *appsv1.ControllerRevision, probe *int32) string {
	hf := fnv.New32()
	if len(cr.Data.Raw) > 0 {
		_, _ = hf.Write(cr.Data.Raw)
	}
	if probe != nil {
		_, _ = hf.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(hf.Sum32()))
}

// controllerRevisionName mirrors history.ControllerRevisionName.
func controllerRevisionName(prefix, hash string) string {
	if len(prefix) > 223 {
		prefix = prefix[:223]
	}
	return prefix + "-" + hash
}

// newControllerRevision mirrors history.NewControllerRevision: labels from
// the template plus controller-revision-hash, a controller reference to
// parent, the data and revision number, named after parent and the hash.
func newControllerRevision(parent client.Object, parentKind schema.GroupVersionKind, templateLabels map[string]string,
	data []byte, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	labels := map[string]string{}
	for k, v := range templateLabels {
		labels[k] = v
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: parent.GetNamespace(), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, parentKind)}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: revision,
	}
	hash := hashControllerRevision(cr, collisionCount)
	cr.Name = controllerRevisionName(parent.GetName(), hash)
	cr.Labels[appsv1.ControllerRevisionHashLabelKey] = hash
	return cr
}

// sortControllerRevisions mirrors history.SortControllerRevisions (byRevision):
// by revision, then creation time, then name.
func sortControllerRevisions(revs []*appsv1.ControllerRevision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision == b.Revision {
			if b.CreationTimestamp.Equal(&a.CreationTimestamp) {
				return a.Name < b.Name
			}
			return b.CreationTimestamp.After(a.CreationTimestamp.Time)
		}
		return a.Revision < b.Revision
	})
}

// equalRevision mirrors history.EqualRevision for raw data.
func equalRevision(a, b *appsv1.ControllerRevision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Data.Raw, b.Data.Raw)
}

// findEqualRevisions mirrors history.FindEqualRevisions.
func findEqualRevisions(revs []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var eq []*appsv1.ControllerRevision
	for _, r := range revs {
		if equalRevision(r, needle) {
			eq = append(eq, r)
		}
	}
	return eq
}

// ownedRevisions lists the ControllerRevisions in owner's namespace whose
// controller reference is owner (history.ListControllerRevisions after
// adoption; orphans are not adopted in the simulator).
func ownedRevisions(ctx context.Context, c client.Reader, owner client.Object) ([]*appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := c.List(ctx, list, client.InNamespace(owner.GetNamespace())); err != nil {
		return nil, fmt.Errorf("list controllerrevisions of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		if ref := metav1.GetControllerOfNoCopy(&list.Items[i]); ref != nil && ref.UID == owner.GetUID() {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// createControllerRevision mirrors realHistory.CreateControllerRevision:
// on a name collision with different data the collision count goes up and
// the name is recomputed (the hash label keeps its first value, as
// upstream); an identical existing revision is returned.
func createControllerRevision(ctx context.Context, c client.Client, parent client.Object, cr *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	clone := cr.DeepCopy()
	for {
		hash := hashControllerRevision(cr, collisionCount)
		clone.Name = controllerRevisionName(parent.GetName(), hash)
		clone.ResourceVersion = ""
		err := c.Create(ctx, clone)
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return nil, fmt.Errorf("create controllerrevision %s/%s: %w", clone.Namespace, clone.Name, err)
			}
			return clone, nil
		}
		exists := &appsv1.ControllerRevision{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(clone), exists); err != nil {
			return nil, fmt.Errorf("get controllerrevision %s/%s: %w", clone.Namespace, clone.Name, err)
		}
		if bytes.Equal(exists.Data.Raw, clone.Data.Raw) {
			return exists, nil
		}
		*collisionCount++
	}
}
