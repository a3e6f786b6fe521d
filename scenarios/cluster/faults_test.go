package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/lunadas/upgrade-operator/scenarios/history"
)

func TestRejectWritesPerTarget(t *testing.T) {
	f := newFaults()
	f.RejectWrites(2)
	patch := &history.Op{Verb: "patch", Kind: "Deployment", Name: "w"}
	status := &history.Op{Verb: "patch", Kind: "ApplicationUpgrade", Name: "u", Sub: "status"}
	get := &history.Op{Verb: "get", Kind: "Deployment", Name: "w"}
	assert.NoError(t, f.Inject(get), "reads are never rejected")
	assert.True(t, apierrors.IsConflict(f.Inject(patch)))
	assert.True(t, apierrors.IsConflict(f.Inject(status)), "each target has its own count")
	assert.True(t, apierrors.IsConflict(f.Inject(patch)))
	assert.NoError(t, f.Inject(patch), "the third attempt goes through")
	assert.True(t, apierrors.IsConflict(f.Inject(status)))
	assert.NoError(t, f.Inject(status))

	f.stall(1, true)
	assert.True(t, apierrors.IsTimeout(f.Inject(&history.Op{Replica: 1, Verb: "get"})))
	assert.NoError(t, f.Inject(&history.Op{Replica: 0, Verb: "get"}))
}

func TestNamespaceForIsAValidName(t *testing.T) {
	for _, name := range []string{"C01 a single old worker pod uses its whole grace period, and more words than fit", "!!", "C12 the worker Deployment does not exist, then the spec is fixed"} {
		ns := namespaceFor(name, 42)
		assert.Empty(t, validation.IsDNS1123Label(ns), ns)
		assert.Equal(t, ns, namespaceFor(name, 42))
	}
}
