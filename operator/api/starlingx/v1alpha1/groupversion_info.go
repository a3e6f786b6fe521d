// Package v1alpha1 holds the platform Upgrade API, group upgrade.starlingx.io,
// version v1alpha1: the singleton, cluster-scoped `system` Upgrade that
// declares the desired StarlingX product release and Kubernetes version.
//
// +kubebuilder:object:generate=true
// +groupName=upgrade.starlingx.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "upgrade.starlingx.io", Version: "v1alpha1"}

	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// SystemName is the name of the only Upgrade object the webhook admits.
const SystemName = "system"
