package manager

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCredentialsFromMountedSecret reads the openrc variables the way the
// Helm chart provides them: a mounted Secret, one file per key, with the
// kubelet's hidden ..data entries beside them.
func TestCredentialsFromMountedSecret(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{"OS_AUTH_URL": "https://keystone:5000/v3", "OS_USERNAME": "admin", "OS_PASSWORD": "s3cret"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "..data"), 0o700))
	data, source, err := credentialData(context.Background(), nil, PlatformOptions{CredentialsDir: dir})
	require.NoError(t, err)
	assert.Equal(t, "admin", string(data["OS_USERNAME"]))
	assert.Len(t, data, 3)
	assert.Contains(t, source, dir)

	_, _, err = credentialData(context.Background(), nil, PlatformOptions{CredentialsDir: filepath.Join(dir, "missing")})
	assert.ErrorContains(t, err, "read the Keystone credentials directory")
	_, _, err = credentialData(context.Background(), nil, PlatformOptions{})
	assert.ErrorContains(t, err, "set --starlingx-credentials-dir")
}
