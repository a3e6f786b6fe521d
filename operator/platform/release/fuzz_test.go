package release

import (
	"testing"
)

// FuzzParseID: parsing never panics; whatever parses prints back unchanged,
// reparses to an equal id, and its order is consistent.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"starlingx-13.01.0", "starlingx-27.03.300", "starlingx-0.0.0", "starlingx-.1.", "starlingx-1.2.3.4", "", "starlingx-", "starlingx-00.00.000"} {
		f.Add(s, "starlingx-13.01.2")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		x, err := ParseID(a)
		if err != nil {
			return
		}
		if x.String() != a {
			t.Fatalf("ParseID(%q).String() = %q", a, x.String())
		}
		if !MustParseID(a).Equal(x) || x.Compare(x) != 0 {
			t.Fatalf("%q is not equal to itself", a)
		}
		_ = x.Major()
		if g := x.GA(); !g.IsGA() || !g.SameMajor(x) || g.Compare(x) > 0 {
			t.Fatalf("GA of %q is %q", a, g)
		}
		y, err := ParseID(b)
		if err != nil {
			return
		}
		if x.Compare(y) != -y.Compare(x) {
			t.Fatalf("Compare(%q, %q) is not antisymmetric", a, b)
		}
	})
}

// FuzzParseKubeVersion: parsing never panics and round-trips.
func FuzzParseKubeVersion(f *testing.F) {
	for _, s := range []string{"v1.34.1", "v0.0.0", "v1.34", "1.34.1", "v18446744073709551615.0.0", "v18446744073709551616.0.0", "v01.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseKubeVersion(s)
		if err != nil {
			return
		}
		if v.String() != s {
			t.Fatalf("ParseKubeVersion(%q).String() = %q", s, v.String())
		}
	})
}

// FuzzParseComposite: parsing never panics and round-trips.
func FuzzParseComposite(f *testing.F) {
	for _, s := range []string{"starlingx-13.01.2 / v1.33.0", " / ", "starlingx-13.01.2 / ", "a / b / c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseComposite(s)
		if err != nil {
			return
		}
		if c.String() != s {
			t.Fatalf("ParseComposite(%q).String() = %q", s, c.String())
		}
	})
}
