package release

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// KubeVersion is a Kubernetes version `vMAJOR.MINOR.PATCH`, e.g. v1.34.1.
// The zero value means "no version". KubeVersions are comparable with ==.
type KubeVersion struct {
	Major, Minor, Patch uint64
	set                 bool
}

// ParseKubeVersion parses `vMAJOR.MINOR.PATCH` (decimal, no leading zeros).
func ParseKubeVersion(s string) (KubeVersion, error) {
	rest, ok := strings.CutPrefix(s, "v")
	if !ok {
		return KubeVersion{}, fmt.Errorf("kubernetes version %q does not start with 'v' (want vMAJOR.MINOR.PATCH, e.g. v1.34.1): %w", s, ErrMalformed)
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return KubeVersion{}, fmt.Errorf("kubernetes version %q has %d dot-separated numbers, want 3 (vMAJOR.MINOR.PATCH, e.g. v1.34.1): %w", s, len(parts), ErrMalformed)
	}
	var n [3]uint64
	for i, p := range parts {
		if !isDigits(p) || (len(p) > 1 && p[0] == '0') {
			return KubeVersion{}, fmt.Errorf("kubernetes version %q has a part %q that is not a decimal number without leading zeros (e.g. v1.34.1): %w", s, p, ErrMalformed)
		}
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return KubeVersion{}, fmt.Errorf("kubernetes version %q has a part %q out of range: %w", s, p, ErrMalformed)
		}
		n[i] = v
	}
	return KubeVersion{Major: n[0], Minor: n[1], Patch: n[2], set: true}, nil
}

// MustParseKubeVersion is ParseKubeVersion for literals; it panics on error.
func MustParseKubeVersion(s string) KubeVersion {
	v, err := ParseKubeVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String is "vMAJOR.MINOR.PATCH", or "" for the zero version.
func (v KubeVersion) String() string {
	if !v.set {
		return ""
	}
	return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// IsZero reports whether v is the zero version ("no version").
func (v KubeVersion) IsZero() bool { return !v.set }

// Compare orders versions by major, minor, then patch: -1, 0 or +1.
func (v KubeVersion) Compare(o KubeVersion) int {
	if c := cmp.Compare(v.Major, o.Major); c != 0 {
		return c
	}
	if c := cmp.Compare(v.Minor, o.Minor); c != 0 {
		return c
	}
	return cmp.Compare(v.Patch, o.Patch)
}

// WithinOneMinor reports whether o is at most one minor version above v in
// the same major (v1.33.x → v1.34.y): the jump a duplex system takes in one step.
func (v KubeVersion) WithinOneMinor(o KubeVersion) bool {
	return v.Major == o.Major && o.Minor >= v.Minor && o.Minor-v.Minor <= 1
}

// JoinKubeVersions lists versions for messages: "v1.33.0, v1.34.1", or "none".
func JoinKubeVersions(vs []KubeVersion) string {
	if len(vs) == 0 {
		return "none"
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}
