package objmeta

import (
	"math/rand"
	"reflect"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/randfill"
)

// EmptyBesidesLabels(m) holds exactly when m, labels and annotations
// left out, is Semantic.DeepEqual to an empty ObjectMeta: checked on 3,000
// seeded random ObjectMetas with each field kept (at a rate that varies
// with the seed), emptied (nil, or an empty slice or map) or zeroed.
func TestMetaEmptyBesidesLabelsIsSemanticEmptiness(t *testing.T) {
	empties := 0
	for seed := int64(0); seed < 3000; seed++ {
		var m metav1.ObjectMeta
		randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 2).Fill(&m)
		r := rand.New(rand.NewSource(seed))
		v := reflect.ValueOf(&m).Elem()
		keep := 2 + int(seed%24) // a field is kept with chance 1/keep
		for i := 0; i < v.NumField(); i++ {
			if r.Intn(keep) == 0 {
				continue
			}
			f := v.Field(i)
			switch {
			case r.Intn(2) == 0:
				f.SetZero()
			case f.Kind() == reflect.Slice:
				f.Set(reflect.MakeSlice(f.Type(), 0, 0))
			case f.Kind() == reflect.Map:
				f.Set(reflect.MakeMap(f.Type()))
			default:
				f.SetZero()
			}
		}
		rest := m
		rest.Labels, rest.Annotations = nil, nil
		want := apiequality.Semantic.DeepEqual(rest, metav1.ObjectMeta{})
		if got := EmptyBesidesLabels(&m); got != want {
			t.Fatalf("seed %d: EmptyBesidesLabels %v, Semantic.DeepEqual to empty %v: %+v", seed, got, want, m)
		}
		if want {
			empties++
		}
	}
	if empties < 100 {
		t.Errorf("only %d of the cases were empty besides labels: the test does not exercise both answers", empties)
	}
}
