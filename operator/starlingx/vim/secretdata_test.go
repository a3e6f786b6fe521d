package vim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCredentialsFromSecret(t *testing.T) {
	c, err := CredentialsFromSecret(map[string][]byte{
		KeyAuthURL: []byte("http://192.168.204.2:5000/v3\n"), KeyUsername: []byte("admin"), KeyPassword: []byte("St8rlingX*"),
		KeyProjectName: []byte("admin"), KeyRegionName: []byte("RegionOne"), KeyInterface: []byte("internal"),
	})
	require.NoError(t, err)
	assert.Equal(t, "http://192.168.204.2:5000/v3", c.AuthURL)
	assert.Equal(t, "St8rlingX*", c.Password.reveal())
	assert.Equal(t, "internal", c.Interface)

	_, err = CredentialsFromSecret(map[string][]byte{KeyUsername: []byte("admin"), KeyPassword: []byte("St8rlingX*")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing OS_AUTH_URL")
	assert.NotContains(t, err.Error(), "St8rlingX*")
}
