package simrun

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
)

// Modelled are the kinds the simulator runs a model of (Namespace is only
// stored, but it is what the others live in; ControllerRevisions are what
// the StatefulSet and DaemonSet models keep their revisions in; a
// ResourceQuota is enforced by the simulator's model of the quota
// admission and the resourcequota controller for pods, cpu and memory, and
// refused at create when it names other resources or scopes).
var Modelled = []client.Object{&corev1.Namespace{}, &appsv1.Deployment{},
	&appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &appsv1.ControllerRevision{}, &corev1.ResourceQuota{},
	&upgradesv1alpha1.ApplicationUpgrade{}, &upgradesv1beta1.ApplicationUpgrade{}}

// Inert are kinds a manifest may hold that do not change how a Deployment
// rolls out, so the simulator stores them and models nothing: Services
// and Ingresses route, ConfigMaps and Secrets are read by containers
// (whose start the kubelet model's delays stand for), RBAC objects and
// ServiceAccounts authorize, a NetworkPolicy filters traffic, and a
// PodDisruptionBudget limits evictions (the Deployment controller deletes
// old pods directly, never through the eviction API:
// kubernetes/kubernetes pkg/controller/deployment/rolling.go).
var Inert = []client.Object{&corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{}, &corev1.ServiceAccount{},
	&rbacv1.Role{}, &rbacv1.RoleBinding{}, &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{},
	&networkingv1.NetworkPolicy{}, &networkingv1.Ingress{}, &policyv1.PodDisruptionBudget{}}

// CheckKind refuses, in one line, an object of a kind the simulator
// neither models nor lists as inert (a LimitRange, whose defaults a real
// API server writes into pods; a HorizontalPodAutoscaler, which rescales
// during a rollout; a bare Pod, ...): stored and ignored, it could
// make the simulator complete an upgrade a real cluster would not. A
// StatefulSet with volumeClaimTemplates is refused too: the simulator
// models no PersistentVolumeClaims (nor their binding, which holds pods
// Pending on a real cluster).
func CheckKind(obj client.Object) error {
	if s, ok := obj.(*appsv1.StatefulSet); ok && len(s.Spec.VolumeClaimTemplates) > 0 {
		return fmt.Errorf("statefulset %s: the simulator does not model PersistentVolumeClaims (spec.volumeClaimTemplates); remove them or run on a real cluster", client.ObjectKeyFromObject(obj))
	}
	for _, o := range append(append([]client.Object(nil), Modelled...), Inert...) {
		if sameType(o, obj) {
			return nil
		}
	}
	return fmt.Errorf("%s %s: the simulator does not model kind %s and it can change a rollout; it models %s and accepts as inert %s: remove it or run on a real cluster",
		strings.ToLower(kindOf(obj)), client.ObjectKeyFromObject(obj), kindOf(obj), kindList(Modelled), kindList(Inert))
}

func sameType(a, b runtime.Object) bool { return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b) }

var scheme = manager.NewScheme()

// kindOf is obj's kind as its scheme names it.
func kindOf(obj runtime.Object) string {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return fmt.Sprintf("%T", obj)
	}
	return gvks[0].Kind
}

func kindList(objs []client.Object) string {
	var names []string
	for _, o := range objs {
		if k := kindOf(o); len(names) == 0 || names[len(names)-1] != k {
			names = append(names, k)
		}
	}
	return strings.Join(names, ", ")
}
