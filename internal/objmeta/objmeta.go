// Package objmeta holds what the operator's rollout assessment and the
// simulator's Deployment model both ask of a pod template's metadata.
package objmeta

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EmptyBesidesLabels reports whether m sets nothing but labels and
// annotations (a pod template's usual metadata; empty slices and maps
// count as unset, as Semantic.DeepEqual has nil and empty alike): two
// such are equal apart from those two, answered without copying the
// metadata to compare it.
func EmptyBesidesLabels(m *metav1.ObjectMeta) bool {
	v := reflect.ValueOf(m).Elem()
	for i := 0; i < v.NumField(); i++ {
		if i == metaLabels || i == metaAnnotations {
			continue
		}
		switch f := v.Field(i); f.Kind() {
		case reflect.Slice, reflect.Map:
			if f.Len() != 0 {
				return false
			}
		default:
			if !f.IsZero() {
				return false
			}
		}
	}
	return true
}

// metaLabels and metaAnnotations are the indexes of ObjectMeta's Labels
// and Annotations fields.
var metaLabels, metaAnnotations = metaFieldIndex("Labels"), metaFieldIndex("Annotations")

func metaFieldIndex(name string) int {
	f, ok := reflect.TypeFor[metav1.ObjectMeta]().FieldByName(name)
	if !ok || len(f.Index) != 1 {
		panic("metav1.ObjectMeta has no field " + name)
	}
	return f.Index[0]
}
