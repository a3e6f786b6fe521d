package app

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// partitionClause is a StatefulSet step's "partition N" clause.
var partitionClause = regexp.MustCompile(`(?:^|,\s*|\s+and\s+|\s)partition (\d+)`)

// workloadStep declares a StatefulSet or DaemonSet component, with the
// clauses of a Deployment step (parseDeployment): for a StatefulSet
// "with N replicas" and "partition N" (RollingUpdate; surge and
// unavailable are refused: a StatefulSet has no surge), for a DaemonSet
// no replica count (one pod per node: tag the scenario @nodes-N) and
// "surge N", "unavailable N" as its rollingUpdate's maxSurge and
// maxUnavailable. The component of the workload references it by
// workloadRef.
func (s *scenario) workloadStep(ctx context.Context, kind, name, replicas, rest string) error {
	n := int32(1)
	switch {
	case kind == "DaemonSet" && replicas != "":
		return fmt.Errorf("a DaemonSet runs one pod per node: drop %q and tag the scenario @nodes-N", "with "+replicas+" replicas")
	case kind == "StatefulSet" && replicas == "":
		return fmt.Errorf("say how many replicas the StatefulSet %s has: the StatefulSet %q with N replicas, ...", name, name)
	case replicas != "":
		v, err := strconv.Atoi(replicas)
		if err != nil {
			return fmt.Errorf("replicas %q: %w", replicas, err)
		}
		n = int32(v)
	}
	var partition *int32
	if m := partitionClause.FindStringSubmatchIndex(rest); m != nil {
		if kind != "StatefulSet" {
			return fmt.Errorf("only a StatefulSet has a partition (the %s %s)", kind, name)
		}
		v, _ := strconv.Atoi(rest[m[2]:m[3]])
		partition = ptr.To(int32(v))
		rest = rest[:m[0]] + rest[m[1]:]
	}
	rest = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(rest), "with "), ",")
	spec, err := parseDeployment(roleComponent, name, n, rest)
	if err != nil {
		return err
	}
	if kind == "StatefulSet" && (spec.surge != nil || spec.unavail != nil || spec.recreate) {
		return fmt.Errorf("the StatefulSet %s: say its partition, not surge, unavailable or Recreate (a StatefulSet replaces pod-N only once the old pod-N is gone)", name)
	}
	spec.kind, spec.partition = kind, partition
	if s.named == nil {
		s.named = map[string]*deploymentSpec{}
	}
	s.named[name] = spec
	s.declared = append(s.declared, name)
	obj, err := spec.workload(s.cl.Namespace())
	if err != nil {
		return err
	}
	if err := s.cl.Client().Create(ctx, obj); err != nil {
		return fmt.Errorf("create %s %s/%s: %w", strings.ToLower(kind), s.cl.Namespace(), name, err)
	}
	return nil
}

// workload builds the StatefulSet or DaemonSet d declares: the pod
// template, labels and selector of d's Deployment (object); a
// StatefulSet with OrderedReady pod management and RollingUpdate (its
// partition, if any), a DaemonSet with RollingUpdate (surge and
// unavailable, if given).
func (d *deploymentSpec) workload(namespace string) (client.Object, error) {
	dep := d.object(namespace)
	meta := metav1.ObjectMeta{Namespace: namespace, Name: d.name, Labels: dep.Labels}
	switch d.kind {
	case string(upgradesv1beta1.KindStatefulSet):
		sts := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(d.replicas), ServiceName: d.name,
			Selector: dep.Spec.Selector, Template: dep.Spec.Template,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}}}
		if d.partition != nil {
			sts.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: d.partition}
		}
		return sts, nil
	case string(upgradesv1beta1.KindDaemonSet):
		ds := &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: dep.Spec.Selector, Template: dep.Spec.Template,
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}}}
		if d.surge != nil || d.unavail != nil {
			ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxSurge: d.surge, MaxUnavailable: d.unavail}
		}
		return ds, nil
	}
	return nil, fmt.Errorf("%s %s: not a StatefulSet or DaemonSet", d.kind, d.name)
}
