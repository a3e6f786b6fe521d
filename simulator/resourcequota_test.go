package simulator

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func testQuota(hard corev1.ResourceList) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "compute"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
}

func quotaSim(t *testing.T, q *corev1.ResourceQuota) (*Sim, client.Client) {
	t.Helper()
	s := New(Options{Seed: 1})
	s.InstallKubeControllers(KubeOptions{})
	c := s.Client()
	mustCreate(t, c, q)
	runFor(t, s, time.Second)
	return s, c
}

// A surge pod over a pods quota is refused at admission: the new
// ReplicaSet reports FailedCreate with the API server's message, the
// Deployment ReplicaFailure with the same, and the old pods keep running.
func TestQuotaRefusesSurgePod(t *testing.T) {
	ctx := context.Background()
	s, c := quotaSim(t, testQuota(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}))
	d := testDeployment("web")
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptrIntstr(1), MaxUnavailable: ptrIntstr(0)}
	mustCreate(t, c, d)
	runFor(t, s, 10*time.Second)
	q := &corev1.ResourceQuota{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "compute"}, q); err != nil {
		t.Fatal(err)
	}
	if used := q.Status.Used[corev1.ResourcePods]; used.String() != "2" {
		t.Fatalf("status.used pods = %s, want 2 (%v)", used.String(), q.Status)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "img:v2"
	if err := c.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	runFor(t, s, 10*time.Second)
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	var cond *appsv1.DeploymentCondition
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == appsv1.DeploymentReplicaFailure {
			cond = &d.Status.Conditions[i]
		}
	}
	want := "is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2"
	if cond == nil || cond.Reason != "FailedCreate" || !strings.HasPrefix(cond.Message, `pods "web-`) || !strings.HasSuffix(cond.Message, want) {
		t.Fatalf("ReplicaFailure = %+v, want FailedCreate ending %q", cond, want)
	}
	if d.Status.UpdatedReplicas != 0 || d.Status.AvailableReplicas != 2 {
		t.Errorf("updated %d available %d, want 0 and 2", d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
	}
}

// Scaling down releases quota through the resourcequota controller's
// replenishment, so the pod refused earlier is created.
func TestQuotaReplenishedOnPodDelete(t *testing.T) {
	ctx := context.Background()
	s, c := quotaSim(t, testQuota(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}))
	d := testDeployment("web")
	d.Spec.Replicas = ptrInt32(3)
	mustCreate(t, c, d)
	runFor(t, s, 10*time.Second)
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	if d.Status.Replicas != 2 {
		t.Fatalf("replicas %d under a quota of 2 pods", d.Status.Replicas)
	}
	q := &corev1.ResourceQuota{}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "compute"}, q)
	q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("3")
	if err := c.Update(ctx, q); err != nil {
		t.Fatal(err)
	}
	runFor(t, s, 30*time.Second)
	_ = c.Get(ctx, client.ObjectKeyFromObject(d), d)
	if d.Status.Replicas != 3 {
		t.Errorf("replicas %d after the quota was raised to 3", d.Status.Replicas)
	}
	mustDeletePods(t, c, 1)
	runFor(t, s, 10*time.Second)
	_ = c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "compute"}, q)
	if used := q.Status.Used[corev1.ResourcePods]; used.String() != "3" {
		t.Errorf("used pods %s after a replaced pod, want 3", used.String())
	}
}

func mustDeletePods(t *testing.T, c client.Client, n int) {
	t.Helper()
	pods := &corev1.PodList{}
	_ = c.List(context.Background(), pods, client.InNamespace("ns"))
	for i := 0; i < n && i < len(pods.Items); i++ {
		if err := c.Delete(context.Background(), &pods.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// cpu/memory quotas: each container must state them, and requests and
// limits are summed over the pod's containers.
func TestQuotaComputeResources(t *testing.T) {
	ctx := context.Background()
	s, c := quotaSim(t, testQuota(corev1.ResourceList{
		corev1.ResourceRequestsCPU: resource.MustParse("1"), corev1.ResourceLimitsMemory: resource.MustParse("256Mi")}))
	_ = s
	pod := testPod("bare", "")
	err := c.Create(ctx, pod)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: app; requests.cpu for: app`) {
		t.Fatalf("pod without requests: %v", err)
	}
	sized := func(name, cpu, mem string) *corev1.Pod {
		p := testPod(name, "")
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}}
		return p
	}
	mustCreate(t, c, sized("a", "600m", "128Mi"))
	err = c.Create(ctx, sized("b", "500m", "64Mi"))
	want := `pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1`
	if err == nil || err.Error() != want {
		t.Fatalf("second pod: %v, want %s", err, want)
	}
	mustCreate(t, c, sized("c", "400m", "128Mi"))
}

// Quotas the simulator cannot enforce are refused in one line.
func TestQuotaUnmodelledRefused(t *testing.T) {
	s, c := newTestSim()
	_ = s
	err := c.Create(context.Background(), testQuota(corev1.ResourceList{"count/replicasets.apps": resource.MustParse("2")}))
	if err == nil || !strings.Contains(err.Error(), `does not model quota resource "count/replicasets.apps"`) {
		t.Errorf("count/replicasets.apps quota: %v", err)
	}
	q := testQuota(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")})
	q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	if err := c.Create(context.Background(), q); err == nil || !strings.Contains(err.Error(), "does not model quota scopes") {
		t.Errorf("scoped quota: %v", err)
	}
}

func ptrIntstr(i int) *intstr.IntOrString { v := intstr.FromInt(i); return &v }
func ptrInt32(i int32) *int32             { return &i }
