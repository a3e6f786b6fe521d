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

// CredentialsFromSecret fills Credentials from a Secret's data (openrc
// keys above; OS_AUTH_URL, OS_USERNAME and OS_PASSWORD are required). The
// error names missing keys, never values.
func CredentialsFromSecret(data map[string][]byte) (Credentials, error) {
	get := func(k string) string { return strings.TrimSpace(string(data[k])) }
	var missing []string
	for _, k := range []string{KeyAuthURL, KeyUsername, KeyPassword} {
		if get(k) == "" {
			missing = append(missing, k)
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
