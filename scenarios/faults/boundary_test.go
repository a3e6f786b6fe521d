package faults

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

func mustParse(t *testing.T, spec string) Fault {
	t.Helper()
	fs, err := ParseFaults(spec)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	return fs[0]
}

func TestBoundaryConflictPerTarget(t *testing.T) {
	b := NewBoundary(1, func() time.Duration { return 0 }, nil)
	require.NoError(t, b.Arm(mustParse(t, "conflict@1:n=2:per=target")))
	patch := &judge.Op{Verb: "patch", Kind: "Deployment", Name: "w"}
	status := &judge.Op{Verb: "patch", Kind: "ApplicationUpgrade", Name: "u", Sub: "status"}
	get := &judge.Op{Verb: "get", Kind: "Deployment", Name: "w"}
	assert.NoError(t, b.Inject(get), "reads are never rejected")
	assert.True(t, apierrors.IsConflict(b.Inject(patch)))
	assert.True(t, apierrors.IsConflict(b.Inject(status)), "each target has its own count")
	assert.True(t, apierrors.IsConflict(b.Inject(patch)))
	assert.NoError(t, b.Inject(patch), "the third attempt goes through")
	assert.True(t, apierrors.IsConflict(b.Inject(status)))
	assert.NoError(t, b.Inject(status))

	b.Stall(1, true)
	assert.True(t, apierrors.IsTimeout(b.Inject(&judge.Op{Replica: 1, Verb: "get"})))
	assert.NoError(t, b.Inject(&judge.Op{Replica: 0, Verb: "get"}))
}

func TestBoundaryWindowCountsFromArming(t *testing.T) {
	b := NewBoundary(1, func() time.Duration { return 0 }, nil)
	get := &judge.Op{Verb: "get", Kind: "Deployment", Name: "w"}
	for range 3 {
		assert.NoError(t, b.Inject(get))
	}
	require.NoError(t, b.Arm(mustParse(t, "unavailable@2:n=2")))
	assert.NoError(t, b.Inject(get), "the first call after arming passes")
	assert.True(t, apierrors.IsServiceUnavailable(b.Inject(get)))
	assert.True(t, apierrors.IsServiceUnavailable(b.Inject(get)))
	assert.NoError(t, b.Inject(get), "the window is closed after n calls")
	assert.Len(t, b.Fired(), 1)
	assert.Error(t, b.Arm(mustParse(t, "crash@1")), "no kill hook: refused")
	assert.Error(t, b.Arm(mustParse(t, "node-lost@1s")), "not a boundary fault")
}

func TestBoundaryRandomKillsAreSeeded(t *testing.T) {
	kills := func(seed int64) []int {
		var at []int
		n := 0
		b := NewBoundary(seed, func() time.Duration { return 0 }, func(int, Fault) bool { at = append(at, n); return true })
		require.NoError(t, b.Arm(mustParse(t, "crash@1:p=20")))
		for n = range 200 {
			err := b.Inject(&judge.Op{Verb: "get"})
			assert.Equal(t, len(at) > 0 && at[len(at)-1] == n, err != nil)
		}
		return at
	}
	first := kills(7)
	assert.Equal(t, first, kills(7), "the same seed kills at the same calls")
	assert.InDelta(t, 40, len(first), 20, "about p%% of the calls")
}
