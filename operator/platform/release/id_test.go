package release

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseID: ids as USM parses them (starlingx/update
// software/software/utils.py get_component_and_versions), anchored; product
// ids are those of the starlingx component.
func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in         string
		ok         bool // ParseID
		product    bool // ParseProductID
		component  string
		major      string
		ga         bool
		notProduct bool
	}{
		{in: "starlingx-13.01.0", ok: true, product: true, component: "starlingx", major: "13.01", ga: true},
		{in: "starlingx-27.03.300", ok: true, product: true, component: "starlingx", major: "27.03"},
		{in: "starlingx-24.09.123456789012345678901234567890", ok: true, product: true, component: "starlingx", major: "24.09"},
		{in: "starlingx-13.01", ok: true, product: true, component: "starlingx", major: "13.01", ga: true},
		{in: "stx-13.01.0", ok: true, component: "stx", major: "13.01", ga: true, notProduct: true},
		{in: "STARLINGX-13.01.0", ok: true, component: "STARLINGX", major: "13.01", ga: true, notProduct: true},
		{in: "13.01.2", ok: true, major: "13.01", notProduct: true},
		{in: "starlingx-13.01.0.1"},
		{in: "starlingx-13..0"},
		{in: "starlingx-13.01.-1"},
		{in: "starlingx-13.01.x"},
		{in: "star-lingx-13.01.0"},
		{in: "stx2-13.01.0"},
		{in: "starlingx-13"},
		{in: ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			id, err := ParseID(tc.in)
			if !tc.ok {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrMalformed), "error %v should wrap ErrMalformed", err)
				assert.Contains(t, err.Error(), "<component>-MM.mm[.pp]")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.in, id.String())
			assert.Equal(t, tc.component, id.Component())
			assert.Equal(t, tc.major, id.Major())
			assert.Equal(t, tc.ga, id.IsGA())
			_, err = ParseProductID(tc.in)
			if tc.notProduct {
				assert.ErrorIs(t, err, ErrNotProduct)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	assert.True(t, MustParseID("starlingx-27.03").Equal(MustParseID("starlingx-27.03.0")), "a GA id without the patch part equals .0")
	assert.Equal(t, "starlingx-27.03.0", MustParseID("starlingx-27.03.2").GA().String())
}

func TestIDCompareIsNumeric(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"starlingx-13.01.9", "starlingx-13.01.10", -1},
		{"starlingx-13.01.100", "starlingx-13.01.99", 1},
		{"starlingx-13.01.0", "starlingx-13.1.0", 0},
		{"starlingx-9.09.5", "starlingx-13.01.0", -1},
		{"starlingx-13.10.0", "starlingx-13.9.300", 1},
		{"starlingx-27.03.0", "starlingx-13.01.300", 1},
		{"starlingx-13.01.0010", "starlingx-13.01.9", 1},
	} {
		t.Run(tc.a+"_vs_"+tc.b, func(t *testing.T) {
			a, b := MustParseID(tc.a), MustParseID(tc.b)
			assert.Equal(t, tc.want, a.Compare(b))
			assert.Equal(t, -tc.want, b.Compare(a))
		})
	}
}

func TestIDMajor(t *testing.T) {
	a := MustParseID("starlingx-13.01.4")
	assert.True(t, a.SameMajor(MustParseID("starlingx-13.1.0")))
	assert.False(t, a.SameMajor(MustParseID("starlingx-13.02.4")))
	assert.Equal(t, "starlingx-13.01.0", a.GA().String())
	assert.True(t, a.GA().Equal(MustParseID("starlingx-13.01.0")))
	assert.True(t, ID{}.GA().IsZero())
	assert.Equal(t, "", ID{}.Major())
}

func TestParseKubeVersion(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"v1.34.1", true}, {"v1.0.0", true}, {"v10.200.3000", true},
		{"1.34.1", false}, {"v1.34", false}, {"v1.34.1-rc.0", false},
		{"v1.034.1", false}, {"v1.34.99999999999999999999", false}, {"", false}, {"v", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v, err := ParseKubeVersion(tc.in)
			if !tc.ok {
				require.ErrorIs(t, err, ErrMalformed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.in, v.String())
		})
	}
}

func TestKubeVersionOrder(t *testing.T) {
	v := MustParseKubeVersion
	assert.Equal(t, -1, v("v1.9.0").Compare(v("v1.10.0")))
	assert.Equal(t, 1, v("v1.34.10").Compare(v("v1.34.9")))
	assert.True(t, v("v1.33.0").WithinOneMinor(v("v1.34.5")))
	assert.True(t, v("v1.33.0").WithinOneMinor(v("v1.33.5")))
	assert.False(t, v("v1.33.0").WithinOneMinor(v("v1.35.0")))
	assert.False(t, v("v1.33.0").WithinOneMinor(v("v2.33.0")))
	assert.Equal(t, "v1.33.0, v1.34.1", JoinKubeVersions([]KubeVersion{v("v1.33.0"), v("v1.34.1")}))
	assert.Equal(t, "none", JoinKubeVersions(nil))
}

func TestComposite(t *testing.T) {
	c, err := ParseComposite("starlingx-13.01.2 / v1.33.0")
	require.NoError(t, err)
	assert.Equal(t, "starlingx-13.01.2 / v1.33.0", c.String())
	assert.True(t, c.Equal(Composite{Platform: MustParseID("starlingx-13.1.2"), Kubernetes: MustParseKubeVersion("v1.33.0")}))

	for _, bad := range []string{"", "starlingx-13.01.2", "starlingx-13.01.2/v1.33.0", "x / v1.33.0", "starlingx-13.01.2 / 1.33"} {
		_, err := ParseComposite(bad)
		assert.ErrorIs(t, err, ErrMalformed, bad)
	}

	s, err := ParseSpec("starlingx-27.03.0", "")
	require.NoError(t, err)
	assert.True(t, s.Kubernetes.IsZero())
	assert.Equal(t, "starlingx-27.03.0", s.String())
	_, err = ParseSpec("starlingx-27.03.0", "v1")
	assert.ErrorIs(t, err, ErrMalformed)
}
