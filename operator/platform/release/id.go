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

// ProductComponent is the component of product (platform) releases: USM
// ids of the platform are `starlingx-MM.mm[.pp]`; other components exist.
const ProductComponent = "starlingx"

// idFormat is the form of a release id, for messages.
const idFormat = "<component>-MM.mm[.pp], e.g. starlingx-13.01.0 or starlingx-27.03"

// ID is a USM release id `<component>-MM.mm[.pp]`, parsed as USM parses it
// (starlingx/update software/software/utils.py get_component_and_versions:
// `(([a-zA-Z]+)-)?(\d+)\.(\d+)(?:\.(\d+))?`): an optional component of
// letters, the major release MM.mm (USM's sw_version) and the patch number
// pp, 0 when absent (the GA id may be written `starlingx-27.03`). Each part
// is a decimal number of any length, compared numerically, so
// starlingx-13.01.10 > starlingx-13.01.9 and 13.01 == 13.1. Unlike USM's
// re.match, nothing may follow the id. The zero ID means "no release".
// Compare IDs with Compare or Equal, not ==.
type ID struct {
	raw                 string
	component           string
	major, minor, patch string // digits without leading zeros ("0" for zero)
}

// ParseID parses `<component>-MM.mm[.pp]` (any component, or none).
func ParseID(s string) (ID, error) {
	rest := s
	var component string
	if i := strings.IndexByte(s, '-'); i >= 0 {
		component, rest = s[:i], s[i+1:]
		if !isLetters(component) {
			return ID{}, fmt.Errorf("release id %q has a component %q that is not letters only (want %s): %w", s, component, idFormat, ErrMalformed)
		}
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 2 && len(parts) != 3 {
		return ID{}, fmt.Errorf("release id %q has %d dot-separated numbers, want 2 or 3 (%s): %w", s, len(parts), idFormat, ErrMalformed)
	}
	for _, p := range parts {
		if !isDigits(p) {
			return ID{}, fmt.Errorf("release id %q has a part %q that is not a decimal number (want %s): %w", s, p, idFormat, ErrMalformed)
		}
	}
	id := ID{raw: s, component: component, major: trimZeros(parts[0]), minor: trimZeros(parts[1]), patch: "0"}
	if len(parts) == 3 {
		id.patch = trimZeros(parts[2])
	}
	return id, nil
}

// ParseProductID parses a product release id: ParseID with the component
// `starlingx` (ProductComponent).
func ParseProductID(s string) (ID, error) {
	id, err := ParseID(s)
	if err != nil {
		return id, err
	}
	if id.component != ProductComponent {
		return ID{}, fmt.Errorf("release id %q is not a product release (its component is %q, want %q: starlingx-MM.mm[.pp], e.g. starlingx-13.01.0): %w", s, id.component, ProductComponent, ErrNotProduct)
	}
	return id, nil
}

// ErrNotProduct marks a well-formed release id of another component.
var ErrNotProduct = errors.New("not a product release")

// Component is the id's component ("starlingx"; "" when the id has none).
func (id ID) Component() string { return id.component }

// MustParseID is ParseProductID for literals in tests and tables; it
// panics on error.
func MustParseID(s string) ID {
	id, err := ParseProductID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// String is the id as it was parsed, e.g. "starlingx-13.01.0".
func (id ID) String() string { return id.raw }

// IsZero reports whether id is the zero ID ("no release").
func (id ID) IsZero() bool { return id.raw == "" }

// Compare orders ids by component, then numerically by major, minor and
// patch: -1, 0 or +1.
func (id ID) Compare(o ID) int {
	if c := strings.Compare(id.component, o.component); c != 0 {
		return c
	}
	if c := compareDigits(id.major, o.major); c != 0 {
		return c
	}
	if c := compareDigits(id.minor, o.minor); c != 0 {
		return c
	}
	return compareDigits(id.patch, o.patch)
}

// Equal reports whether both ids name the same release: same component,
// numerically equal versions (starlingx-27.03 equals starlingx-27.03.0).
func (id ID) Equal(o ID) bool { return id.Compare(o) == 0 }

// SameMajor reports whether both ids belong to the same major release MM.mm.
func (id ID) SameMajor(o ID) bool {
	return id.component == o.component && compareDigits(id.major, o.major) == 0 && compareDigits(id.minor, o.minor) == 0
}

// Major is the major release "MM.mm" as written in the id, e.g. "13.01".
func (id ID) Major() string {
	if id.IsZero() {
		return ""
	}
	rest := id.raw
	if id.component != "" {
		rest = rest[len(id.component)+1:]
	}
	parts := strings.Split(rest, ".")
	return parts[0] + "." + parts[1]
}

// IsGA reports whether id is the GA release of its major (patch 0).
func (id ID) IsGA() bool { return id.patch == "0" }

// GA is the GA release of id's major release, `<component>-MM.mm.0`: the
// entry point of a major upgrade. USM may name it `<component>-MM.mm`;
// both are Equal, so look the GA up in the catalog and use the catalog's
// id on the wire. The zero ID's GA is the zero ID.
func (id ID) GA() ID {
	if id.IsZero() {
		return ID{}
	}
	ga := id.Major() + ".0"
	if id.component != "" {
		ga = id.component + "-" + ga
	}
	return ID{raw: ga, component: id.component, major: id.major, minor: id.minor, patch: "0"}
}

func isLetters(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
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
