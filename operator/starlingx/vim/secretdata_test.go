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

// A Secret written with the old documentation's keys is refused with a
// line naming the openrc variables; other openrc variables are ignored.
func TestCredentialsFromSecretRefusesNonOpenrcKeys(t *testing.T) {
	_, err := CredentialsFromSecret(map[string][]byte{"username": []byte("admin"), "password": []byte("St8rlingX*")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "key password, username is not an openrc variable")
	assert.Contains(t, err.Error(), "OS_AUTH_URL, OS_USERNAME, OS_PASSWORD")
	assert.NotContains(t, err.Error(), "St8rlingX*")

	_, err = CredentialsFromSecret(map[string][]byte{KeyAuthURL: []byte("http://k:5000"), KeyUsername: []byte("admin"),
		KeyPassword: []byte("p"), "OS_IDENTITY_API_VERSION": []byte("3")})
	require.NoError(t, err)
}

// The defaults SecretKeys documents are the ones Config applies.
func TestSecretKeysDefaultsAreConfigs(t *testing.T) {
	cfg := Config{Credentials: Credentials{AuthURL: "http://k:5000", Username: "u", Password: "p"}}
	require.NoError(t, cfg.defaults())
	got := map[string]string{KeyProjectName: cfg.Credentials.ProjectName, KeyUserDomainName: cfg.Credentials.UserDomainName,
		KeyProjectDomainName: cfg.Credentials.ProjectDomainName, KeyRegionName: cfg.Credentials.RegionName, KeyInterface: cfg.Credentials.Interface}
	for _, k := range SecretKeys {
		if k.Required {
			assert.Empty(t, k.Default, k.Name)
			continue
		}
		assert.Equal(t, got[k.Name], k.Default, k.Name)
	}
}
