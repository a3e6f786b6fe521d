//go:build bench

package realbench

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/bench/poller"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
)

// demoApp is deploy/demo and deploy/samples, loaded once.
type demoApp struct {
	worker, api *appsv1.Deployment
	upgrade     *upgradesv1alpha1.ApplicationUpgrade
}

func loadDemo() (*demoApp, error) {
	objs, err := manifests.LoadFS(deploy.Demo, ".", manager.NewScheme())
	if err != nil {
		return nil, err
	}
	app := &demoApp{}
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			switch o.Name {
			case "job-worker":
				app.worker = o
			case "job-api":
				app.api = o
			}
		case *upgradesv1alpha1.ApplicationUpgrade:
			app.upgrade = o
		}
	}
	if app.worker == nil || app.api == nil || app.upgrade == nil {
		return nil, fmt.Errorf("deploy/demo and deploy/samples: want job-worker, job-api and an ApplicationUpgrade")
	}
	return app, nil
}

// objects returns the namespace, both Deployments (timing applied) and the
// ApplicationUpgrade, all in ns.
func (app *demoApp) objects(ns string, t Timing) (*corev1.Namespace, *appsv1.Deployment, *appsv1.Deployment, *upgradesv1alpha1.ApplicationUpgrade) {
	w, a, u := app.worker.DeepCopy(), app.api.DeepCopy(), app.upgrade.DeepCopy()
	w.Namespace, a.Namespace, u.Namespace = ns, ns, ns
	t.apply(w)
	t.apply(a)
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, w, a, u
}

// target is the Upgrade the sample ApplicationUpgrade describes, in ns.
func (app *demoApp) target(ns string) Upgrade {
	s := app.upgrade.Spec
	return Upgrade{Namespace: ns, Worker: s.Worker.DeploymentRef.Name, API: s.API.DeploymentRef.Name,
		WorkerImage: s.Worker.Image, APIImg: s.API.Image,
		WorkerReplicas: int(ptr.Deref(app.worker.Spec.Replicas, 1)), APIReplicas: int(ptr.Deref(app.api.Spec.Replicas, 1))}
}

// pollerTargets are the same two writes for the poller.
func (app *demoApp) pollerTargets() (worker, api poller.Target) {
	s := app.upgrade.Spec
	return poller.Target{Name: s.Worker.DeploymentRef.Name, Container: s.Worker.ContainerName, Image: s.Worker.Image},
		poller.Target{Name: s.API.DeploymentRef.Name, Container: s.API.ContainerName, Image: s.API.Image}
}

// filler is an unrelated Deployment at 0 replicas.
func filler(ns string, i int) *appsv1.Deployment {
	name := fmt.Sprintf("filler-%05d", i)
	labels := map[string]string{"app.kubernetes.io/name": name, "bench.lunadas.dev/filler": "true"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/filler:v1"}}},
			},
		},
	}
}
