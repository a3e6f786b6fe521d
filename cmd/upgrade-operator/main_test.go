package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestConfigNotThrottled: --kubeconfig gets no client-side rate limit,
// like the in-cluster config (client-go's default would be 5 requests/s).
func TestRestConfigNotThrottled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600))
	cfg, err := restConfig(path)
	require.NoError(t, err)
	assert.Equal(t, float32(-1), cfg.QPS)
}
