package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/lunadas/upgrade-operator/simulator"
)

func TestParseDeployment(t *testing.T) {
	d, err := parseDeployment(roleWorker, "", 3, "surge 1, unavailable 0, pods ready after 5s, a grace period of 20s and terminating in 20s")
	require.NoError(t, err)
	obj := d.object("ns")
	assert.Equal(t, "job-worker", obj.Name)
	assert.Equal(t, int32(3), *obj.Spec.Replicas)
	assert.Equal(t, int32(1), obj.Spec.Strategy.RollingUpdate.MaxSurge.IntVal)
	assert.Equal(t, int32(0), obj.Spec.Strategy.RollingUpdate.MaxUnavailable.IntVal)
	assert.Equal(t, int64(20), *obj.Spec.Template.Spec.TerminationGracePeriodSeconds)
	ann := obj.Spec.Template.Annotations
	assert.Equal(t, "5s", ann[simulator.AnnotationPodReadyDelay])
	assert.Equal(t, "20s", ann[simulator.AnnotationPodDeleteDelay])
	assert.Equal(t, "1s", ann[simulator.AnnotationPodCreateDelay], "kwok's default start delay, made explicit for the simulator")
	assert.Equal(t, "registry.example.com/job-worker:v1.0.0", obj.Spec.Template.Spec.Containers[0].Image)

	d, err = parseDeployment(roleAPI, "front", 2, `the Recreate strategy, containers "api" and "sidecar", the image "x/y:z", a progress deadline of 30s`)
	require.NoError(t, err)
	obj = d.object("ns")
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, obj.Spec.Strategy.Type)
	assert.Equal(t, "x/y:z", obj.Spec.Template.Spec.Containers[0].Image)
	assert.Equal(t, "sidecar", obj.Spec.Template.Spec.Containers[1].Name)
	assert.Equal(t, int32(30), *obj.Spec.ProgressDeadlineSeconds)

	_, err = parseDeployment(roleWorker, "", 1, "surge 1, pods that are slow")
	assert.ErrorContains(t, err, `cannot read "pods that are slow"`)
}

func TestUpgradeClauses(t *testing.T) {
	u := &upgradeSpec{workerRef: "w", workerImage: "w:2", workerContainer: "worker", apiRef: "a", apiImage: "a:2", apiContainer: "api"}
	require.NoError(t, u.applyClauses(`the worker image "w:3" and the API Deployment "front", no worker container name`))
	assert.Equal(t, "w:3", u.workerImage)
	assert.Equal(t, "front", u.apiRef)
	assert.Empty(t, u.workerContainer)
	assert.Error(t, u.applyClauses(`a better image`))
}

func TestAndTags(t *testing.T) {
	assert.Equal(t, "@real", AndTags("@real", ""))
	assert.Equal(t, "@real && @C13,@real && ~@C08", AndTags("@real", "@C13, ~@C08"))
}

func TestScenarioSeedAndRunPattern(t *testing.T) {
	assert.Equal(t, ScenarioSeed(1, "C01 x"), ScenarioSeed(1, "C01 x"))
	assert.NotEqual(t, ScenarioSeed(1, "C01 x"), ScenarioSeed(2, "C01 x"))
	assert.Equal(t, `^TestFeatures$/^C12_a,_b\.$`, RunPattern("TestFeatures", "C12 a, b."))
	assert.Equal(t, "c01-a-single-pod", Slug("C01 a single pod!"))
}
