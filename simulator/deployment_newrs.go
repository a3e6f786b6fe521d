package simulator

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// getNewReplicaSet returns the ReplicaSet matching the Deployment's
// template, bringing its annotations and minReadySeconds up to date, or
// creates it (with pod-template-hash, revision max(old)+1 and its first
// size) when asked. It writes the Deployment's status (revision annotation,
// Progressing condition) when that changes — keeping d at the version it
// read, as the real one does, so a later status write in the same sync
// conflicts.
func (dc *deploymentController) getNewReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList, oldRSs []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	existing := findNewReplicaSet(d, rsList, &dc.templates)
	newRevision := strconv.FormatInt(maxRevision(oldRSs)+1, 10)
	if existing != nil {
		return dc.syncExistingNewReplicaSet(ctx, d, existing, newRevision)
	}
	if !create {
		return nil, nil
	}
	rs := dc.newReplicaSetFor(d, oldRSs, newRevision)
	created, alreadyExisted, err := dc.createReplicaSet(ctx, d, rs)
	if err != nil {
		return nil, err
	}
	needsUpdate := setDeploymentRevision(d, newRevision)
	if !alreadyExisted && hasProgressDeadline(d) {
		setDeploymentCondition(&d.Status, newDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue,
			ReasonNewReplicaSet, fmt.Sprintf("Created new replica set %q", created.Name), dc.s.now))
		needsUpdate = true
	}
	if needsUpdate {
		if err := dc.updateStatus(ctx, d); err != nil {
			return created, err
		}
	}
	return created, nil
}

func (dc *deploymentController) syncExistingNewReplicaSet(ctx context.Context, d *appsv1.Deployment, existing *appsv1.ReplicaSet, newRevision string) (*appsv1.ReplicaSet, error) {
	// Upstream deep-copies the ReplicaSet (rsCopy) before setting its
	// annotations. The model sets them on a copy of the annotations alone
	// (all setNewReplicaSetAnnotations reads and changes for an existing
	// one, kept in a probe on the stack) and deep-copies only to write;
	// otherwise it returns the listed ReplicaSet itself, whose annotations
	// the probe then holds unchanged, read only as the list is (a write
	// into it would be caught by CheckSharedReads): the callers copy before
	// they scale it (scaleReplicaSet).
	var probe appsv1.ReplicaSet
	probe.Annotations = maps.Clone(existing.Annotations)
	annotationsChanged := setNewReplicaSetAnnotations(d, &probe, newRevision, true)
	if annotationsChanged || existing.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		rs := existing.DeepCopy()
		rs.Annotations = probe.Annotations
		rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
		if err := dc.c.Update(ctx, rs); err != nil {
			return nil, fmt.Errorf("update new replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
		}
		return rs, nil
	}
	rs := existing
	if existing.Annotations == nil {
		// setNewReplicaSetAnnotations made them an empty map, as upstream's
		// copy holds.
		rs = new(appsv1.ReplicaSet)
		*rs = *existing
		rs.Annotations = probe.Annotations
	}
	needsUpdate := setDeploymentRevision(d, rs.Annotations[RevisionAnnotation])
	if hasProgressDeadline(d) && getDeploymentCondition(d.Status, appsv1.DeploymentProgressing) == nil {
		setDeploymentCondition(&d.Status, newDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue,
			ReasonFoundNewRS, fmt.Sprintf("Found new replica set %q", rs.Name), dc.s.now))
		needsUpdate = true
	}
	if needsUpdate {
		if err := dc.updateStatus(ctx, d); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// newReplicaSetFor builds the Deployment's next ReplicaSet.
func (dc *deploymentController) newReplicaSetFor(d *appsv1.Deployment, oldRSs []*appsv1.ReplicaSet, newRevision string) *appsv1.ReplicaSet {
	template := d.Spec.Template.DeepCopy()
	hash := podTemplateHash(&d.Spec.Template, d.Status.CollisionCount)
	template.Labels = withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	selector := d.Spec.Selector.DeepCopy()
	selector.MatchLabels = withLabel(selector.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: replicaSetName(d.Name, hash), Namespace: d.Namespace, Labels: template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), MinReadySeconds: d.Spec.MinReadySeconds,
			Selector: selector, Template: *template},
	}
	*rs.Spec.Replicas = newRSNewReplicas(d, append(oldRSs, rs), rs)
	setNewReplicaSetAnnotations(d, rs, newRevision, false)
	return rs
}

// createReplicaSet creates rs; if the name is taken by the Deployment's own
// ReplicaSet with an equal template that one is used, otherwise it is a hash
// collision: collisionCount is bumped and the sync retried.
func (dc *deploymentController) createReplicaSet(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, bool, error) {
	err := dc.c.Create(ctx, rs)
	switch {
	case err == nil:
		return rs, false, nil
	case !apierrors.IsAlreadyExists(err):
		if hasProgressDeadline(d) {
			setDeploymentCondition(&d.Status, newDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse,
				ReasonFailedRSCreate, fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err), dc.s.now))
			_ = dc.updateStatus(ctx, d)
		}
		return nil, false, fmt.Errorf("create replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	cur := &appsv1.ReplicaSet{}
	if gerr := dc.c.Get(ctx, client.ObjectKeyFromObject(rs), cur); gerr != nil {
		return nil, false, gerr
	}
	if ref := metav1.GetControllerOfNoCopy(cur); ref != nil && ref.UID == d.UID && equalIgnoreHash(&d.Spec.Template, &cur.Spec.Template) {
		return cur, true, nil
	}
	d.Status.CollisionCount = ptr.To(ptr.Deref(d.Status.CollisionCount, 0) + 1)
	_ = dc.updateStatus(ctx, d)
	return nil, false, err
}

func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}
