// Package v1beta1 holds the ApplicationUpgrade API, group upgrades.lunadas.dev,
// version v1beta1: an ordered upgrade of N components forming a dependency
// graph. It is the storage version and the conversion hub; v1alpha1 (a
// worker and an API) converts to a two-component graph and back.
//
// +kubebuilder:object:generate=true
// +groupName=upgrades.lunadas.dev
package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "upgrades.lunadas.dev", Version: "v1beta1"}

	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
