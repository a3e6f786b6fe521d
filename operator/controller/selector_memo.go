package controller

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// maxSelectorMemo bounds selectorMemo; when full it is emptied and refilled.
const maxSelectorMemo = 1024

// selectorMemo remembers metav1.LabelSelectorAsSelector's answers: every
// reconcile turns the same Deployment's selector into a labels.Selector
// again, and the conversion validates each key and value with regular
// expressions (about 2 % of the simulator's CPU). Entries are found by the
// selector's address (the cached Deployment's, read shared) and used only
// when the remembered copy is equal to the selector now, so a changed or
// reused address converts afresh. A labels.Selector is not changed by its
// users (Add returns a new one), so one answer serves every caller.
var selectorMemo = struct {
	mu sync.Mutex
	m  map[*metav1.LabelSelector]memoSelector
}{}

type memoSelector struct {
	src *metav1.LabelSelector // a deep copy of the selector converted
	sel labels.Selector
}

// labelSelectorAsSelector is metav1.LabelSelectorAsSelector with its valid
// answers remembered (errors are not).
func labelSelectorAsSelector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return metav1.LabelSelectorAsSelector(ls)
	}
	selectorMemo.mu.Lock()
	e, ok := selectorMemo.m[ls]
	selectorMemo.mu.Unlock()
	if ok && equalLabelSelectors(e.src, ls) {
		return e.sel, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return sel, err
	}
	selectorMemo.mu.Lock()
	if selectorMemo.m == nil || len(selectorMemo.m) >= maxSelectorMemo {
		selectorMemo.m = make(map[*metav1.LabelSelector]memoSelector)
	}
	selectorMemo.m[ls] = memoSelector{src: ls.DeepCopy(), sel: sel}
	selectorMemo.mu.Unlock()
	return sel, nil
}

// equalLabelSelectors reports whether a and b have the same match labels
// and the same match expressions in the same order.
func equalLabelSelectors(a, b *metav1.LabelSelector) bool {
	if len(a.MatchLabels) != len(b.MatchLabels) || len(a.MatchExpressions) != len(b.MatchExpressions) {
		return false
	}
	for k, v := range a.MatchLabels {
		if w, ok := b.MatchLabels[k]; !ok || w != v {
			return false
		}
	}
	for i := range a.MatchExpressions {
		x, y := &a.MatchExpressions[i], &b.MatchExpressions[i]
		if x.Key != y.Key || x.Operator != y.Operator || len(x.Values) != len(y.Values) {
			return false
		}
		for j := range x.Values {
			if x.Values[j] != y.Values[j] {
				return false
			}
		}
	}
	return true
}
