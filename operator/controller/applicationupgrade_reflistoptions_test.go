package controller

import (
	"reflect"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// refListOptions is the options client.MatchingFields{DeploymentRefIndex:
// key} and client.UnsafeDisableDeepCopy apply, term for term.
func TestRefListOptionsIsMatchingFields(t *testing.T) {
	for _, key := range []string{"Deployment/ns/web", "StatefulSet/a,b/c=d", ""} {
		want := (&client.ListOptions{}).ApplyOptions([]client.ListOption{client.MatchingFields{DeploymentRefIndex: key}, client.UnsafeDisableDeepCopy})
		got := refListOptions(key)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("key %q: refListOptions %+v, MatchingFields and UnsafeDisableDeepCopy %+v", key, got, want)
		}
		if got.FieldSelector.String() != want.FieldSelector.String() {
			t.Errorf("key %q: selector %q, want %q", key, got.FieldSelector, want.FieldSelector)
		}
	}
}
