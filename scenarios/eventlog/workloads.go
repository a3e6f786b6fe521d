package eventlog

import (
	"encoding/json"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Workload kinds other than Deployment, as Event.Kind says them.
const (
	KindStatefulSet = "StatefulSet"
	KindDaemonSet   = "DaemonSet"
)

// WorkloadKey is the key of a workload in State.Deployments: Key(namespace,
// name) for a Deployment (kind "" or "Deployment"), Key(namespace,
// kind+"/"+name) for a StatefulSet or DaemonSet, so a Deployment and a
// StatefulSet of one name in one namespace stay apart.
func WorkloadKey(kind, namespace, name string) string {
	if kind == "" || kind == "Deployment" {
		return Key(namespace, name)
	}
	return Key(namespace, kind+"/"+name)
}

// WorkloadKey is the key of the event's workload: a pod event's owner
// (Deployment and Kind), else the object itself (Name and Kind: the
// workload a DeploymentWrite, DeploymentStatus or Revision is about).
func (e Event) WorkloadKey() string {
	switch e.Event {
	case PodCreated, PodReady, PodDeleting, PodDeleted:
		return WorkloadKey(e.Kind, e.Namespace, e.Deployment)
	}
	return WorkloadKey(e.Kind, e.Namespace, e.Name)
}

// workload records a StatefulSet's or DaemonSet's template writes, as
// deployment does a Deployment's: DeploymentWrite events with Kind set.
// HashAfter is the controller-revision-hash of the new template when one
// of the workload's ControllerRevisions already holds it (a revert to an
// earlier template), else "" and a Revision event follows when the
// controller creates the revision (revision).
func (r *Recorder) workload(typ watch.EventType, kind string, obj client.Object, template *corev1.PodTemplateSpec, at time.Time) {
	key := WorkloadKey(kind, obj.GetNamespace(), obj.GetName())
	if typ == watch.Deleted {
		delete(r.workloads, key)
		delete(r.revisions, key)
		return
	}
	prev, seen := r.workloads[key]
	changed := !seen || !equality.Semantic.DeepEqual(prev.template, *template)
	if !changed {
		return
	}
	now := workloadSeen{template: *template.DeepCopy(), hash: r.revisionHash(key, template)}
	r.workloads[key] = now
	base := Event{Event: DeploymentWrite, Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Deployment: obj.GetName(),
		RV: obj.GetResourceVersion(), Containers: containersOf(template.Spec.Containers), HashBefore: prev.hash, HashAfter: now.hash}
	if r.detailed {
		base.Images = imagesOf(base.Containers)
	}
	for _, e := range templateWrites(base, containersOf(prev.template.Spec.Containers), base.Containers, seen, true, obj) {
		r.add(e, at)
	}
}

// revisionHash is the controller-revision-hash of the workload's
// ControllerRevision holding template, or "".
func (r *Recorder) revisionHash(key string, template *corev1.PodTemplateSpec) string {
	for _, rev := range r.revisions[key] {
		if equality.Semantic.DeepEqual(rev.template, *template) {
			return rev.podHash
		}
	}
	return ""
}

// revisionData is the part of a ControllerRevision's data both
// controllers write: a patch restoring spec.template (kubernetes
// pkg/controller/statefulset/stateful_set_utils.go getPatch and
// pkg/controller/daemon/update.go getPatch; the "$patch" key is ignored).
type revisionData struct {
	Spec struct {
		Template corev1.PodTemplateSpec `json:"template"`
	} `json:"spec"`
}

// revision keeps a StatefulSet's or DaemonSet's ControllerRevision and,
// when it holds the workload's current template and its pods' hash is not
// yet known, records a Revision event. A StatefulSet labels its pods with
// the revision's name (pkg/controller/statefulset/stateful_set_utils.go
// newVersionedStatefulSetPod, StatefulSetRevisionLabel); a DaemonSet with
// the revision's controller-revision-hash label (pkg/controller/daemon
// daemon_controller.go, DefaultDaemonSetUniqueLabelKey).
func (r *Recorder) revision(typ watch.EventType, cr *appsv1.ControllerRevision, at time.Time) {
	ref := metav1.GetControllerOf(cr)
	if ref == nil || (ref.Kind != KindStatefulSet && ref.Kind != KindDaemonSet) {
		return
	}
	key := WorkloadKey(ref.Kind, cr.Namespace, ref.Name)
	if typ == watch.Deleted {
		delete(r.revisions[key], cr.Name)
		return
	}
	var data revisionData
	if err := json.Unmarshal(cr.Data.Raw, &data); err != nil {
		return // not a template patch: no pod carries its hash
	}
	podHash := cr.Name
	if ref.Kind == KindDaemonSet {
		podHash = cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	}
	if r.revisions[key] == nil {
		r.revisions[key] = map[string]revisionSeen{}
	}
	r.revisions[key][cr.Name] = revisionSeen{template: data.Spec.Template, podHash: podHash}
	w, ok := r.workloads[key]
	if !ok || w.hash == podHash || !equality.Semantic.DeepEqual(w.template, data.Spec.Template) {
		return
	}
	e := Event{Event: Revision, Kind: ref.Kind, Namespace: cr.Namespace, Name: ref.Name, Deployment: ref.Name,
		RV: cr.ResourceVersion, HashBefore: w.hash, HashAfter: podHash}
	w.hash = podHash
	r.workloads[key] = w
	r.add(e, at)
}

// ownerWorkload is the kind and name of p's controlling StatefulSet or
// DaemonSet, or "" and "".
func ownerWorkload(p *corev1.Pod) (kind, name string) {
	if ref := metav1.GetControllerOf(p); ref != nil && (ref.Kind == KindStatefulSet || ref.Kind == KindDaemonSet) {
		return ref.Kind, ref.Name
	}
	return "", ""
}

// workloadStatus records a WorkloadStatus event when c differs from the
// workload's last recorded counters.
func (r *Recorder) workloadStatus(kind string, obj client.Object, c WorkloadCounters, at time.Time) {
	key := WorkloadKey(kind, obj.GetNamespace(), obj.GetName())
	if prev, ok := r.wcounters[key]; ok && prev == c {
		return
	}
	r.wcounters[key] = c
	cp := c
	r.add(Event{Event: WorkloadStatus, Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Deployment: obj.GetName(),
		Workload: &cp, RV: obj.GetResourceVersion()}, at)
}

func statefulSetCounters(s *appsv1.StatefulSet) WorkloadCounters {
	st := s.Status
	c := WorkloadCounters{Generation: s.Generation, ObservedGeneration: st.ObservedGeneration, Spec: 1,
		Replicas: st.Replicas, Ready: st.ReadyReplicas, Available: st.AvailableReplicas, Current: st.CurrentReplicas,
		Updated: st.UpdatedReplicas, CurrentRevision: st.CurrentRevision, UpdateRevision: st.UpdateRevision}
	if s.Spec.Replicas != nil {
		c.Spec = *s.Spec.Replicas
	}
	return c
}

func daemonSetCounters(d *appsv1.DaemonSet) WorkloadCounters {
	st := d.Status
	return WorkloadCounters{Generation: d.Generation, ObservedGeneration: st.ObservedGeneration, Spec: st.DesiredNumberScheduled,
		Current: st.CurrentNumberScheduled, Updated: st.UpdatedNumberScheduled, Ready: st.NumberReady, Available: st.NumberAvailable,
		Unavailable: st.NumberUnavailable, Misscheduled: st.NumberMisscheduled}
}

// TargetNode is the node p runs on or is meant for: spec.nodeName, else
// the one node a required node-affinity term names by metadata.name (how
// the DaemonSet controller pins its pods before the scheduler binds them:
// kubernetes pkg/controller/daemon/util/daemonset_util.go
// GetTargetNodeName); "" when neither says one.
func TargetNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range t.MatchFields {
				if f.Key == metav1.ObjectNameField && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}
