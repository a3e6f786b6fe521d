package simulator

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// TestSameStringsIsSemanticDeepEqual: sameStrings answers as
// equality.Semantic.DeepEqual does for string maps, nil and empty alike.
func TestSameStringsIsSemanticDeepEqual(t *testing.T) {
	maps := []map[string]string{
		nil, {}, {"a": "1"}, {"a": "2"}, {"b": "1"}, {"a": ""}, {"": ""},
		{"a": "1", "b": "2"}, {"a": "1", "c": "2"}, {"a": "1", "b": "3"},
	}
	for _, a := range maps {
		for _, b := range maps {
			if got, want := sameStrings(a, b), equality.Semantic.DeepEqual(a, b); got != want {
				t.Errorf("sameStrings(%#v, %#v) = %v, Semantic.DeepEqual says %v", a, b, got, want)
			}
		}
	}
}
