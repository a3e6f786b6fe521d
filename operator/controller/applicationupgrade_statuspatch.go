package controller

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/internal/jsonomit"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// statusMergePatch is the JSON merge patch (RFC 7386) that
// client.MergeFromWithOptions(from, client.MergeFromWithOptimisticLock{})
// sends for to, where to is a copy of from whose status alone changed:
// {"metadata":{"resourceVersion":from's},"status":{changed fields}}. It is
// the same patch (the same JSON document, keys in another order), built
// from the status fields only: each top-level field of the status is
// encoded on both sides and sent when the encodings differ (null when to
// omits it, a nested merge patch when both are objects); a field whose
// values are reflect.DeepEqual is not encoded at all. MergeFrom encodes
// both whole objects, diffs them as generic JSON and encodes the result
// again, then decodes and re-encodes it to add the resourceVersion: most
// of a status pass's CPU in the simulator. A status type this function
// does not know how to walk (an embedded or untagged field) gets
// MergeFrom's patch. TestStatusMergePatchIsMergeFroms checks the two agree.
func statusMergePatch(from, to *v1beta1.ApplicationUpgrade) (client.Patch, error) {
	fields, walkable := statusFields()
	if !walkable {
		return client.MergeFromWithOptions(from, client.MergeFromWithOptimisticLock{}), nil
	}
	fv, tv := reflect.ValueOf(&from.Status).Elem(), reflect.ValueOf(&to.Status).Elem()
	changed := make(map[string]json.RawMessage, len(fields))
	for i, f := range fields {
		name, omitEmpty := f.name, f.omitEmpty
		if reflect.DeepEqual(fv.Field(i).Addr().Interface(), tv.Field(i).Addr().Interface()) {
			continue // equal values encode alike: nothing to send, nothing to encode
		}
		a, err := fieldJSON(fv.Field(i), omitEmpty)
		if err != nil {
			return nil, fmt.Errorf("encode status.%s of applicationupgrade %s/%s: %w", name, from.Namespace, from.Name, err)
		}
		b, err := fieldJSON(tv.Field(i), omitEmpty)
		if err != nil {
			return nil, fmt.Errorf("encode status.%s of applicationupgrade %s/%s: %w", name, to.Namespace, to.Name, err)
		}
		switch {
		case bytes.Equal(a, b):
		case b == nil:
			changed[name] = json.RawMessage("null")
		case isJSONObject(a) && isJSONObject(b):
			p, err := jsonpatch.CreateMergePatch(a, b)
			if err != nil {
				return nil, fmt.Errorf("diff status.%s of applicationupgrade %s/%s: %w", name, from.Namespace, from.Name, err)
			}
			if !bytes.Equal(p, []byte("{}")) {
				changed[name] = p
			}
		default:
			changed[name] = b
		}
	}
	return client.RawPatch(types.MergePatchType, patchDocument(from.ResourceVersion, changed)), nil
}

// patchDocument writes {"metadata":{"resourceVersion":rv},"status":{...}}
// with the status members in name order (as encoding/json writes a map);
// the members are encodings of encoding/json's own.
func patchDocument(rv string, status map[string]json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"metadata":{"resourceVersion":`)
	b.Write(jsonString(rv))
	b.WriteString(`}`)
	if len(status) > 0 {
		b.WriteString(`,"status":{`)
		for i, name := range slices.Sorted(maps.Keys(status)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(jsonString(name))
			b.WriteByte(':')
			b.Write(status[name])
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

func jsonString(s string) []byte {
	out, _ := json.Marshal(s) // a string always encodes
	return out
}

// statusField is a status field's JSON name and whether it has omitempty.
type statusField struct {
	name      string
	omitEmpty bool
}

// statusFields are the JSON names of the status type's fields, by field
// index, read from the type once per process (jsonField); walkable is
// false when one of them is a field statusMergePatch does not walk.
var statusFields = sync.OnceValues(func() ([]statusField, bool) {
	t := reflect.TypeFor[v1beta1.ApplicationUpgradeStatus]()
	out := make([]statusField, t.NumField())
	for i := range out {
		name, omitEmpty, ok := jsonField(t.Field(i))
		if !ok {
			return nil, false
		}
		out[i] = statusField{name: name, omitEmpty: omitEmpty}
	}
	return out, true
})

// jsonField is a struct field's JSON name and whether it has omitempty;
// ok is false for a field encoding/json would not encode under one name
// of its own (embedded, unexported, untagged, "-", or an omitzero field).
func jsonField(f reflect.StructField) (name string, omitEmpty, ok bool) {
	tag, has := f.Tag.Lookup("json")
	if f.Anonymous || !f.IsExported() || !has {
		return "", false, false
	}
	parts := strings.Split(tag, ",")
	if parts[0] == "" || parts[0] == "-" {
		return "", false, false
	}
	for _, o := range parts[1:] {
		switch o {
		case "omitempty":
			omitEmpty = true
		case "omitzero", "string", "inline":
			return "", false, false
		}
	}
	return parts[0], omitEmpty, true
}

// fieldJSON is a field's encoding, or nil when encoding/json omits it. v
// is addressable (a field of a status reached through a pointer): it is
// encoded through its address, as MergeFrom's encoding of the whole object
// reaches it, without boxing a copy of it.
func fieldJSON(v reflect.Value, omitEmpty bool) ([]byte, error) {
	if omitEmpty && jsonomit.Empty(v) {
		return nil, nil
	}
	return json.Marshal(v.Addr().Interface())
}

func isJSONObject(b []byte) bool { return len(b) > 0 && b[0] == '{' }
