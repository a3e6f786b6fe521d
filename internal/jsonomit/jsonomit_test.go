package jsonomit

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Empty agrees with encoding/json: a field is omitted under omitempty
// exactly when Empty says so.
func TestEmptyIsWhatEncodingJSONOmits(t *testing.T) {
	type inner struct{ A int }
	one := 1
	for _, v := range []any{
		false, true, 0, 1, int8(0), uint(3), 0.0, 1.5, "", "x",
		[0]int{}, [1]int{}, []int(nil), []int{}, []int{1}, map[string]int(nil), map[string]int{}, map[string]int{"a": 1},
		(*int)(nil), &one, inner{}, inner{A: 1},
	} {
		typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeOf(v), Tag: `json:"f,omitempty"`}})
		s := reflect.New(typ).Elem()
		s.Field(0).Set(reflect.ValueOf(v))
		b, err := json.Marshal(s.Interface())
		if err != nil {
			t.Fatal(err)
		}
		omitted := string(b) == "{}"
		if got := Empty(s.Field(0)); got != omitted {
			t.Errorf("Empty(%#v) = %v, encoding/json omitted it: %v (%s)", v, got, omitted, b)
		}
	}
}
