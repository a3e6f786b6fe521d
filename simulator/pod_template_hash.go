package simulator

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
)

// podTemplateHash is the pod-template-hash of a Deployment's template:
// FNV-32a over the template (plus collisionCount), as decimal digits mapped
// to the safe alphabet (controller.ComputeHash). It hashes the template's
// JSON where the real one hashes a spew dump, so the values differ from a
// real cluster's but are just as stable.
func podTemplateHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	data, err := json.Marshal(t)
	if err != nil {
		panic(fmt.Sprintf("simulator: encode pod template: %v", err)) // typed structs always encode
	}
	_, _ = h.Write(data)
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		_, _ = h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// replicaSetName is "<deployment>-<hash>", the Deployment name truncated so
// the result is a valid name (generateReplicaSetName).
func replicaSetName(deployment, hash string) string {
	maxLen := validation.DNS1123SubdomainMaxLength - 1 - len(hash)
	if len(deployment) > maxLen && maxLen > 0 {
		deployment = deployment[:maxLen]
	}
	return deployment + "-" + hash
}

// PodTemplateHash is the simulator's pod-template-hash of template at
// collisionCount, the label its Deployment controller model gives the
// ReplicaSet and pods of that template (see podTemplateHash): what an event
// log recorder of a simulated cluster computes for a Deployment write.
func PodTemplateHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	return podTemplateHash(template, collisionCount)
}
