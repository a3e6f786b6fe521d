package rollout

import (
	"time"

	"bytes"
	"encoding/json"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// DaemonSetTemplateGenerationLabel is the pod label the DaemonSet
// controller sets to the DaemonSet's template generation
// (k8s.io/api/extensions/v1beta1 DaemonSetTemplateGenerationKey, set by
// CreatePodTemplate in k8s.io/kubernetes pkg/controller/daemon/util).
const DaemonSetTemplateGenerationLabel = "pod-template-generation"

// DaemonSetRevision is how the DaemonSet controller tells a pod of the
// current template: Hash, the controller-revision-hash label of the
// DaemonSet's current ControllerRevision (constructHistory in
// pkg/controller/daemon/update.go labels each revision with its own name
// and syncDaemonSet passes cur.Labels[controller-revision-hash] on), and
// Generation, the deprecated.daemonset.template.generation annotation
// (util.GetTemplateGeneration), nil when absent.
type DaemonSetRevision struct {
	Hash       string
	Generation *int64
}

// Updated is util.IsPodUpdated (pkg/controller/daemon/util/daemonset_util.go):
// the pod's controller-revision-hash equals Hash, or its
// pod-template-generation label equals Generation.
func (r DaemonSetRevision) Updated(p *corev1.Pod) bool {
	hashMatches := r.Hash != "" && p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == r.Hash
	genMatches := r.Generation != nil && p.Labels[DaemonSetTemplateGenerationLabel] == strconv.FormatInt(*r.Generation, 10)
	return hashMatches || genMatches
}

// CurrentDaemonSetRevision finds ds's current revision among its
// ControllerRevisions as the controller does (constructHistory, Match,
// getPatch in pkg/controller/daemon/update.go): the revisions ds controls
// (all when ds has no UID) whose data is byte for byte the strategic merge
// patch `{"spec":{"template":{...,"$patch":"replace"}}}` of ds's template;
// of several, the highest .revision (dedupCurHistories keeps that one).
// The hash is its controller-revision-hash label, or its name when
// unlabelled. A cache that has not seen the revision yet leaves Hash
// empty; the template generation still identifies new pods.
func CurrentDaemonSetRevision(ds *appsv1.DaemonSet, revisions []appsv1.ControllerRevision) DaemonSetRevision {
	var r DaemonSetRevision
	if s, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; ok {
		if g, err := strconv.ParseInt(s, 10, 64); err == nil {
			r.Generation = &g
		}
	}
	patch, err := daemonSetPatch(ds)
	if err != nil {
		return r
	}
	var best *appsv1.ControllerRevision
	for i := range revisions {
		cr := &revisions[i]
		if ds.UID != "" && !controlledBy(&cr.ObjectMeta, ds.UID) {
			continue
		}
		if bytes.Equal(patch, cr.Data.Raw) && (best == nil || cr.Revision > best.Revision) {
			best = cr
		}
	}
	if best != nil {
		r.Hash = best.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
		if r.Hash == "" {
			r.Hash = best.Name
		}
	}
	return r
}

// daemonSetPatch is getPatch of pkg/controller/daemon/update.go: ds as
// JSON, reduced to spec.template with "$patch": "replace".
func daemonSetPatch(ds *appsv1.DaemonSet) ([]byte, error) {
	b, err := json.Marshal(ds)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	spec, _ := raw["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		template = map[string]any{}
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// AssessDaemonSet decides whether ds is fully rolled out, from the
// DaemonSet, its ControllerRevisions and the pods its selector matches —
// terminating pods included. It mirrors what the DaemonSet controller of
// Kubernetes v1.37.2 publishes (pkg/controller/daemon/daemon_controller.go
// updateDaemonSetStatus: per node that should run the pod it counts only
// the oldest pod, for numberReady, numberAvailable and, by
// util.IsPodUpdated, updatedNumberScheduled; pods that are both terminal
// and terminating are left out by getNodesToDaemonPods; numberUnavailable
// is desired − available) and adds what the counters cannot say. In order:
//
//  1. status.observedGeneration >= metadata.generation;
//  2. the current revision is known (CurrentDaemonSetRevision);
//  3. failure: a pod of the current revision (not terminating) waiting in
//     a pull error or crash loop (the Deployment path's classification);
//  4. the OnDelete strategy with an old pod left: waiting, saying which
//     pods to delete (the operator never deletes pods);
//  5. the counters, in `kubectl rollout status` order
//     (staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go,
//     DaemonSetStatusViewer): updatedNumberScheduled and numberAvailable
//     reach desiredNumberScheduled; then numberUnavailable is 0 and
//     numberMisscheduled is 0;
//  6. the pod list: no pod of another revision — with maxSurge an old pod
//     runs beside the new one on its node until the new one is available,
//     then terminates while the counters may already be done — and no
//     terminating pod, and at least desiredNumberScheduled new pods, that
//     many of them available (podsReady).
//
// Pods controlled by another object than ds are ignored. Pure; never
// mutates its arguments.
func AssessDaemonSet(ds *appsv1.DaemonSet, revisions []appsv1.ControllerRevision, pods []corev1.Pod, opts Options) Verdict {
	if ds.DeletionTimestamp != nil {
		return failed(ReasonWorkloadBeingDeleted, "daemonset %s/%s is being deleted", ds.Namespace, ds.Name)
	}
	if ds.Status.ObservedGeneration < ds.Generation {
		return progressing(ReasonGenerationNotObserved,
			"waiting for the daemonset controller to observe generation %d (observed %d)", ds.Generation, ds.Status.ObservedGeneration)
	}
	rev := CurrentDaemonSetRevision(ds, revisions)
	if rev.Hash == "" && rev.Generation == nil {
		return progressing(ReasonRevisionUnknown,
			"no ControllerRevision of daemonset %s/%s matches its pod template yet, and it has no %s annotation", ds.Namespace, ds.Name, appsv1.DeprecatedTemplateGeneration)
	}
	mine := ownedBy(ds.UID, pods)
	if v, bad := podFailureWhere(mine, rev.Updated, opts); bad {
		return v
	}
	if ds.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
		if old := oldDaemonPods(mine, rev); len(old) > 0 {
			return progressing(ReasonOnDelete,
				"daemonset %s/%s uses the OnDelete update strategy: its controller replaces a pod only after someone deletes it, and this operator never deletes pods; delete the old pods (%s) or switch to RollingUpdate",
				ds.Namespace, ds.Name, names(old, 5))
		}
	}
	if v, done := daemonSetCounters(ds); !done {
		return v
	}
	return daemonPodsGone(ds, mine, rev, opts.Now)
}

// daemonSetCounters applies kubectl's two checks, then numberUnavailable
// and numberMisscheduled.
func daemonSetCounters(ds *appsv1.DaemonSet) (Verdict, bool) {
	s := ds.Status
	switch {
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled:
		return progressing(ReasonReplicasNotUpdated, "%d of %d nodes run the current revision", s.UpdatedNumberScheduled, s.DesiredNumberScheduled), false
	case s.NumberAvailable < s.DesiredNumberScheduled:
		return progressing(ReasonReplicasNotAvailable, "%d of %d updated pods available", s.NumberAvailable, s.DesiredNumberScheduled), false
	case s.NumberUnavailable > 0:
		return progressing(ReasonReplicasNotAvailable, "%d pods unavailable", s.NumberUnavailable), false
	case s.NumberMisscheduled > 0:
		return progressing(ReasonMisscheduled, "%d pods run on nodes that should not run them", s.NumberMisscheduled), false
	}
	return Verdict{}, true
}

// daemonPodsGone checks the live pod list: no old pod (naming the node,
// and the new pod beside it under maxSurge), none terminating, at least
// desiredNumberScheduled new pods, and that many available (podsReady).
func daemonPodsGone(ds *appsv1.DaemonSet, pods []corev1.Pod, rev DaemonSetRevision, now time.Time) Verdict {
	newOnNode := map[string]string{}
	for i := range pods {
		if p := &pods[i]; rev.Updated(p) && p.DeletionTimestamp == nil {
			newOnNode[p.Spec.NodeName] = p.Name
		}
	}
	newPods := int32(0)
	for i := range pods {
		p := &pods[i]
		switch {
		case !rev.Updated(p):
			beside := ""
			if n := newOnNode[p.Spec.NodeName]; n != "" && p.Spec.NodeName != "" {
				beside = ", beside new pod " + n + " (maxSurge)"
			}
			return progressing(ReasonOldPodsExist, "old pod %s on node %s still exists%s%s", p.Name, nodeOf(p), terminatingSuffix(p), beside)
		case p.DeletionTimestamp != nil:
			return progressing(ReasonPodsTerminating, "pod %s on node %s is terminating", p.Name, nodeOf(p))
		}
		newPods++
	}
	if newPods < ds.Status.DesiredNumberScheduled {
		return progressing(ReasonNewPodsNotCreated, "pod list shows %d of %d new pods", newPods, ds.Status.DesiredNumberScheduled)
	}
	if v, ok := podsReady(pods, ds.Status.DesiredNumberScheduled, ds.Spec.MinReadySeconds, now, "new pods"); !ok {
		return v
	}
	return Verdict{State: Rolled, Reason: ReasonRolled,
		Message: "all " + itoa(newPods) + " pods run the current revision and no old pod remains"}
}

func oldDaemonPods(pods []corev1.Pod, rev DaemonSetRevision) []corev1.Pod {
	var out []corev1.Pod
	for i := range pods {
		if !rev.Updated(&pods[i]) {
			out = append(out, pods[i])
		}
	}
	return out
}

// nodeOf is the pod's node, or "(unscheduled)".
func nodeOf(p *corev1.Pod) string {
	if p.Spec.NodeName == "" {
		return "(unscheduled)"
	}
	return p.Spec.NodeName
}
