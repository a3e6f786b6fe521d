package simulator

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// semanticEqual is equality.Semantic.DeepEqual(a, b) (apimachinery's
// third_party/forked/golang/reflect deep_equal.go, Equalities.DeepEqual:
// nil and empty slices and maps alike, Semantic's own comparisons for
// Quantity, Time, MicroTime, FieldsV1 and the selectors), walked without
// what makes that walk allocate: it boxes every string, number and map
// entry it compares (Value.Interface, MapIndex) and records every struct,
// slice and map it enters in a visited set made per call. The visited set
// only matters for cyclic values; API objects are trees, and a value
// reached twice was already found equal (any difference ends the walk).
// Anything the walk does not model the same way — a value nested deeper
// than maxSemanticDepth (a cycle), a channel, an unsafe pointer, an
// unexported field — is handed to equality.Semantic.DeepEqual itself. With
// CheckSharedReads on, the store checks the two agree on every write.
func semanticEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == b
	}
	v1, v2 := reflect.ValueOf(a), reflect.ValueOf(b)
	if v1.Type() != v2.Type() {
		return false
	}
	w := semanticWalk{}
	eq := w.equal(v1, v2, 0)
	if w.fallback {
		return equality.Semantic.DeepEqual(a, b)
	}
	return eq
}

// maxSemanticDepth bounds semanticEqual's walk: an API object is far
// shallower, so a deeper value is taken to be cyclic.
const maxSemanticDepth = 100

type semanticWalk struct {
	fallback bool // met something it leaves to equality.Semantic.DeepEqual
}

func (w *semanticWalk) equal(v1, v2 reflect.Value, depth int) bool {
	if w.fallback {
		return false
	}
	if depth > maxSemanticDepth {
		w.fallback = true
		return false
	}
	if !v1.IsValid() || !v2.IsValid() {
		return v1.IsValid() == v2.IsValid()
	}
	t := v1.Type()
	if t != v2.Type() {
		return false
	}
	if fn, ok := equality.Semantic.Equalities[t]; ok {
		if t == typeTime && v1.CanAddr() && v2.CanAddr() {
			// Semantic's func(a, b metav1.Time) bool, without Call's boxing.
			return v1.Addr().Interface().(*metav1.Time).UTC() == v2.Addr().Interface().(*metav1.Time).UTC()
		}
		if !v1.CanInterface() || !v2.CanInterface() {
			w.fallback = true
			return false
		}
		return fn.Call([]reflect.Value{v1, v2})[0].Bool()
	}
	switch t.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.Struct:
		// The same short cut as deepValueEqual's: one value compared with
		// itself.
		if v1.CanAddr() && v2.CanAddr() && v1.UnsafeAddr() == v2.UnsafeAddr() {
			return true
		}
	}
	switch t.Kind() {
	case reflect.Array:
		for i := 0; i < v1.Len(); i++ {
			if !w.equal(v1.Index(i), v2.Index(i), depth+1) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if eq, decided := sameLengthOrShared(v1, v2); decided {
			return eq
		}
		for i := 0; i < v1.Len(); i++ {
			if !w.equal(v1.Index(i), v2.Index(i), depth+1) {
				return false
			}
		}
		return true
	case reflect.Interface:
		if v1.IsNil() || v2.IsNil() {
			return v1.IsNil() == v2.IsNil()
		}
		return w.equal(v1.Elem(), v2.Elem(), depth+1)
	case reflect.Pointer:
		return w.equal(v1.Elem(), v2.Elem(), depth+1)
	case reflect.Struct:
		for i, n := 0, v1.NumField(); i < n; i++ {
			if !w.equal(v1.Field(i), v2.Field(i), depth+1) {
				return false
			}
		}
		return true
	case reflect.Map:
		if eq, decided := sameLengthOrShared(v1, v2); decided {
			return eq
		}
		if t == typeStringMap && v1.CanInterface() && v2.CanInterface() {
			return sameStrings(v1.Interface().(map[string]string), v2.Interface().(map[string]string))
		}
		for _, k := range v1.MapKeys() {
			if !w.equal(v1.MapIndex(k), v2.MapIndex(k), depth+1) {
				return false
			}
		}
		return true
	case reflect.Func:
		return v1.IsNil() && v2.IsNil()
	}
	if !v1.CanInterface() || !v2.CanInterface() {
		w.fallback = true // deepValueEqual panics on an unexported field
		return false
	}
	switch t.Kind() {
	case reflect.Bool:
		return v1.Bool() == v2.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v1.Int() == v2.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v1.Uint() == v2.Uint()
	case reflect.Float32, reflect.Float64:
		return v1.Float() == v2.Float()
	case reflect.Complex64, reflect.Complex128:
		return v1.Complex() == v2.Complex()
	case reflect.String:
		return v1.String() == v2.String()
	}
	// A channel or an unsafe pointer: deepValueEqual compares them boxed.
	w.fallback = true
	return false
}

var typeStringMap = reflect.TypeFor[map[string]string]()

// sameLengthOrShared decides two slices or two maps (v1, v2 of one type)
// where their elements need not be compared: nil and empty are equal (as
// in Semantic.DeepEqual), lengths that differ are not, and one backing
// array or map is equal to itself. decided is false when the elements
// must be compared.
func sameLengthOrShared(v1, v2 reflect.Value) (eq, decided bool) {
	e1, e2 := v1.IsNil() || v1.Len() == 0, v2.IsNil() || v2.Len() == 0
	switch {
	case e1 || e2:
		return e1 == e2, true
	case v1.Len() != v2.Len():
		return false, true
	case v1.Pointer() == v2.Pointer():
		return true, true
	}
	return false, false
}
