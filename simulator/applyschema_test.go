package simulator

import (
	"bytes"
	"reflect"
	"testing"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/lunadas/upgrade-operator/simulator/internal/applyschema"
)

// applyschema.yaml is what simulator/internal/applyschema/gen makes from
// the client-go of go.mod: each type defined exactly as in client-go's
// schema (the one applyconfigurations.NewTypeConverter parses), and every
// type a kept type references kept too.
func TestApplySchemaIsCurrent(t *testing.T) {
	full, err := applyschema.ClientGoSchema()
	if err != nil {
		t.Fatal(err)
	}
	types, err := applyschema.Subset(full)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := applyschema.Encode(types)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, applySchema) {
		t.Fatal("simulator/applyschema.yaml is stale: run go run ./simulator/internal/applyschema/gen")
	}
	got, err := applyschema.Decode(applySchema)
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]schema.TypeDef{}
	for _, td := range full.Schema.Types {
		defs[td.Name] = td
	}
	for _, root := range applyschema.Roots {
		if _, ok := got.Schema.FindNamedType(root); !ok {
			t.Errorf("%s is not in the schema", root)
		}
	}
	for gvk := range managedKinds {
		name, err := clientgoscheme.Scheme.ToOpenAPIDefinitionName(gvk) // as the type converter names it
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Schema.FindNamedType(name); !ok {
			t.Errorf("managed kind %s (%s) is not in the schema", gvk.Kind, name)
		}
	}
	for _, td := range got.Schema.Types {
		want, ok := defs[td.Name]
		if !ok {
			t.Errorf("%s is not a type of client-go's schema", td.Name)
			continue
		}
		if !reflect.DeepEqual(td, want) {
			t.Errorf("%s differs from client-go's definition", td.Name)
		}
		for _, ref := range applyschema.References(td.Atom) {
			if _, ok := got.Schema.FindNamedType(ref); !ok {
				t.Errorf("%s references %s, which is not in the schema", td.Name, ref)
			}
		}
	}
}
