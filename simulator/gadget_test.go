package simulator

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// gadget is a toy two-version custom resource for the conversion tests:
// v1 (gadgetV1) is a spoke, v2 (gadgetV2, the storage version) the hub.
// v2 renames and nests fields and adds tags, which v1 carries in the
// gadgetTagsAnnotation so that nothing is lost on a round trip.
var (
	gadgetV1GV = schema.GroupVersion{Group: "toy.sim.dev", Version: "v1"}
	gadgetV2GV = schema.GroupVersion{Group: "toy.sim.dev", Version: "v2"}
	gadgetGK   = schema.GroupKind{Group: "toy.sim.dev", Kind: "Gadget"}
)

const gadgetTagsAnnotation = "toy.sim.dev/tags"

type gadgetV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              gadgetV1Spec   `json:"spec,omitempty"`
	Status            gadgetV1Status `json:"status,omitempty"`
}

type gadgetV1Spec struct {
	Size  int    `json:"size,omitempty"`
	Color string `json:"color,omitempty"`
}

type gadgetV1Status struct {
	Phase string `json:"phase,omitempty"`
}

type gadgetV1List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []gadgetV1 `json:"items"`
}

type gadgetV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              gadgetV2Spec   `json:"spec,omitempty"`
	Status            gadgetV2Status `json:"status,omitempty"`
}

type gadgetV2Spec struct {
	Dimensions gadgetDimensions `json:"dimensions,omitempty"`
	Colour     string           `json:"colour,omitempty"`
	Tags       []string         `json:"tags,omitempty"`
}

type gadgetDimensions struct {
	Width int `json:"width,omitempty"`
}

type gadgetV2Status struct {
	State string `json:"state,omitempty"`
}

type gadgetV2List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []gadgetV2 `json:"items"`
}

func (g *gadgetV1) DeepCopyObject() runtime.Object {
	c := *g
	g.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (g *gadgetV2) DeepCopyObject() runtime.Object {
	c := *g
	g.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Tags = append([]string(nil), g.Spec.Tags...)
	if g.Spec.Tags == nil {
		c.Spec.Tags = nil
	}
	return &c
}

func (l *gadgetV1List) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]gadgetV1, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*gadgetV1)
	}
	return &c
}

func (l *gadgetV2List) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]gadgetV2, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*gadgetV2)
	}
	return &c
}

// Hub marks v2 as the hub.
func (*gadgetV2) Hub() {}

// ConvertTo converts v1 up: size → dimensions.width, color → colour,
// tags from the annotation, phase → state (upper-cased).
func (g *gadgetV1) ConvertTo(h conversion.Hub) error {
	dst := h.(*gadgetV2)
	g.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = gadgetV2Spec{Dimensions: gadgetDimensions{Width: g.Spec.Size}, Colour: g.Spec.Color}
	if tags, ok := dst.Annotations[gadgetTagsAnnotation]; ok {
		dst.Spec.Tags = strings.Split(tags, ",")
		delete(dst.Annotations, gadgetTagsAnnotation)
		if len(dst.Annotations) == 0 {
			dst.Annotations = nil
		}
	}
	dst.Status = gadgetV2Status{State: strings.ToUpper(g.Status.Phase)}
	return nil
}

// ConvertFrom converts v2 down, keeping tags in the annotation.
func (g *gadgetV1) ConvertFrom(h conversion.Hub) error {
	src := h.(*gadgetV2)
	src.ObjectMeta.DeepCopyInto(&g.ObjectMeta)
	g.Spec = gadgetV1Spec{Size: src.Spec.Dimensions.Width, Color: src.Spec.Colour}
	if len(src.Spec.Tags) > 0 {
		if g.Annotations == nil {
			g.Annotations = map[string]string{}
		}
		g.Annotations[gadgetTagsAnnotation] = strings.Join(src.Spec.Tags, ",")
	}
	g.Status = gadgetV1Status{Phase: strings.ToLower(src.Status.State)}
	return nil
}

// gadgetConverter is HubConversion with switches for failure tests (call
// install after changing them).
type gadgetConverter struct {
	fail   bool                        // every conversion fails
	mangle func(out runtime.Object)    // edits the result
	calls  map[schema.GroupVersion]int // conversions per target version
	hub    func(runtime.Object, schema.GroupVersion) (runtime.Object, error)
}

func (gc *gadgetConverter) convert(obj runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	gc.calls[to]++
	if gc.fail {
		return nil, fmt.Errorf("connection refused")
	}
	out, err := gc.hub(obj, to)
	if err == nil && gc.mangle != nil {
		gc.mangle(out)
	}
	return out, err
}

// newGadgetSim is a simulation whose scheme has widget and both gadget
// versions, with gadget stored at v2 and converted by the returned converter.
func newGadgetSim() (*Sim, *gadgetConverter) {
	sch := testScheme()
	sch.AddKnownTypeWithName(gadgetV1GV.WithKind("Gadget"), &gadgetV1{})
	sch.AddKnownTypeWithName(gadgetV1GV.WithKind("GadgetList"), &gadgetV1List{})
	sch.AddKnownTypeWithName(gadgetV2GV.WithKind("Gadget"), &gadgetV2{})
	sch.AddKnownTypeWithName(gadgetV2GV.WithKind("GadgetList"), &gadgetV2List{})
	metav1.AddToGroupVersion(sch, gadgetV1GV)
	metav1.AddToGroupVersion(sch, gadgetV2GV)
	s := New(Options{Seed: 1, Scheme: sch})
	gc := &gadgetConverter{calls: map[schema.GroupVersion]int{}, hub: HubConversion(sch)}
	gc.install(s)
	return s, gc
}

// install (re)registers the converter, as after changing its switches: the
// simulator reuses conversions of unchanged objects until then.
func (gc *gadgetConverter) install(s *Sim) { s.SetConversion(gadgetGK, "v2", gc.convert) }
