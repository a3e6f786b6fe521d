package vim

import (
	"fmt"
	"sort"
	"strings"
)

// Secret keys CredentialsFromSecret reads: the variables of StarlingX's
// /etc/platform/openrc, as a Secret's data keys.
const (
	KeyAuthURL           = "OS_AUTH_URL"
	KeyUsername          = "OS_USERNAME"
	KeyPassword          = "OS_PASSWORD"
	KeyProjectName       = "OS_PROJECT_NAME"
	KeyUserDomainName    = "OS_USER_DOMAIN_NAME"
	KeyProjectDomainName = "OS_PROJECT_DOMAIN_NAME"
	KeyRegionName        = "OS_REGION_NAME"
	KeyInterface         = "OS_INTERFACE"
)

// SecretKey describes one key of the Keystone credentials Secret.
type SecretKey struct {
	Name     string // the openrc variable, e.g. "OS_AUTH_URL"
	Required bool
	Default  string // used when the key is absent ("" for required keys)
}

// SecretKeys is the one list of the credentials Secret's keys, required
// first: the chart's values.yaml, docs/README.md ("Platform credentials")
// and CredentialsFromSecret agree with it (tests in this package and in
// deploy/ check the two documents against it). Defaults are Config's.
var SecretKeys = []SecretKey{
	{Name: KeyAuthURL, Required: true},
	{Name: KeyUsername, Required: true},
	{Name: KeyPassword, Required: true},
	{Name: KeyProjectName, Default: "admin"},
	{Name: KeyUserDomainName, Default: "Default"},
	{Name: KeyProjectDomainName, Default: "Default"},
	{Name: KeyRegionName, Default: "RegionOne"},
	{Name: KeyInterface, Default: "internal"},
}

// CredentialsFromSecret fills Credentials from a Secret's data (openrc
// keys above; OS_AUTH_URL, OS_USERNAME and OS_PASSWORD are required).
// Other OS_* variables of an openrc file (OS_IDENTITY_API_VERSION, ...) are
// ignored; a key that is not an openrc variable (e.g. "username") is
// refused, naming the openrc variable to use instead. The error names
// keys, never values.
func CredentialsFromSecret(data map[string][]byte) (Credentials, error) {
	get := func(k string) string { return strings.TrimSpace(string(data[k])) }
	var unknown []string
	for k := range data {
		if !strings.HasPrefix(k, "OS_") {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Credentials{}, fmt.Errorf("keystone credentials secret: key %s is not an openrc variable: name the keys %s",
			strings.Join(unknown, ", "), secretKeyNames())
	}
	var missing []string
	for _, k := range SecretKeys {
		if k.Required && get(k.Name) == "" {
			missing = append(missing, k.Name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return Credentials{}, fmt.Errorf("keystone credentials secret: missing %s; add them to the Secret (the openrc variables)", strings.Join(missing, ", "))
	}
	return Credentials{
		AuthURL: get(KeyAuthURL), Username: get(KeyUsername), Password: Secret(get(KeyPassword)),
		ProjectName: get(KeyProjectName), UserDomainName: get(KeyUserDomainName), ProjectDomainName: get(KeyProjectDomainName),
		RegionName: get(KeyRegionName), Interface: get(KeyInterface),
	}, nil
}

func secretKeyNames() string {
	names := make([]string, len(SecretKeys))
	for i, k := range SecretKeys {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}
