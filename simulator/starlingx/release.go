package starlingx

import (
	"fmt"
	"strconv"
	"strings"
)

// Release is one uploaded product release as USM reports it
// (software/release_data.py to_query_dict), plus FeedKubeVersions: the
// Kubernetes versions the release's ostree feed installs under
// /usr/local/kubernetes. The real system never serves that list over USM:
// deploy-precheck reads it from the feed (software/scripts/deploy-precheck
// _get_supported_k8s_versions) and sysinv lists it once the release runs
// (sysinv/common/kubernetes.py get_installed_kube_versions); the model
// uses it for exactly those two and nothing else.
type Release struct {
	ID                  string   // "starlingx-13.01.2"
	State               string   // Release* constants
	Component           string   // "" for product releases
	Status              string   // "REL" or "DEV"
	Unremovable         bool     // GA releases are unremovable
	Summary             string   // one line
	Description         string   // free text
	InstallInstructions string   // free text
	Warnings            string   // free text
	RebootRequired      bool     // hosts lock / reboot / unlock during the deploy
	PrepatchedISO       bool     // the ISO already carries the patches
	Requires            []string // release ids that must be deployed first
	Packages            []string // debian packages
	FeedKubeVersions    []string // the feed's /usr/local/kubernetes versions, "v1.33.0"; never served over USM
}

// SwVersion is USM's "sw_version" of the release: the three-part
// "MM.mm.P" (release_data.py sw_release, "3 sections MM.mm.pp").
func (r Release) SwVersion() string {
	id, err := parseReleaseID(r.ID)
	if err != nil {
		return ""
	}
	return id.full
}

func (r Release) clone() Release {
	r.Requires = append([]string(nil), r.Requires...)
	r.Packages = append([]string(nil), r.Packages...)
	r.FeedKubeVersions = append([]string(nil), r.FeedKubeVersions...)
	return r
}

func (r Release) supportsKube(v string) bool {
	for _, k := range r.FeedKubeVersions {
		if k == v {
			return true
		}
	}
	return false
}

// releaseID is a parsed "starlingx-MM.mm.P"; every part compares as a number.
type releaseID struct {
	major, minor, patch int
	majorStr            string // "MM.mm" as spelled
	full                string // "MM.mm.P" as spelled
}

func parseReleaseID(s string) (releaseID, error) {
	i := strings.LastIndex(s, "-")
	if i < 0 {
		return releaseID{}, fmt.Errorf("release id %q has no '<product>-' prefix: want e.g. starlingx-13.01.0", s)
	}
	ver := s[i+1:]
	parts := strings.Split(ver, ".")
	if len(parts) == 2 { // USM's GA form <component>-MM.mm (utils.py get_component_and_versions: pp defaults to 0)
		parts, ver = append(parts, "0"), ver+".0"
	}
	if len(parts) != 3 {
		return releaseID{}, fmt.Errorf("release id %q: want MM.mm[.pp] after the prefix", s)
	}
	var n [3]int
	for k, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return releaseID{}, fmt.Errorf("release id %q: part %q is not a number", s, p)
		}
		n[k] = v
	}
	return releaseID{major: n[0], minor: n[1], patch: n[2], majorStr: parts[0] + "." + parts[1], full: ver}, nil
}

// sameMajor reports whether a and b belong to the same major release.
func (a releaseID) sameMajor(b releaseID) bool { return a.major == b.major && a.minor == b.minor }

// compare orders release ids numerically: -1, 0 or 1.
func (a releaseID) compare(b releaseID) int {
	for _, d := range [3]int{a.major - b.major, a.minor - b.minor, a.patch - b.patch} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

// mustID parses an id the model already validated.
func mustID(s string) releaseID {
	id, err := parseReleaseID(s)
	if err != nil {
		panic(err)
	}
	return id
}
