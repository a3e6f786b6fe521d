package app

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/simulator"
)

// Registry is where the scenarios' images live; "<registry>/<deployment>:v1.0.0"
// is a Deployment's image unless a step says otherwise.
const Registry = "registry.example.com"

// Image tags of the scenarios.
const (
	CurrentTag = "v1.0.0"
	TargetTag  = "v2.0.0"
)

// imageOf is the image of deployment at tag.
func imageOf(deployment, tag string) string { return Registry + "/" + deployment + ":" + tag }

// roles of the two Deployments of an ordered upgrade.
const (
	roleWorker = "worker"
	roleAPI    = "API"
	// roleComponent is a Deployment of a graph upgrade, named by its step.
	roleComponent = "component"
)

// defaultName is the Deployment name of a role when the step names none.
func defaultName(role string) string {
	if role == roleAPI {
		return "job-api"
	}
	return "job-worker"
}

// containerOf is the container a role's image goes into.
func containerOf(role string) string {
	switch role {
	case roleAPI:
		return "api"
	case roleComponent:
		return "app"
	}
	return "worker"
}

// deploymentSpec is what a "Given a worker Deployment with ..." step says.
type deploymentSpec struct {
	role, name      string
	replicas        int32
	recreate        bool
	surge, unavail  *intstr.IntOrString
	startDelay      string
	readyDelay      string
	deleteDelay     string
	grace           *int64
	progressSeconds *int32
	image           string
	containers      []string
	// kind is "" for a Deployment, else "StatefulSet" or "DaemonSet"
	// (workloadStep); partition is a StatefulSet's rollingUpdate.partition.
	kind      string
	partition *int32
}

// clauses of a Deployment step, after "with N replicas".
var deploymentClause = regexp.MustCompile(`surge (\d+)|unavailable (\d+)|the Recreate strategy|pods start after (\d+(?:ms|s|m))|pods ready after (\d+(?:ms|s|m))|terminating in (\d+(?:ms|s|m))|a grace period of (\d+)s|a progress deadline of (\d+)s|the image "([^"]+)"|containers ((?:"[^"]+"(?:, | and )?)+)`)

var separators = regexp.MustCompile(`^(?:[\s,]|and)*$`)

// parseDeployment reads the clauses of a Deployment step.
func parseDeployment(role, name string, replicas int32, rest string) (*deploymentSpec, error) {
	if name == "" {
		name = defaultName(role)
	}
	d := &deploymentSpec{role: role, name: name, replicas: replicas, startDelay: "1s", readyDelay: "1s", deleteDelay: "1s",
		image: imageOf(name, CurrentTag), containers: []string{containerOf(role)}}
	matches := deploymentClause.FindAllStringSubmatchIndex(rest, -1)
	covered := 0
	var leftover strings.Builder
	for _, m := range matches {
		leftover.WriteString(rest[covered:m[0]])
		covered = m[1]
		group := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return rest[m[2*i]:m[2*i+1]]
		}
		whole := rest[m[0]:m[1]]
		switch {
		case group(1) != "":
			d.surge = ptr.To(intstr.FromInt32(atoi32(group(1))))
		case group(2) != "":
			d.unavail = ptr.To(intstr.FromInt32(atoi32(group(2))))
		case whole == "the Recreate strategy":
			d.recreate = true
		case group(3) != "":
			d.startDelay = group(3)
		case group(4) != "":
			d.readyDelay = group(4)
		case group(5) != "":
			d.deleteDelay = group(5)
		case group(6) != "":
			d.grace = ptr.To(int64(atoi32(group(6))))
		case group(7) != "":
			d.progressSeconds = ptr.To(atoi32(group(7)))
		case group(8) != "":
			d.image = group(8)
		case group(9) != "":
			d.containers = regexp.MustCompile(`"([^"]+)"`).FindAllString(group(9), -1)
			for i := range d.containers {
				d.containers[i] = strings.Trim(d.containers[i], `"`)
			}
		}
	}
	leftover.WriteString(rest[covered:])
	if !separators.MatchString(leftover.String()) {
		return nil, fmt.Errorf("cannot read %q in %q: say e.g. \"surge 1, unavailable 0, pods ready after 5s, terminating in 20s, a grace period of 30s, a progress deadline of 60s, the image \\\"...\\\", containers \\\"a\\\" and \\\"b\\\"\"", strings.Trim(leftover.String(), " ,"), rest)
	}
	for _, v := range []string{d.startDelay, d.readyDelay, d.deleteDelay} {
		if _, err := time.ParseDuration(v); err != nil {
			return nil, fmt.Errorf("%q is not a duration such as 5s", v)
		}
	}
	return d, nil
}

func atoi32(s string) int32 {
	n, _ := strconv.Atoi(s)
	return int32(n)
}

// object builds the Deployment. Pod timings are kwok's stage annotations,
// read by kwok on a real cluster and by the simulator's kubelet model alike.
func (d *deploymentSpec) object(namespace string) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": d.name}
	// the role's container (e.g. "worker") gets the role's image wherever
	// it stands — a sidecar may come first; without one, the first does
	main := slices.Index(d.containers, containerOf(d.role))
	if main < 0 {
		main = 0
	}
	var containers []corev1.Container
	for i, name := range d.containers {
		img := d.image
		if i != main {
			img = imageOf(name, CurrentTag)
		}
		containers = append(containers, corev1.Container{Name: name, Image: img})
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: d.name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(d.replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					simulator.AnnotationPodCreateDelay: d.startDelay,
					simulator.AnnotationPodReadyDelay:  d.readyDelay,
					simulator.AnnotationPodDeleteDelay: d.deleteDelay,
				}},
				Spec: corev1.PodSpec{Containers: containers, TerminationGracePeriodSeconds: d.grace},
			},
			ProgressDeadlineSeconds: d.progressSeconds,
		},
	}
	if d.recreate {
		dep.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	} else if d.surge != nil || d.unavail != nil {
		dep.Spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
		dep.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: d.surge, MaxUnavailable: d.unavail}
	}
	return dep
}

// upgradeSpec is what a "the upgrade ... is applied with ..." step says.
type upgradeSpec struct {
	name                          string
	workerRef, apiRef             string
	workerImage, apiImage         string
	workerContainer, apiContainer string
}

var upgradeClause = regexp.MustCompile(`the (worker|API) image "([^"]+)"|the (worker|API) Deployment "([^"]+)"|no (worker|API) container name|the (worker|API) container "([^"]+)"`)

// applyClauses changes u as the clauses of a step say.
func (u *upgradeSpec) applyClauses(text string) error {
	matches := upgradeClause.FindAllStringSubmatch(text, -1)
	left := upgradeClause.ReplaceAllString(text, "")
	if len(matches) == 0 || !separators.MatchString(left) {
		return fmt.Errorf("cannot read %q: say e.g. `the worker image \"...\"`, `the API Deployment \"...\"`, `no worker container name`", text)
	}
	for _, m := range matches {
		switch {
		case m[1] != "":
			u.set(m[1], func(img, _, _ *string) { *img = m[2] })
		case m[3] != "":
			u.set(m[3], func(_, ref, _ *string) { *ref = m[4] })
		case m[5] != "":
			u.set(m[5], func(_, _, c *string) { *c = "" })
		case m[6] != "":
			u.set(m[6], func(_, _, c *string) { *c = m[7] })
		}
	}
	return nil
}

func (u *upgradeSpec) set(role string, f func(image, ref, container *string)) {
	if role == roleAPI {
		f(&u.apiImage, &u.apiRef, &u.apiContainer)
		return
	}
	f(&u.workerImage, &u.workerRef, &u.workerContainer)
}

// object builds the ApplicationUpgrade.
func (u *upgradeSpec) object(namespace string) *upgradesv1alpha1.ApplicationUpgrade {
	return &upgradesv1alpha1.ApplicationUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: u.name},
		Spec: upgradesv1alpha1.ApplicationUpgradeSpec{
			Worker: upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: u.workerRef},
				Image: u.workerImage, ContainerName: u.workerContainer},
			API: upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: u.apiRef},
				Image: u.apiImage, ContainerName: u.apiContainer},
		},
	}
}
