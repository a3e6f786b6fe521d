// Package release models StarlingX product release ids, Kubernetes
// versions and the catalog of uploaded releases and versions the planner
// chooses from. It is pure: no clients, no clock.
package release

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMalformed marks a release id or Kubernetes version that does not parse.
var ErrMalformed = errors.New("malformed")

// productPrefix starts every product release id.
const productPrefix = "starlingx-"

// ID is a product release id `starlingx-MM.mm.P`: MM.mm is the major
// release (USM's sw_version), P the patch number (0 for the GA release).
// Each part is a decimal number of any length, compared numerically, so
// starlingx-13.01.10 > starlingx-13.01.9 and 13.01 == 13.1. The zero ID
// means "no release". Compare IDs with Compare or Equal, not ==.
type ID struct {
	raw                 string
	major, minor, patch string // digits without leading zeros ("0" for zero)
}

// ParseID parses `starlingx-MM.mm.P`.
func ParseID(s string) (ID, error) {
	rest, ok := strings.CutPrefix(s, productPrefix)
	if !ok {
		return ID{}, fmt.Errorf("release id %q does not start with %q (want starlingx-MM.mm.P, e.g. starlingx-13.01.0): %w", s, productPrefix, ErrMalformed)
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return ID{}, fmt.Errorf("release id %q has %d dot-separated numbers, want 3 (starlingx-MM.mm.P, e.g. starlingx-13.01.0): %w", s, len(parts), ErrMalformed)
	}
	for _, p := range parts {
		if !isDigits(p) {
			return ID{}, fmt.Errorf("release id %q has a part %q that is not a decimal number (want starlingx-MM.mm.P, e.g. starlingx-13.01.0): %w", s, p, ErrMalformed)
		}
	}
	return ID{raw: s, major: trimZeros(parts[0]), minor: trimZeros(parts[1]), patch: trimZeros(parts[2])}, nil
}

// MustParseID is ParseID for literals in tests and tables; it panics on error.
func MustParseID(s string) ID {
	id, err := ParseID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// String is the id as it was parsed, e.g. "starlingx-13.01.0".
func (id ID) String() string { return id.raw }

// IsZero reports whether id is the zero ID ("no release").
func (id ID) IsZero() bool { return id.raw == "" }

// Compare orders ids numerically by major, minor, then patch: -1, 0 or +1.
func (id ID) Compare(o ID) int {
	if c := compareDigits(id.major, o.major); c != 0 {
		return c
	}
	if c := compareDigits(id.minor, o.minor); c != 0 {
		return c
	}
	return compareDigits(id.patch, o.patch)
}

// Equal reports whether both ids name the same release (numerically).
func (id ID) Equal(o ID) bool { return id.Compare(o) == 0 }

// SameMajor reports whether both ids belong to the same major release MM.mm.
func (id ID) SameMajor(o ID) bool {
	return compareDigits(id.major, o.major) == 0 && compareDigits(id.minor, o.minor) == 0
}

// Major is the major release "MM.mm" as written in the id, e.g. "13.01".
func (id ID) Major() string {
	if id.IsZero() {
		return ""
	}
	rest := strings.TrimPrefix(id.raw, productPrefix)
	return rest[:strings.LastIndexByte(rest, '.')]
}

// IsGA reports whether id is the GA release of its major (patch 0).
func (id ID) IsGA() bool { return id.patch == "0" }

// GA is the GA release of id's major release, `starlingx-MM.mm.0`: the
// entry point of a major upgrade. The zero ID's GA is the zero ID.
func (id ID) GA() ID {
	if id.IsZero() {
		return ID{}
	}
	ga := productPrefix + id.Major() + ".0"
	return ID{raw: ga, major: id.major, minor: id.minor, patch: "0"}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func trimZeros(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return "0"
	}
	return t
}

// compareDigits compares two normalized decimal numbers of any length.
func compareDigits(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
