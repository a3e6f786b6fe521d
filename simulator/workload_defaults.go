package simulator

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// defaultStatefulSet mirrors SetDefaults_StatefulSet (pkg/apis/apps/v1/
// defaults.go, v1.37.2, MaxUnavailableStatefulSet on): OrderedReady,
// RollingUpdate with partition 0 and maxUnavailable 1, Retain claims, 1
// replica, revisionHistoryLimit 10; and the pod template's defaults.
func defaultStatefulSet(o *appsv1.StatefulSet) {
	if o.Spec.PodManagementPolicy == "" {
		o.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	us := &o.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if us.Type == appsv1.RollingUpdateStatefulSetStrategyType && us.RollingUpdate != nil {
		if us.RollingUpdate.Partition == nil {
			us.RollingUpdate.Partition = ptr.To[int32](0)
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
	}
	if o.Spec.PersistentVolumeClaimRetentionPolicy == nil {
		o.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if o.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		o.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if o.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		o.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if o.Spec.Replicas == nil {
		o.Spec.Replicas = ptr.To[int32](1)
	}
	if o.Spec.RevisionHistoryLimit == nil {
		o.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	defaultPodSpec(&o.Spec.Template.Spec)
}

// defaultDaemonSet mirrors SetDefaults_DaemonSet: RollingUpdate with
// maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10; and the pod
// template's defaults.
func defaultDaemonSet(o *appsv1.DaemonSet) {
	us := &o.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if us.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if us.RollingUpdate.MaxSurge == nil {
			us.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if o.Spec.RevisionHistoryLimit == nil {
		o.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	defaultPodSpec(&o.Spec.Template.Spec)
}

// validateStatefulSet checks the subset of ValidateStatefulSetSpec
// (pkg/apis/apps/validation) the model relies on: selector, replicas,
// pod management policy, update strategy (Recreate refused: its feature
// gate is off by default in 1.37), partition, maxUnavailable, containers.
func validateStatefulSet(o *appsv1.StatefulSet) field.ErrorList {
	p := field.NewPath("spec")
	errs := validateSelector(o.Spec.Selector, o.Spec.Template.Labels)
	errs = append(errs, validateReplicas(o.Spec.Replicas)...)
	switch o.Spec.PodManagementPolicy {
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.NotSupported(p.Child("podManagementPolicy"), o.Spec.PodManagementPolicy, []string{"OrderedReady", "Parallel"}))
	}
	us := o.Spec.UpdateStrategy
	switch us.Type {
	case appsv1.OnDeleteStatefulSetStrategyType:
		if us.RollingUpdate != nil {
			errs = append(errs, field.Invalid(p.Child("updateStrategy", "rollingUpdate"), us.RollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := us.RollingUpdate; ru != nil {
			if ru.Partition != nil && *ru.Partition < 0 {
				errs = append(errs, field.Invalid(p.Child("updateStrategy", "rollingUpdate", "partition"), *ru.Partition, "must be greater than or equal to 0"))
			}
			if ru.MaxUnavailable != nil {
				if n, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, 100, false); err != nil || n < 1 {
					errs = append(errs, field.Invalid(p.Child("updateStrategy", "rollingUpdate", "maxUnavailable"), ru.MaxUnavailable, "must be greater than 0"))
				}
			}
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("updateStrategy", "type"), us.Type, []string{"OnDelete", "RollingUpdate"}))
	}
	return append(errs, validatePodSpec(p.Child("template", "spec"), &o.Spec.Template.Spec)...)
}

// validateDaemonSet checks the subset of ValidateDaemonSetSpec the model
// relies on: selector, update strategy (maxSurge and maxUnavailable not
// both 0), containers.
func validateDaemonSet(o *appsv1.DaemonSet) field.ErrorList {
	p := field.NewPath("spec", "updateStrategy")
	errs := validateSelector(o.Spec.Selector, o.Spec.Template.Labels)
	us := o.Spec.UpdateStrategy
	switch us.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		ru := us.RollingUpdate
		surge, err1 := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, 100, true)
		unavail, err2 := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, 100, true)
		switch {
		case err1 != nil || err2 != nil:
			errs = append(errs, field.Invalid(p.Child("rollingUpdate"), ru, "must be an integer or percentage"))
		case surge == 0 && unavail == 0:
			errs = append(errs, field.Invalid(p.Child("rollingUpdate", "maxUnavailable"), ru.MaxUnavailable, "cannot be 0 when maxSurge is 0"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), us.Type, []string{"OnDelete", "RollingUpdate"}))
	}
	return append(errs, validatePodSpec(field.NewPath("spec", "template", "spec"), &o.Spec.Template.Spec)...)
}
