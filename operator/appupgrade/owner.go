package appupgrade

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FieldManager is the field manager every write of the operator is
// recorded under (controller.FieldManager). The operator writes only an
// upgrade's target image, so an image owned by it alone is some upgrade's
// target, never a revert (reverted).
const FieldManager = "upgrade-operator"

// ImageOwner names the field managers (metadata.managedFields[].manager,
// comma-separated, sorted) that own spec.template.spec.containers[name=
// container].image of d (a Deployment, StatefulSet or DaemonSet: the path
// is the same in all three), or "" when none does or d is nil. FieldsV1 is the
// JSON trie of structured-merge-diff (sigs.k8s.io/structured-merge-diff
// fieldpath.Set serialization, as in
// k8s.io/apimachinery/pkg/util/managedfields): "f:<field>" for struct
// fields, `k:{"name":"<container>"}` for list items by merge key. Entries
// of subresources are skipped; undecodable entries are ignored (the API
// server validates them on write).
func ImageOwner(d metav1.Object, container string) string {
	if d == nil || reflect.ValueOf(d).IsNil() {
		return ""
	}
	key, _ := json.Marshal(map[string]string{"name": container})
	path := []string{"f:spec", "f:template", "f:spec", "f:containers", "k:" + string(key), "f:image"}
	var owners []string
	for _, e := range d.GetManagedFields() {
		if e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var node map[string]any
		if json.Unmarshal(e.FieldsV1.Raw, &node) != nil {
			continue
		}
		if hasPath(node, path) {
			owners = append(owners, e.Manager)
		}
	}
	sort.Strings(owners)
	return strings.Join(owners, ",")
}

func hasPath(node map[string]any, path []string) bool {
	for _, p := range path {
		next, ok := node[p].(map[string]any)
		if !ok {
			return false
		}
		node = next
	}
	return true
}
