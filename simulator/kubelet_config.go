package simulator

import (
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// containerConfigRetry is how often the kubelet model retries a container
// whose ConfigMap or Secret is missing (the real kubelet retries on its
// pod resync).
const containerConfigRetry = 10 * time.Second

// imageReference is the grammar of an image reference (the distribution
// reference format): lowercase path components, an optional host[:port],
// tag and digest.
var imageReference = regexp.MustCompile(`^` +
	`(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*(?::[0-9]+)?/)?` +
	`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
	`(?::[\w][\w.-]{0,127})?` +
	`(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`)

func validImageReference(image string) bool { return imageReference.MatchString(image) }

// missingConfig names the first ConfigMap, Secret or key a container needs
// that does not exist (optional references excepted), as the kubelet's
// CreateContainerConfigError message does; "" when all exist.
func (k *kubelet) missingConfig(pod *corev1.Pod, container string) string {
	for _, c := range pod.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, ef := range c.EnvFrom {
			if r := ef.ConfigMapRef; r != nil && !deref(r.Optional) && k.configMap(pod.Namespace, r.Name) == nil {
				return fmt.Sprintf("configmap %q not found", r.Name)
			}
			if r := ef.SecretRef; r != nil && !deref(r.Optional) && k.secret(pod.Namespace, r.Name) == nil {
				return fmt.Sprintf("secret %q not found", r.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if msg := k.missingKey(pod.Namespace, e.ValueFrom); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func (k *kubelet) missingKey(ns string, src *corev1.EnvVarSource) string {
	if r := src.ConfigMapKeyRef; r != nil && !deref(r.Optional) {
		cm := k.configMap(ns, r.Name)
		if cm == nil {
			return fmt.Sprintf("configmap %q not found", r.Name)
		}
		if _, ok := cm.Data[r.Key]; !ok {
			return fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", r.Key, ns, r.Name)
		}
	}
	if r := src.SecretKeyRef; r != nil && !deref(r.Optional) {
		sec := k.secret(ns, r.Name)
		if sec == nil {
			return fmt.Sprintf("secret %q not found", r.Name)
		}
		if _, ok := sec.Data[r.Key]; !ok {
			return fmt.Sprintf("couldn't find key %s in Secret %s/%s", r.Key, ns, r.Name)
		}
	}
	return ""
}

func (k *kubelet) configMap(ns, name string) *corev1.ConfigMap {
	cm, _ := k.s.store.get(corev1.SchemeGroupVersion.WithKind("ConfigMap"), types.NamespacedName{Namespace: ns, Name: name}).(*corev1.ConfigMap)
	return cm
}

func (k *kubelet) secret(ns, name string) *corev1.Secret {
	sec, _ := k.s.store.get(corev1.SchemeGroupVersion.WithKind("Secret"), types.NamespacedName{Namespace: ns, Name: name}).(*corev1.Secret)
	return sec
}

func deref(b *bool) bool { return b != nil && *b }
