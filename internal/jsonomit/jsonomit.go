// Package jsonomit holds encoding/json's omitempty test, for code that
// walks a struct by reflection and must encode (or omit) a field exactly
// as encoding/json does: the operator's status merge patch and the
// simulator's canonical copies.
package jsonomit

import "reflect"

// Empty reports whether encoding/json omits v under omitempty: false,
// 0, a nil pointer or interface, and an empty array, map, slice or
// string (encoding/json's isEmptyValue; a struct is never empty).
func Empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
