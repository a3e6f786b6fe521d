package v1alpha1

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// Component names a v1alpha1 upgrade has once converted to v1beta1: the API
// depends on the worker.
const (
	WorkerComponent = "worker"
	APIComponent    = "api"
)

// ConversionDataAnnotation holds, on a v1alpha1 object converted down from
// v1beta1, the v1beta1 spec and status as JSON, so that converting it back
// up restores what v1alpha1 cannot express (more than two components,
// component names, per-component phases and messages). It is dropped on the
// way up; a v1alpha1 client that changes the spec or status wins over it.
const ConversionDataAnnotation = "upgrades.lunadas.dev/conversion-data"

var _ conversion.Convertible = &ApplicationUpgrade{}

// conversionData is what ConversionDataAnnotation stores.
type conversionData struct {
	Spec   v1beta1.ApplicationUpgradeSpec   `json:"spec"`
	Status v1beta1.ApplicationUpgradeStatus `json:"status"`
}

// ConvertTo converts this v1alpha1 upgrade to the v1beta1 hub: two
// components, "worker" and "api", the API depending on the worker; the
// phase becomes the upgrade phase plus the two component phases (see
// componentPhases). Errors only when the hub is not a v1beta1 ApplicationUpgrade.
func (src *ApplicationUpgrade) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v1beta1.ApplicationUpgrade)
	if !ok {
		return fmt.Errorf("convert applicationupgrade %s/%s to v1beta1: unexpected hub type %T", src.Namespace, src.Name, dstRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = specToHub(src.Spec)
	dst.Status = statusToHub(src.Status)
	data, hasData := dst.Annotations[ConversionDataAnnotation]
	if hasData {
		saved, ok := readConversionData(data)
		if !ok {
			// Not a record ConvertFrom wrote (not JSON, or unknown
			// fields): kept on the object, so admission refuses the
			// v1alpha1 write that carries it (AlphaWriteError) rather
			// than it being dropped unseen.
			return nil
		}
		delete(dst.Annotations, ConversionDataAnnotation)
		if len(dst.Annotations) == 0 {
			dst.Annotations = nil
		}
		{
			// Merge what v1alpha1 changed into the saved graph.
			if equality.Semantic.DeepEqual(specFromHub(saved.Spec), src.Spec) {
				dst.Spec = saved.Spec
			} else {
				dst.Spec = MergeSpec(saved.Spec, src.Spec)
			}
			if equality.Semantic.DeepEqual(statusFromHub(saved.Spec, saved.Status), src.Status) {
				dst.Status = saved.Status
			} else {
				dst.Status = mergeStatus(saved.Spec, saved.Status, src.Status)
			}
		}
	}
	return nil
}

// readConversionData decodes ConversionDataAnnotation strictly: ok only
// for one JSON object of conversionData's fields alone (every field
// known), as ConvertFrom writes it.
func readConversionData(data string) (conversionData, bool) {
	var saved conversionData
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&saved); err != nil || dec.More() {
		return conversionData{}, false
	}
	return saved, true
}

// ConvertFrom converts the v1beta1 hub to this v1alpha1 upgrade. A graph
// that is not exactly "api depends on worker" is shown as its first and
// last components; the full v1beta1 spec and status travel in
// ConversionDataAnnotation so nothing is lost on the way back.
func (dst *ApplicationUpgrade) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v1beta1.ApplicationUpgrade)
	if !ok {
		return fmt.Errorf("convert applicationupgrade to v1alpha1: unexpected hub type %T", srcRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = specFromHub(src.Spec)
	dst.Status = statusFromHub(src.Spec, src.Status)
	back := &ApplicationUpgrade{Spec: dst.Spec, Status: dst.Status}
	var hub v1beta1.ApplicationUpgrade
	if err := back.ConvertTo(&hub); err != nil {
		return err
	}
	// reflect.DeepEqual first: strict equality implies the semantic one
	// and is the usual answer here, without the semantic comparison's
	// allocations (it boxes every time it compares).
	if semanticEqual(hub.Spec, src.Spec) && semanticEqual(hub.Status, src.Status) {
		return nil // v1alpha1 says it all
	}
	data, err := json.Marshal(conversionData{Spec: src.Spec, Status: src.Status})
	if err != nil {
		return fmt.Errorf("convert applicationupgrade %s/%s to v1alpha1: %w", src.Namespace, src.Name, err)
	}
	if dst.Annotations == nil {
		dst.Annotations = map[string]string{}
	}
	dst.Annotations[ConversionDataAnnotation] = string(data)
	return nil
}

func specToHub(s ApplicationUpgradeSpec) v1beta1.ApplicationUpgradeSpec {
	return v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
		componentToHub(WorkerComponent, s.Worker, nil),
		componentToHub(APIComponent, s.API, []string{WorkerComponent}),
	}}
}

func componentToHub(name string, c ComponentSpec, deps []string) v1beta1.Component {
	return v1beta1.Component{Name: name, DeploymentRef: v1beta1.DeploymentReference{Name: c.DeploymentRef.Name},
		Image: c.Image, ContainerName: c.ContainerName, DependsOn: deps}
}

// pair picks the components v1alpha1 shows as worker and API: the first
// and the last component in upgrade order (wave, then spec order) — for
// the graph "api depends on worker" the callee and the caller; for one
// component, that component twice.
func pair(s v1beta1.ApplicationUpgradeSpec) (worker, api int) {
	order := upgradeOrder(s.Components)
	if len(order) == 0 {
		return -1, -1
	}
	return order[0], order[len(order)-1]
}

// upgradeOrder is the component indexes by wave (0 for no dependencies,
// else one more than the deepest dependency), then spec order. A
// component on a cycle (refused at admission) counts as wave 0 there.
func upgradeOrder(cs []v1beta1.Component) []int {
	index := make(map[string]int, len(cs))
	for i := range cs {
		index[cs[i].Name] = i
	}
	wave := make([]int, len(cs))
	state := make([]int8, len(cs)) // 0 unvisited, 1 visiting, 2 done
	var visit func(i int) int
	visit = func(i int) int {
		switch state[i] {
		case 1:
			return -1
		case 2:
			return wave[i]
		}
		state[i] = 1
		w := 0
		for _, d := range cs[i].DependsOn {
			if j, ok := index[d]; ok {
				w = max(w, visit(j)+1)
			}
		}
		wave[i], state[i] = w, 2
		return w
	}
	order := make([]int, len(cs))
	for i := range cs {
		visit(i)
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return wave[order[a]] < wave[order[b]] })
	return order
}

// MergeSpec is hub with what a v1alpha1 spec says written over the two
// components v1alpha1 shows (see pair): worker's image, container name and
// Deployment name onto the first component in upgrade order, api's onto
// the last; every other component, edge and namespace is kept. A
// one-component graph takes worker's fields, unless worker and api
// disagree: that cannot be represented, and the result is the plain
// two-component graph of s (which admission refuses, see AlphaWriteError).
func MergeSpec(hub v1beta1.ApplicationUpgradeSpec, s ApplicationUpgradeSpec) v1beta1.ApplicationUpgradeSpec {
	w, a := pair(hub)
	if w < 0 || (w == a && s.Worker != s.API) {
		return specToHub(s)
	}
	out := *hub.DeepCopy()
	mergeComponent(&out.Components[w], s.Worker)
	mergeComponent(&out.Components[a], s.API)
	return out
}

// mergeComponent writes a v1alpha1 component's fields onto dst; the name
// goes into whichever reference dst uses (a workloadRef keeps its kind).
func mergeComponent(dst *v1beta1.Component, c ComponentSpec) {
	if dst.WorkloadRef != nil {
		dst.WorkloadRef.Name = c.DeploymentRef.Name
	} else {
		dst.DeploymentRef.Name = c.DeploymentRef.Name
	}
	dst.Image, dst.ContainerName = c.Image, c.ContainerName
}

// mergeStatus is the saved v1beta1 status with what a v1alpha1 status
// changed: message, generation, conditions, the upgrade phase (and the two
// shown components' phases, when the v1alpha1 phase changed) and the two
// shown components' images.
func mergeStatus(spec v1beta1.ApplicationUpgradeSpec, saved v1beta1.ApplicationUpgradeStatus, s ApplicationUpgradeStatus) v1beta1.ApplicationUpgradeStatus {
	out := *saved.DeepCopy()
	alpha := statusToHub(s)
	out.Message, out.ObservedGeneration, out.PhaseStartTime, out.Conditions = alpha.Message, alpha.ObservedGeneration, alpha.PhaseStartTime, alpha.Conditions
	w, a := pair(spec)
	if w < 0 {
		return alpha
	}
	view := statusFromHub(spec, saved)
	for k, src := range map[int]ComponentStatus{w: s.Worker, a: s.API} {
		name := spec.Components[k].Name
		found := false
		for i := range out.Components {
			if c := &out.Components[i]; c.Name == name {
				c.Image, c.ShortImage, c.WrittenGeneration, found = src.Image, src.ShortImage, src.WrittenGeneration, true
			}
		}
		if !found {
			out.Components = append(out.Components, v1beta1.ComponentStatus{Name: name, Kind: spec.Components[k].Kind(), Image: src.Image, ShortImage: src.ShortImage, WrittenGeneration: src.WrittenGeneration})
		}
	}
	if s.Phase != view.Phase {
		var wp, ap v1beta1.ComponentPhase
		out.Phase, wp, ap = componentPhases(s.Phase)
		for i := range out.Components {
			switch out.Components[i].Name {
			case spec.Components[w].Name:
				out.Components[i].Phase = wp
			case spec.Components[a].Name:
				out.Components[i].Phase = ap
			}
		}
	}
	out.RolledOut = v1beta1.RolledOut(out.Components)
	return out
}

func specFromHub(s v1beta1.ApplicationUpgradeSpec) ApplicationUpgradeSpec {
	w, a := pair(s)
	var out ApplicationUpgradeSpec
	if w >= 0 {
		out.Worker = componentFromHub(s.Components[w])
		out.API = componentFromHub(s.Components[a])
	}
	return out
}

// componentFromHub is the v1alpha1 view of c. v1alpha1 names only
// Deployments: a StatefulSet or DaemonSet (workloadRef) shows under
// deploymentRef by name, and its kind travels in ConversionDataAnnotation
// (ConvertFrom stores it there because the view does not convert back to
// the same spec).
func componentFromHub(c v1beta1.Component) ComponentSpec {
	return ComponentSpec{DeploymentRef: DeploymentReference{Name: c.WorkloadName()}, Image: c.Image, ContainerName: c.ContainerName}
}

// componentPhases maps a v1alpha1 phase to the v1beta1 upgrade phase and the
// worker and API component phases:
//
//	Pending           Pending      Pending    Pending
//	UpgradingWorkers  Progressing  Upgrading  Pending
//	WaitingForWorkers Progressing  RollingOut Pending
//	UpgradingAPI      Progressing  Rolled     Upgrading
//	WaitingForAPI     Progressing  Rolled     RollingOut
//	Completed         Completed    Rolled     Rolled
//	Failed            Failed       Failed     Blocked
func componentPhases(p Phase) (v1beta1.Phase, v1beta1.ComponentPhase, v1beta1.ComponentPhase) {
	switch p {
	case PhasePending:
		return v1beta1.PhasePending, v1beta1.ComponentPending, v1beta1.ComponentPending
	case PhaseUpgradingWorkers:
		return v1beta1.PhaseProgressing, v1beta1.ComponentUpgrading, v1beta1.ComponentPending
	case PhaseWaitingForWorkers:
		return v1beta1.PhaseProgressing, v1beta1.ComponentRollingOut, v1beta1.ComponentPending
	case PhaseUpgradingAPI:
		return v1beta1.PhaseProgressing, v1beta1.ComponentRolled, v1beta1.ComponentUpgrading
	case PhaseWaitingForAPI:
		return v1beta1.PhaseProgressing, v1beta1.ComponentRolled, v1beta1.ComponentRollingOut
	case PhaseCompleted:
		return v1beta1.PhaseCompleted, v1beta1.ComponentRolled, v1beta1.ComponentRolled
	case PhaseFailed:
		return v1beta1.PhaseFailed, v1beta1.ComponentFailed, v1beta1.ComponentBlocked
	}
	return v1beta1.Phase(p), "", ""
}

// PhaseFromHub is status.phase of u's v1alpha1 view (what ConvertFrom
// writes there), read without converting the rest of u.
func PhaseFromHub(u *v1beta1.ApplicationUpgrade) Phase {
	w, a := pair(u.Spec)
	var worker, api v1beta1.ComponentPhase
	if w >= 0 {
		worker = u.Status.Component(u.Spec.Components[w].Name).Phase
		api = u.Status.Component(u.Spec.Components[a].Name).Phase
	}
	return PhaseOf(u.Status.Phase, worker, api)
}

// PhaseOf is the v1alpha1 phase of a v1beta1 upgrade phase with its worker
// (callee) and API (caller) component phases; the inverse of componentPhases.
func PhaseOf(p v1beta1.Phase, worker, api v1beta1.ComponentPhase) Phase {
	switch p {
	case v1beta1.PhasePending:
		return PhasePending
	case v1beta1.PhaseCompleted:
		return PhaseCompleted
	case v1beta1.PhaseFailed:
		return PhaseFailed
	case v1beta1.PhaseProgressing:
	default:
		return Phase(p)
	}
	switch worker {
	case v1beta1.ComponentRollingOut, v1beta1.ComponentReverted:
		return PhaseWaitingForWorkers
	case v1beta1.ComponentRolled:
	case v1beta1.ComponentFailed:
		return PhaseFailed
	default:
		return PhaseUpgradingWorkers
	}
	switch api {
	case v1beta1.ComponentRollingOut, v1beta1.ComponentReverted:
		return PhaseWaitingForAPI
	case v1beta1.ComponentRolled:
		// Still Progressing with both Rolled: a graph with more components
		// (another one still rolling out). Never Completed before the
		// upgrade is: the last phase before it.
		return PhaseWaitingForAPI
	case v1beta1.ComponentFailed:
		return PhaseFailed
	}
	return PhaseUpgradingAPI
}

func statusToHub(s ApplicationUpgradeStatus) v1beta1.ApplicationUpgradeStatus {
	out := v1beta1.ApplicationUpgradeStatus{Message: s.Message, ObservedGeneration: s.ObservedGeneration}
	if s.PhaseStartTime != nil {
		out.PhaseStartTime = s.PhaseStartTime.DeepCopy()
	}
	for _, c := range s.Conditions {
		out.Conditions = append(out.Conditions, *c.DeepCopy())
	}
	var wp, ap v1beta1.ComponentPhase
	out.Phase, wp, ap = componentPhases(s.Phase)
	if s.Phase == "" && s.Worker == (ComponentStatus{}) && s.API == (ComponentStatus{}) {
		return out
	}
	out.Components = []v1beta1.ComponentStatus{
		componentStatusToHub(WorkerComponent, 0, wp, s.Worker),
		componentStatusToHub(APIComponent, 1, ap, s.API),
	}
	out.RolledOut = v1beta1.RolledOut(out.Components)
	out.Workloads = alphaWorkloads
	return out
}

// alphaWorkloads is status.workloads of every v1alpha1 upgrade: two Deployments.
var alphaWorkloads = v1beta1.Workloads([]v1beta1.Component{{}, {}})

func componentStatusToHub(name string, wave int32, p v1beta1.ComponentPhase, c ComponentStatus) v1beta1.ComponentStatus {
	return v1beta1.ComponentStatus{Name: name, Kind: v1beta1.KindDeployment, Wave: wave, Phase: p, Image: c.Image, ShortImage: c.ShortImage, WrittenGeneration: c.WrittenGeneration}
}

func statusFromHub(spec v1beta1.ApplicationUpgradeSpec, s v1beta1.ApplicationUpgradeStatus) ApplicationUpgradeStatus {
	out := ApplicationUpgradeStatus{Message: s.Message, ObservedGeneration: s.ObservedGeneration}
	if s.PhaseStartTime != nil {
		out.PhaseStartTime = s.PhaseStartTime.DeepCopy()
	}
	for _, c := range s.Conditions {
		out.Conditions = append(out.Conditions, *c.DeepCopy())
	}
	w, a := pair(spec)
	var worker, api v1beta1.ComponentStatus
	if w >= 0 {
		worker = s.Component(spec.Components[w].Name)
		api = s.Component(spec.Components[a].Name)
	}
	out.Phase = PhaseOf(s.Phase, worker.Phase, api.Phase)
	out.Worker = ComponentStatus{Image: worker.Image, ShortImage: worker.ShortImage, WrittenGeneration: worker.WrittenGeneration}
	out.API = ComponentStatus{Image: api.Image, ShortImage: api.ShortImage, WrittenGeneration: api.WrittenGeneration}
	return out
}

// semanticEqual is equality.Semantic.DeepEqual, answered by
// reflect.DeepEqual when that already holds.
func semanticEqual(a, b any) bool {
	return reflect.DeepEqual(a, b) || equality.Semantic.DeepEqual(a, b)
}
