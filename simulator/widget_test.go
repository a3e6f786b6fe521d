package simulator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// widget is a custom-resource type for the tests (the simulator must not
// import the operator's API types).
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec   `json:"spec,omitempty"`
	Status            widgetStatus `json:"status,omitempty"`
}

type widgetSpec struct {
	Size  int      `json:"size,omitempty"`
	Items []string `json:"items,omitempty"`
}

type widgetStatus struct {
	Phase string `json:"phase,omitempty"`
}

type widgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []widget `json:"items"`
}

var widgetGV = schema.GroupVersion{Group: "test.sim.dev", Version: "v1"}

func (w *widget) DeepCopyObject() runtime.Object {
	c := *w
	w.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Items = append([]string(nil), w.Spec.Items...)
	return &c
}

func (l *widgetList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]widget, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*widget)
	}
	return &c
}

// testScheme is client-go's scheme plus widget.
func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	s.AddKnownTypes(widgetGV, &widget{}, &widgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return s
}
