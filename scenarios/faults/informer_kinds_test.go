package faults

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/operator/controller"
)

// TestInformersCoverEveryWatchedKind: every kind the operator watches has
// an informer in the fault model, so a lagging or dropping fault delays its
// events instead of losing them for good.
func TestInformersCoverEveryWatchedKind(t *testing.T) {
	have := map[reflect.Type]bool{}
	for _, o := range informerKinds {
		have[reflect.TypeOf(o)] = true
	}
	for _, w := range (controller.Mapper{}).Watches() {
		assert.True(t, have[reflect.TypeOf(w.Object)], "the operator watches %T, which no fault informer models", w.Object)
	}
}
