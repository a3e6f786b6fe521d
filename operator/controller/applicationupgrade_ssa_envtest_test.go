//go:build envtest

package controller

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

// TestEnvtestImageWriteOwnsOnlyTheImageField: on a real kube-apiserver, the
// worker's image write leaves a managedFields entry of manager
// upgrade-operator, operation Apply, owning exactly
// spec.template.spec.containers[name=worker].image (plus the list item's
// key, which every applier of an item co-owns) — what
// `kubectl get deploy -o yaml --show-managed-fields` shows. The sidecar,
// the selector and the replicas stay with the creator.
func TestEnvtestImageWriteOwnsOnlyTheImageField(t *testing.T) {
	w := newEnvWorld(t)
	w.createDeployment("job-worker", 1, "worker", workerV1, "sidecar", "registry.example.com/sidecar:v1")
	w.createDeployment("job-api", 1, "api", apiV1)
	w.rollOut("job-worker", false)
	w.rollOut("job-api", false)
	w.createUpgrade("upgrade-v2", workerV2, apiV2, nil)
	w.reconcileUntil("upgrade-v2", v1.PhaseWaitingForWorkers, 5)

	d := w.deployment("job-worker")
	require.Equal(t, workerV2, imageOf(d, "worker"))
	assert.Equal(t, "registry.example.com/sidecar:v1", imageOf(d, "sidecar"))
	var mine []metav1.ManagedFieldsEntry
	for _, e := range d.ManagedFields {
		if e.Manager == FieldManager {
			mine = append(mine, e)
		}
	}
	require.Len(t, mine, 1, "managedFields: %+v", d.ManagedFields)
	assert.Equal(t, metav1.ManagedFieldsOperationApply, mine[0].Operation)
	var got, want any
	require.NoError(t, json.Unmarshal(mine[0].FieldsV1.Raw, &got))
	require.NoError(t, json.Unmarshal([]byte(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"worker\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`), &want))
	assert.Equal(t, want, got, "upgrade-operator owns only the worker container's image")
	for _, e := range d.ManagedFields {
		if e.Manager != FieldManager && e.Subresource == "" {
			assert.NotContains(t, string(e.FieldsV1.Raw), `"k:{\"name\":\"worker\"}":{".":{},"f:image"`, "manager %s still owns the image", e.Manager)
		}
	}
	t.Logf("managedFields of %s after the write: %s", client.ObjectKeyFromObject(d), managedFieldsYAML(d))
}

func managedFieldsYAML(d *appsv1.Deployment) string {
	out, _ := json.Marshal(d.ManagedFields)
	return string(out)
}
