package simulator

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/internal/jsonomit"
)

// canonicalCopy returns a deep copy of obj as a JSON round trip
// (json.Marshal, then json.Unmarshal into a fresh object of the same type)
// would leave it, without encoding: times cut to the precision their JSON
// form keeps (metav1.Time to seconds, metav1.MicroTime to microseconds),
// omitempty / omitzero fields that are empty reset (an empty slice or map
// becomes nil), a pointer whose value encodes as null made nil, fields the
// encoding skips ("-", unexported) reset, and values of any other type with
// its own JSON encoding (resource.Quantity, intstr.IntOrString, …) round
// tripped one by one. ok is false when obj holds something this copy does
// not model (an interface value, a string that is not valid UTF-8, a
// non-finite float, a map with non-string keys, an embedded struct other
// than TypeMeta): the caller then takes the JSON path. With
// CheckSharedReads on, the store compares the two on every write
// (canonicalize).
func canonicalCopy(obj client.Object) (out client.Object, ok bool) {
	cp, isObj := obj.DeepCopyObject().(client.Object)
	if !isObj {
		return nil, false
	}
	v := reflect.ValueOf(cp)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	if !canonicalValue(v.Elem()) {
		return nil, false
	}
	return cp, true
}

var (
	typeTime        = reflect.TypeFor[metav1.Time]()
	typeMicroTime   = reflect.TypeFor[metav1.MicroTime]()
	typeTypeMeta    = reflect.TypeFor[metav1.TypeMeta]()
	typeFieldsV1    = reflect.TypeFor[metav1.FieldsV1]()
	typeIntOrString = reflect.TypeFor[intstr.IntOrString]()
	typeMarshaler   = reflect.TypeFor[json.Marshaler]()
	typeUnmarshal   = reflect.TypeFor[json.Unmarshaler]()
	typeIsZeroer    = reflect.TypeFor[interface{ IsZero() bool }]()
)

// typePlan is what canonicalValue needs to know of a type, computed once.
type typePlan struct {
	ownJSON bool // has its own MarshalJSON / UnmarshalJSON (not a time)
	trivial bool // nothing in it can change in a round trip (ints, bools)
	bad     bool // not modelled: take the JSON path
	fields  []fieldPlan
	// elem and fieldTypes remember the plans of the element type (of a
	// pointer, slice, array or map) and of each field's type, looked up
	// in typePlans on first use: a walk then follows pointers instead of
	// a sync.Map lookup per value.
	elem       atomic.Pointer[typePlan]
	fieldTypes []atomic.Pointer[typePlan] // by position in fields
}

// elemPlan is the plan of t.Elem(); p is t's plan.
func (p *typePlan) elemPlan(t reflect.Type) *typePlan {
	if e := p.elem.Load(); e != nil {
		return e
	}
	e := planOf(t.Elem())
	p.elem.Store(e)
	return e
}

// fieldPlan is the plan of the type ft of the i-th of p.fields.
func (p *typePlan) fieldPlan(i int, ft reflect.Type) *typePlan {
	if e := p.fieldTypes[i].Load(); e != nil {
		return e
	}
	e := planOf(ft)
	p.fieldTypes[i].Store(e)
	return e
}

type fieldPlan struct {
	index               int
	skip                bool // "-" or unexported: reset
	omitEmpty, omitZero bool
}

var typePlans sync.Map // reflect.Type → *typePlan

func planOf(t reflect.Type) *typePlan {
	if p, ok := typePlans.Load(t); ok {
		return p.(*typePlan)
	}
	p := buildPlan(t, map[reflect.Type]bool{})
	typePlans.Store(t, p)
	return p
}

// buildPlan computes t's plan; visiting breaks recursive types (treated
// as not trivial).
func buildPlan(t reflect.Type, visiting map[reflect.Type]bool) *typePlan {
	p := &typePlan{}
	if t == typeTime || t == typeMicroTime {
		return p
	}
	pt := reflect.PointerTo(t)
	if t.Kind() != reflect.Pointer && (t.Implements(typeMarshaler) || pt.Implements(typeMarshaler) || t.Implements(typeUnmarshal) || pt.Implements(typeUnmarshal)) {
		// A pointer to such a type is a pointer (below): nil is null,
		// anything else its value's encoding.
		p.ownJSON = true
		return p
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.trivial = true
	case reflect.String, reflect.Float32, reflect.Float64:
	case reflect.Pointer, reflect.Slice, reflect.Array:
		// A pointer, slice or array of trivial values does not change
		// either (an empty slice under omitempty is the field's business).
		if visiting[t] {
			return p
		}
		visiting[t] = true
		ep := buildPlan(t.Elem(), visiting)
		p.bad, p.trivial = ep.bad, ep.trivial
	case reflect.Map:
		if t.Key().Kind() != reflect.String || visiting[t] {
			p.bad = t.Key().Kind() != reflect.String
			return p
		}
		visiting[t] = true
		p.bad = buildPlan(t.Elem(), visiting).bad
	case reflect.Struct:
		p.bad = !planStruct(p, t, visiting)
		p.fieldTypes = make([]atomic.Pointer[typePlan], len(p.fields))
	default: // interfaces, funcs, channels, complex numbers, uintptr
		p.bad = true
	}
	return p
}

// planStruct fills the field plans of struct type t; false when t has a
// field layout encoding/json treats in ways not modelled here.
func planStruct(p *typePlan, t reflect.Type, visiting map[reflect.Type]bool) bool {
	names := map[string]bool{}
	promoted := []string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		fp := fieldPlan{index: i}
		switch {
		case f.Anonymous && name == "":
			// An embedded struct (TypeMeta, LocalObjectReference, …):
			// its fields are promoted, and must not collide.
			if f.Type.Kind() != reflect.Struct || !f.IsExported() {
				return false
			}
			inner, ok := jsonNames(f.Type)
			if !ok {
				return false
			}
			promoted = append(promoted, inner...)
		case !f.IsExported() || tag == "-":
			fp.skip = true
		default:
			if name == "" {
				name = f.Name
			}
			if names[name] {
				return false
			}
			names[name] = true
		}
		if f.Anonymous && !f.IsExported() {
			return false
		}
		for _, o := range strings.Split(opts, ",") {
			fp.omitEmpty = fp.omitEmpty || o == "omitempty"
			fp.omitZero = fp.omitZero || o == "omitzero"
		}
		if !fp.skip && buildPlan(f.Type, visiting).bad {
			return false
		}
		p.fields = append(p.fields, fp)
	}
	for _, n := range promoted {
		if names[n] {
			return false
		}
		names[n] = true
	}
	return true
}

// jsonNames lists the JSON names of struct type t's fields, those of its
// embedded structs included; false when they are not simple (a pointer or
// unexported embedding).
func jsonNames(t reflect.Type) ([]string, bool) {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case f.Anonymous && name == "":
			if f.Type.Kind() != reflect.Struct || !f.IsExported() {
				return nil, false
			}
			inner, ok := jsonNames(f.Type)
			if !ok {
				return nil, false
			}
			out = append(out, inner...)
		case !f.IsExported() || tag == "-":
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out, true
}

// canonicalValue normalises the settable value v in place; false when v
// holds something not modelled.
func canonicalValue(v reflect.Value) bool { return canonicalValueOf(v, nil) }

// canonicalValueOf is canonicalValue with p the plan of v's type (nil:
// looked up).
func canonicalValueOf(v reflect.Value, p *typePlan) bool {
	t := v.Type()
	switch t {
	case typeTime:
		tm := v.Addr().Interface().(*metav1.Time)
		if tm.IsZero() {
			*tm = metav1.Time{}
		} else if y := tm.UTC().Year(); y < 0 || y > 9999 {
			return false
		} else {
			*tm = metav1.NewTime(time.Unix(tm.Unix(), 0))
		}
		return true
	case typeMicroTime:
		tm := v.Addr().Interface().(*metav1.MicroTime)
		if tm.IsZero() {
			*tm = metav1.MicroTime{}
		} else if y := tm.UTC().Year(); y < 0 || y > 9999 {
			return false
		} else {
			*tm = metav1.NewMicroTime(time.Unix(tm.Unix(), int64(tm.Nanosecond()/1000*1000)))
		}
		return true
	}
	if p == nil {
		p = planOf(t)
	}
	switch {
	case p.bad:
		return false
	case p.trivial:
		return true
	case p.ownJSON:
		if t == typeFieldsV1 && unchangedByEncoding(v.Addr().Interface().(*metav1.FieldsV1).Raw) {
			return true // managed fields: every object has some
		}
		if t == typeIntOrString && canonicalIntOrString(v.Addr().Interface().(*intstr.IntOrString)) {
			return true // maxSurge, maxUnavailable
		}
		return roundTripValue(v)
	}
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	case reflect.Pointer:
		if v.IsNil() {
			return true
		}
		if encodesAsNull(v.Elem()) {
			v.SetZero()
			return true
		}
		return canonicalValueOf(v.Elem(), p.elemPlan(t))
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return true // []byte: base64, decoded as it was
		}
		ep := p.elemPlan(t)
		if ep.trivial {
			return true
		}
		for i := 0; i < v.Len(); i++ {
			if !canonicalValueOf(v.Index(i), ep) {
				return false
			}
		}
		return true
	case reflect.Map:
		return canonicalMap(v)
	case reflect.Struct:
		return canonicalStruct(v, p)
	}
	return false
}

func canonicalStruct(v reflect.Value, p *typePlan) bool {
	for i, fp := range p.fields {
		f := v.Field(fp.index)
		switch {
		case fp.skip:
			if !f.IsZero() {
				if !f.CanSet() {
					return false // an unexported field: the JSON path resets it
				}
				f.SetZero()
			}
		case fp.omitEmpty && jsonomit.Empty(f), fp.omitZero && isZeroValue(f):
			f.SetZero()
		case !canonicalValueOf(f, p.fieldPlan(i, f.Type())):
			return false
		}
	}
	return true
}

func canonicalMap(v reflect.Value) bool {
	if v.IsNil() {
		return true
	}
	if m, ok := mapOfStrings(v); ok {
		// Labels, annotations, selectors: checked without reflection.
		for k, e := range m {
			if !utf8.ValidString(k) || !utf8.ValidString(e) {
				return false
			}
		}
		return true
	}
	et := v.Type().Elem()
	ep := planOf(et)
	plainString := et.Kind() == reflect.String && !ep.ownJSON
	iter := v.MapRange()
	// Key and value are read into reused values (SetIterKey and
	// SetIterValue copy without allocating, MapIter.Key and Value do not).
	key, elem := reflect.New(v.Type().Key()).Elem(), reflect.New(et).Elem()
	var changed [][2]reflect.Value
	for iter.Next() {
		key.SetIterKey(iter)
		if !utf8.ValidString(key.String()) {
			return false
		}
		if ep.trivial {
			continue
		}
		elem.SetIterValue(iter)
		if plainString {
			if !utf8.ValidString(elem.String()) {
				return false
			}
			continue
		}
		val := reflect.New(et).Elem()
		val.Set(elem)
		if !canonicalValue(val) {
			return false
		}
		changed = append(changed, [2]reflect.Value{iter.Key(), val})
	}
	for _, kv := range changed {
		v.SetMapIndex(kv[0], kv[1])
	}
	return true
}

// encodesAsNull: a value a pointer to which json.Marshal writes as null,
// which json.Unmarshal then decodes as a nil pointer.
func encodesAsNull(v reflect.Value) bool {
	switch v.Type() {
	case typeTime:
		return v.Addr().Interface().(*metav1.Time).IsZero()
	case typeMicroTime:
		return v.Addr().Interface().(*metav1.MicroTime).IsZero()
	case typeFieldsV1:
		return v.Addr().Interface().(*metav1.FieldsV1).Raw == nil
	case typeIntOrString:
		return false
	}
	if !planOf(v.Type()).ownJSON {
		return false
	}
	data, err := json.Marshal(v.Addr().Interface())
	return err == nil && string(data) == "null"
}

// unchangedByEncoding reports whether raw JSON embedded by a Marshaler
// (FieldsV1's) comes back as it is: valid, compact (json.Marshal compacts
// it), and free of what json.Marshal escapes (<, >, &, U+2028, U+2029,
// whose UTF-8 encodings start with 0xE2). A nil raw is null, also kept.
func unchangedByEncoding(raw []byte) bool {
	if raw == nil {
		return true
	}
	if !json.Valid(raw) {
		return false
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '<' || c == '>' || c == '&' || c == 0xE2:
			return false
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// canonicalIntOrString: an IntOrString its encoding gives back as it is
// (the other half zero; a string that is valid UTF-8).
func canonicalIntOrString(v *intstr.IntOrString) bool {
	switch v.Type {
	case intstr.Int:
		return v.StrVal == ""
	case intstr.String:
		return v.IntVal == 0 && utf8.ValidString(v.StrVal)
	}
	return false
}

// roundTripValue replaces v by its own JSON round trip.
func roundTripValue(v reflect.Value) bool {
	data, err := json.Marshal(v.Addr().Interface())
	if err != nil {
		return false
	}
	fresh := reflect.New(v.Type())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		return false
	}
	v.Set(fresh.Elem())
	return true
}

// isZeroValue is encoding/json's test for omitzero: the value's IsZero
// method when it has one, else the zero value.
func isZeroValue(v reflect.Value) bool {
	if v.Type().Implements(typeIsZeroer) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return v.Interface().(interface{ IsZero() bool }).IsZero()
	}
	if reflect.PointerTo(v.Type()).Implements(typeIsZeroer) && v.CanAddr() {
		return v.Addr().Interface().(interface{ IsZero() bool }).IsZero()
	}
	return v.IsZero()
}

// firstDifference names the first place (a field path) where a and b,
// values of one type, differ, or is "": equal as reflect.DeepEqual
// compares, except that a time.Time compares by instant (a JSON decoding
// gives the local zone, the virtual clock UTC). It checks the typed
// canonical copy and the typed merge patch against their JSON paths.
func firstDifference(a, b reflect.Value, path string) string {
	if a.Type() != b.Type() {
		return path + " (types differ)"
	}
	if a.Type() == reflect.TypeFor[time.Time]() {
		if ta, tb := a.Interface().(time.Time), b.Interface().(time.Time); !ta.Equal(tb) {
			return fmt.Sprintf("%s (JSON %v, typed %v)", path, ta, tb)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s (JSON nil %v, typed nil %v)", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return firstDifference(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				// A struct with private state (resource.Quantity):
				// compared whole.
				if !reflect.DeepEqual(a.Interface(), b.Interface()) {
					return fmt.Sprintf("%s (JSON %#v, typed %#v)", path, a.Interface(), b.Interface())
				}
				return ""
			}
		}
		for i := 0; i < a.NumField(); i++ {
			if d := firstDifference(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s (JSON nil %v, typed nil %v)", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return path + " (lengths differ)"
		}
		for i := 0; i < a.Len(); i++ {
			if d := firstDifference(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return fmt.Sprintf("%s (JSON %d entries nil %v, typed %d nil %v)", path, a.Len(), a.IsNil(), b.Len(), b.IsNil())
		}
		iter := a.MapRange()
		for iter.Next() {
			bv := b.MapIndex(iter.Key())
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v] (missing in typed)", path, iter.Key())
			}
			if d := firstDifference(iter.Value(), bv, fmt.Sprintf("%s[%v]", path, iter.Key())); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return fmt.Sprintf("%s (JSON %#v, typed %#v)", path, a.Interface(), b.Interface())
	}
	return ""
}

// mapOfStrings is v as a map[string]string, when it is one.
func mapOfStrings(v reflect.Value) (map[string]string, bool) {
	if !v.CanInterface() {
		return nil, false
	}
	m, ok := v.Interface().(map[string]string)
	return m, ok
}
