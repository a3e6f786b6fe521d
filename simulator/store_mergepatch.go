package simulator

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// mergePatchTyped applies a JSON merge patch (RFC 7386) to a deep copy of
// cur without encoding cur: what json.Unmarshal of jsonpatch.MergePatch(
// json.Marshal(cur), data) gives for a canonical cur (one a JSON round
// trip leaves as it is, as every stored object is). A key set to null
// resets its field, an object patches a struct (or a map's entries) key by
// key, and any other value replaces the field with its own decoding.
// ok is false for what it does not model (a key that names no field
// exactly, an object patched into a field that is not a struct or a map,
// a value that does not decode): the caller then takes the JSON path.
// With CheckSharedReads on, the store compares the two on every patch.
func mergePatchTyped(cur client.Object, data []byte) (client.Object, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	patch, ok := rawObject(data)
	if !ok {
		return nil, false
	}
	cp, isObj := cur.DeepCopyObject().(client.Object)
	if !isObj {
		return nil, false
	}
	v := reflect.ValueOf(cp)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	if !mergeStruct(v.Elem(), patch) {
		return nil, false
	}
	return cp, true
}

// rawMember is one member of a JSON object: its key and its value, left
// encoded (a value is decoded once, straight into its field's type).
type rawMember struct {
	key []byte
	val json.RawMessage
}

// rawObject splits a JSON object into its members, in order, the values
// sharing data's bytes. data must be valid JSON (mergePatchTyped checks
// the whole patch once). ok is false when data is not an object, or a key
// has an escape sequence, is not UTF-8 or repeats — what encoding/json's
// decoding of the object into a map would resolve (unescaping, U+FFFD for
// bad bytes, the last value winning): the caller then takes the JSON path.
func rawObject(data []byte) ([]rawMember, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	var out []rawMember
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return out, true
	}
	for i < len(data) && data[i] == '"' {
		end := i + 1
		for end < len(data) && data[end] != '"' {
			if data[end] == '\\' {
				return nil, false
			}
			end++
		}
		if end >= len(data) {
			return nil, false
		}
		key := data[i+1 : end]
		if !utf8.Valid(key) {
			return nil, false // encoding/json would decode it with U+FFFD
		}
		for _, m := range out {
			if string(m.key) == string(key) {
				return nil, false
			}
		}
		i = skipSpace(data, end+1)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		start := skipSpace(data, i+1)
		stop := skipValue(data, start)
		if stop <= start {
			return nil, false
		}
		out = append(out, rawMember{key: key, val: data[start:stop]})
		i = skipSpace(data, stop)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// skipSpace is the index of the first byte at or after i that is not JSON
// white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue is the index just past the valid JSON value starting at i.
func skipValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			i++
			for i < len(data) && data[i] != '"' {
				if data[i] == '\\' {
					i++ // the escaped byte
				}
				i++
			}
			i++ // the closing quote
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			if depth == 0 {
				return i // a scalar ended by its object's end
			}
			depth--
			i++
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return i // a scalar ended
		default:
			i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return i
		}
	}
	return i
}

// isRawObject and isRawNull tell a JSON object and null apart from other
// values by their first byte (json.RawMessage members come without
// leading white space; a whole patch may have some).
func isRawObject(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '{'
}

func isRawNull(data []byte) bool { return string(bytes.TrimSpace(data)) == "null" }

// jsonFields maps a struct type's JSON names to field index paths
// (embedded structs' fields promoted); nil when the type has names
// encoding/json would resolve in ways not modelled (collisions).
var jsonFields sync.Map // reflect.Type → map[string][]int

func fieldsByJSONName(t reflect.Type) map[string][]int {
	if m, ok := jsonFields.Load(t); ok {
		return m.(map[string][]int)
	}
	m := map[string][]int{}
	if !collectJSONFields(t, nil, m) {
		m = nil
	}
	jsonFields.Store(t, m)
	return m
}

func collectJSONFields(t reflect.Type, prefix []int, m map[string][]int) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		idx := append(append([]int(nil), prefix...), i)
		switch {
		case f.Anonymous && name == "":
			if f.Type.Kind() != reflect.Struct || !f.IsExported() || !collectJSONFields(f.Type, idx, m) {
				return false
			}
		case !f.IsExported() || tag == "-":
		default:
			if name == "" {
				name = f.Name
			}
			if _, dup := m[name]; dup {
				return false
			}
			m[name] = idx
		}
	}
	return true
}

// mergeStruct merges patch into the struct value v.
func mergeStruct(v reflect.Value, patch []rawMember) bool {
	fields := fieldsByJSONName(v.Type())
	if fields == nil {
		return false
	}
	for _, m := range patch {
		idx, ok := fields[string(m.key)]
		if !ok {
			return false
		}
		if !mergeValue(v.FieldByIndex(idx), m.val) {
			return false
		}
	}
	return true
}

// mergeValue merges the patch value pv into the settable value f.
func mergeValue(f reflect.Value, pv json.RawMessage) bool {
	if isRawNull(pv) {
		f.SetZero()
		return true
	}
	if !isRawObject(pv) {
		return decodeInto(f, pv)
	}
	obj, ok := rawObject(pv)
	if !ok {
		return false
	}
	t := f.Type()
	if t == typeTime || t == typeMicroTime {
		return false
	}
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && !planOf(t.Elem()).ownJSON {
		if f.IsNil() {
			f.Set(reflect.New(t.Elem()))
		}
		return mergeStruct(f.Elem(), obj)
	}
	switch {
	case t.Kind() == reflect.Struct && !planOf(t).ownJSON:
		return mergeStruct(f, obj)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		return mergeMap(f, obj)
	}
	return false
}

// mergeMap merges patch into the map value f entry by entry.
func mergeMap(f reflect.Value, patch []rawMember) bool {
	t := f.Type()
	if f.IsNil() {
		f.Set(reflect.MakeMapWithSize(t, len(patch)))
	}
	et := t.Elem()
	for _, m := range patch {
		pv := m.val
		key := reflect.ValueOf(string(m.key)).Convert(t.Key())
		if isRawNull(pv) {
			f.SetMapIndex(key, reflect.Value{})
			continue
		}
		val := reflect.New(et).Elem()
		if isRawObject(pv) {
			if et.Kind() != reflect.Struct || planOf(et).ownJSON || et == typeTime || et == typeMicroTime {
				return false
			}
			if old := f.MapIndex(key); old.IsValid() {
				val.Set(old)
			}
		}
		if !mergeValue(val, pv) {
			return false
		}
		f.SetMapIndex(key, val)
	}
	return true
}

// decodeInto replaces f with pv's decoding (a fresh value of f's type).
func decodeInto(f reflect.Value, pv json.RawMessage) bool {
	fresh := reflect.New(f.Type())
	if err := json.Unmarshal(pv, fresh.Interface()); err != nil {
		return false
	}
	f.Set(fresh.Elem())
	return true
}
