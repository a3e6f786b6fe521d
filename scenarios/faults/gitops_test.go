package faults

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGitopsRevert: a Flux-like actor re-applies the old worker image with
// force every 10 s. Without the documented ignore, the operator reports it
// (Warning ImageReverted naming kustomize-controller), never writes the
// image again and is not Completed while the revert lasts (the actor's
// check), and completes once Git carries the target image. With ignore
// (Git does not set the image) the upgrade completes as undisturbed, each
// image written once.
func TestGitopsRevert(t *testing.T) {
	base, _, _ := run(t, 1, "demo", "none")

	o, tr, ev := run(t, 1, "demo", "gitops-revert@5s")
	requireOK(t, o, tr)
	assert.Equal(t, ExpectCompleted, o.ExpectedState())
	assert.Contains(t, tr, "ImageReverted")
	assert.Contains(t, tr, "reverted by kustomize-controller to registry.example.com/job-worker:v1.0.0")
	assert.Len(t, o.Writes, 2, "the worker and the API written once each, no write fight: %v", o.Writes)
	assert.Greater(t, o.Result.Upgrades[0].Status.PhaseStartTime.Sub(base.Result.Upgrades[0].Status.PhaseStartTime.Time).Seconds(), 50.0,
		"Completed only after Git stopped reverting (60 s window)")
	assert.NotEmpty(t, ev)
	assert.Contains(t, tr, "Git fixed: kustomize-controller applied deployment job-system/job-worker with the target image registry.example.com/job-worker:v2.0.0 once more and stops")

	o, tr, _ = run(t, 1, "demo", "gitops-revert@5s:ignore=true:for=30s") // ends before the upgrade does
	requireOK(t, o, tr)
	assert.Len(t, o.Writes, 2, "each image written once: %v", o.Writes)
	assert.False(t, strings.Contains(tr, "ImageReverted"), "nothing reverted with the documented layout")
	assert.Contains(t, tr, "kustomize-controller stops re-applying deployment job-system/job-worker (its manifest never set the image)")
	assert.Equal(t, base.Result.Upgrades[0].Status.PhaseStartTime, o.Result.Upgrades[0].Status.PhaseStartTime, "completes as undisturbed")
}
