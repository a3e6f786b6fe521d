package faults

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/simulator"
)

// imageFaultTags are the tags the image faults give a component's target.
var imageFaultTags = map[Kind]string{NeverReady: simulator.ImageTagNeverReady, CrashLoop: simulator.ImageTagCrashLoop, BadImage: simulator.ImageTagNotFound}

// Prepare returns copies of objs with the setup faults applied: slow pods
// change the kwok stage annotations of the pod template of the workload
// (Deployment, StatefulSet or DaemonSet) of every component named dep;
// image faults retag that component's target image in every upgrade that
// has it. Call RefuseTargets first: a fault aimed at no component does
// nothing here.
func Prepare(objs []client.Object, faults []Fault) []client.Object {
	out := make([]client.Object, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopyObject().(client.Object)
	}
	for _, f := range faults {
		switch f.Kind {
		case Slow:
			for _, c := range named(out, f.Str("dep")) {
				w := workloadOf(out, c)
				if w == nil {
					continue
				}
				_, tpl := workloadTemplate(w)
				ready, exit := f.Dur("ready"), f.Dur("exit")
				setTemplateAnnotation(tpl, "pod-ready.stage.kwok.x-k8s.io/delay", formatDuration(ready/2))
				setTemplateAnnotation(tpl, "pod-ready.stage.kwok.x-k8s.io/jitter-delay", formatDuration(ready))
				setTemplateAnnotation(tpl, "pod-delete.stage.kwok.x-k8s.io/delay", formatDuration(exit/2))
				setTemplateAnnotation(tpl, "pod-delete.stage.kwok.x-k8s.io/jitter-delay", formatDuration(exit))
			}
		case NeverReady, CrashLoop, BadImage:
			for _, u := range upgradesIn(out) {
				setTargetImage(u, f.Str("dep"), func(image string) string { return retag(image, imageFaultTags[f.Kind]) })
			}
		}
	}
	return out
}

// setTargetImage changes the target image of u's component name (either
// API version) with change; false when u has no such component.
func setTargetImage(u client.Object, name string, change func(string) string) bool {
	switch u := u.(type) {
	case *upgradesv1alpha1.ApplicationUpgrade:
		switch name {
		case "worker":
			u.Spec.Worker.Image = change(u.Spec.Worker.Image)
		case "api":
			u.Spec.API.Image = change(u.Spec.API.Image)
		default:
			return false
		}
		return true
	case *upgradesv1beta1.ApplicationUpgrade:
		for i := range u.Spec.Components {
			if c := &u.Spec.Components[i]; c.Name == name {
				c.Image = change(c.Image)
				return true
			}
		}
	}
	return false
}

func setTemplateAnnotation(t *corev1.PodTemplateSpec, k, v string) {
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[k] = v
}
