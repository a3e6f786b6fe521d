package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The remembered conversion answers as metav1.LabelSelectorAsSelector,
// also when the selector at a remembered address has changed since, and
// invalid selectors are refused every time.
func TestLabelSelectorMemoAnswersAsTheConversion(t *testing.T) {
	ls := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	check := func() {
		t.Helper()
		want, werr := metav1.LabelSelectorAsSelector(ls)
		for range 2 {
			got, err := labelSelectorAsSelector(ls)
			if werr != nil {
				require.Error(t, err)
				assert.Equal(t, werr.Error(), err.Error())
				continue
			}
			require.NoError(t, err)
			assert.Equal(t, want.String(), got.String())
		}
	}
	check()
	web := labels.Set{"app": "web"}
	sel, err := labelSelectorAsSelector(ls)
	require.NoError(t, err)
	assert.True(t, sel.Matches(web))

	ls.MatchLabels["app"] = "db" // the same address, another selector
	check()
	sel, err = labelSelectorAsSelector(ls)
	require.NoError(t, err)
	assert.False(t, sel.Matches(web), "a changed selector is converted afresh")

	ls.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}
	check()
	ls.MatchExpressions[0].Values[1] = "c"
	check()
	ls.MatchExpressions[0].Operator = "Bogus"
	check()
	ls.MatchExpressions = nil
	ls.MatchLabels["bad key!"] = "x"
	check()

	got, err := labelSelectorAsSelector(nil)
	require.NoError(t, err)
	assert.False(t, got.Matches(web), "a nil selector matches nothing, as the conversion says")

	for range maxSelectorMemo + 5 {
		_, err := labelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, len(selectorMemo.m), maxSelectorMemo)
}
