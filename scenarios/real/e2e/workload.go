package e2e

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

// Shape is one component's Deployment in a case.
type Shape struct {
	Replicas int32
	// Strategy: the zero value means RollingUpdate with maxSurge 1 and maxUnavailable 0.
	Strategy appsv1.DeploymentStrategy
	// Grace is terminationGracePeriodSeconds.
	Grace int64
	// ProgressDeadline is progressDeadlineSeconds; 0 means 120.
	ProgressDeadline int32
	Timing           Timing
}

// RollingUpdate returns a RollingUpdate strategy with the given bounds.
func RollingUpdate(maxSurge, maxUnavailable int) appsv1.DeploymentStrategy {
	return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
		MaxSurge: ptr.To(intstr.FromInt32(int32(maxSurge))), MaxUnavailable: ptr.To(intstr.FromInt32(int32(maxUnavailable)))}}
}

// Recreate is the Recreate strategy.
var Recreate = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}

// Names of the two Deployments and their containers in every case.
const (
	WorkerName  = "job-worker"
	APIName     = "job-api"
	UpgradeName = "upgrade"
)

// deployment builds name in namespace ns running image in container.
func (e Env) deployment(ns, name, container, image string, s Shape) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": name}
	strategy := s.Strategy
	if strategy.Type == "" {
		strategy = RollingUpdate(1, 0)
	}
	deadline := s.ProgressDeadline
	if deadline == 0 {
		deadline = 120
	}
	tpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To(s.Grace),
			Containers:                    []corev1.Container{{Name: container, Image: image}},
		},
	}
	e.applyTiming(&tpl, s.Timing)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(s.Replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: strategy, ProgressDeadlineSeconds: ptr.To(deadline), Template: tpl,
		},
	}
}

// upgrade is the ApplicationUpgrade of a case.
func upgrade(ns, workerImage, apiImage string) *upgradesv1alpha1.ApplicationUpgrade {
	return &upgradesv1alpha1.ApplicationUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: UpgradeName},
		Spec: upgradesv1alpha1.ApplicationUpgradeSpec{
			Worker: upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: WorkerName}, Image: workerImage, ContainerName: "worker"},
			API:    upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: APIName}, Image: apiImage, ContainerName: "api"},
		},
	}
}
