package starlingx

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// KubeVersion is one Kubernetes version the platform knows, as sysinv's
// /v1/kube_versions/{version} reports it (api/controllers/v1/kube_version.py).
// State and Target are derived from what the hosts run (KubeVersionView).
type KubeVersion struct {
	Version          string   // "v1.34.1"
	UpgradeFrom      []string // versions that may upgrade to this one
	DowngradeTo      []string // versions this one may downgrade to
	AppliedPatches   []string // releases that must be deployed before upgrading to it
	AvailablePatches []string // releases that must be available before upgrading to it
}

func (k KubeVersion) clone() KubeVersion {
	k.UpgradeFrom = append([]string(nil), k.UpgradeFrom...)
	k.DowngradeTo = append([]string(nil), k.DowngradeTo...)
	k.AppliedPatches = append([]string(nil), k.AppliedPatches...)
	k.AvailablePatches = append([]string(nil), k.AvailablePatches...)
	return k
}

// KubeVersionView is a KubeVersion with sysinv's dynamic fields.
type KubeVersionView struct {
	KubeVersion
	State  string // KubeActive / KubeAvailable / KubePartial / KubeUnavailable
	Target bool   // the version being upgraded to, or the active one when no upgrade runs
}

// kubeVer is a parsed "vMAJOR.MINOR.PATCH".
type kubeVer struct{ major, minor, patch int }

func parseKubeVersion(s string) (kubeVer, error) {
	if !strings.HasPrefix(s, "v") {
		return kubeVer{}, fmt.Errorf("kubernetes version %q must start with 'v', e.g. v1.34.1", s)
	}
	parts := strings.Split(s[1:], ".")
	if len(parts) != 3 {
		return kubeVer{}, fmt.Errorf("kubernetes version %q: want vMAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return kubeVer{}, fmt.Errorf("kubernetes version %q: part %q is not a number", s, p)
		}
		n[i] = v
	}
	return kubeVer{n[0], n[1], n[2]}, nil
}

func (a kubeVer) less(b kubeVer) bool {
	if a.major != b.major {
		return a.major < b.major
	}
	if a.minor != b.minor {
		return a.minor < b.minor
	}
	return a.patch < b.patch
}

// kubeLess orders two well-formed version strings; malformed ones sort first.
func kubeLess(a, b string) bool {
	va, errA := parseKubeVersion(a)
	vb, errB := parseKubeVersion(b)
	if errA != nil || errB != nil {
		return errA != nil && errB == nil
	}
	return va.less(vb)
}

func sortKube(vs []string) { sort.Slice(vs, func(i, j int) bool { return kubeLess(vs[i], vs[j]) }) }

// kubeVersionStates derives each known version's state the way sysinv's
// KubeOperator.kube_get_version_states does: a version running on some
// control plane or kubelet is "partial"; when exactly one version runs it is
// "active", and versions newer than it or listing it in upgrade_from are
// "available"; every other version is "unavailable".
func kubeVersionStates(known []KubeVersion, running map[string]int) map[string]string {
	states := map[string]string{}
	var candidates []string
	for _, k := range known {
		if running[k.Version] > 0 {
			states[k.Version] = KubePartial
			candidates = append(candidates, k.Version)
		} else {
			states[k.Version] = KubeUnavailable
		}
	}
	if len(candidates) != 1 {
		return states
	}
	active := candidates[0]
	states[active] = KubeActive
	for _, k := range known {
		if k.Version == active {
			continue
		}
		if contains(k.UpgradeFrom, active) || kubeLess(active, k.Version) {
			states[k.Version] = KubeAvailable
		}
	}
	return states
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
