package simulator

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

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
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var patch map[string]any
	if err := dec.Decode(&patch); err != nil || patch == nil {
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
func mergeStruct(v reflect.Value, patch map[string]any) bool {
	fields := fieldsByJSONName(v.Type())
	if fields == nil {
		return false
	}
	for k, pv := range patch {
		idx, ok := fields[k]
		if !ok {
			return false
		}
		if !mergeValue(v.FieldByIndex(idx), pv) {
			return false
		}
	}
	return true
}

// mergeValue merges the patch value pv into the settable value f.
func mergeValue(f reflect.Value, pv any) bool {
	if pv == nil {
		f.SetZero()
		return true
	}
	obj, isObj := pv.(map[string]any)
	if !isObj {
		return decodeInto(f, pv)
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
func mergeMap(f reflect.Value, patch map[string]any) bool {
	t := f.Type()
	if f.IsNil() {
		f.Set(reflect.MakeMapWithSize(t, len(patch)))
	}
	et := t.Elem()
	for k, pv := range patch {
		key := reflect.ValueOf(k).Convert(t.Key())
		if pv == nil {
			f.SetMapIndex(key, reflect.Value{})
			continue
		}
		val := reflect.New(et).Elem()
		if _, isObj := pv.(map[string]any); isObj {
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
func decodeInto(f reflect.Value, pv any) bool {
	data, err := json.Marshal(pv)
	if err != nil {
		return false
	}
	fresh := reflect.New(f.Type())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		return false
	}
	f.Set(fresh.Elem())
	return true
}
