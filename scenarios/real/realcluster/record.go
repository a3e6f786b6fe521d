package realcluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

// Sink receives watch events; *eventlog.Recorder and *console.Console are sinks.
type Sink interface {
	Observe(typ watch.EventType, obj client.Object, at time.Time)
}

// Observer feeds a Sink from watches of the workloads (Deployments,
// StatefulSets, DaemonSets and their ControllerRevisions), pods and
// ApplicationUpgrades in one namespace, stamping events with the wall clock
// at arrival (events of different watches may arrive out of order; their
// resourceVersions give the true order).
type Observer struct {
	watches []watch.Interface
	done    chan struct{}
}

// Observe starts the watches; call it before creating the objects so every
// pod is seen from its creation. Stop ends them.
func Observe(ctx context.Context, cfg *rest.Config, namespace string, rec Sink) (*Observer, error) {
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("create watch client: %w", err)
	}
	o := &Observer{done: make(chan struct{})}
	lists := []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.DaemonSetList{},
		&appsv1.ControllerRevisionList{}, &corev1.PodList{}, &upgradesv1alpha1.ApplicationUpgradeList{}}
	for _, l := range lists {
		w, err := c.Watch(ctx, l, client.InNamespace(namespace))
		if err != nil {
			o.Stop()
			return nil, fmt.Errorf("watch %T in namespace %s: %w", l, namespace, err)
		}
		o.watches = append(o.watches, w)
	}
	merged := make(chan watch.Event)
	for _, w := range o.watches {
		go func(w watch.Interface) {
			for ev := range w.ResultChan() {
				select {
				case merged <- ev:
				case <-o.done:
					return
				}
			}
		}(w)
	}
	go func() {
		for {
			select {
			case ev := <-merged:
				if obj, ok := ev.Object.(client.Object); ok && ev.Type != watch.Error && ev.Type != watch.Bookmark {
					rec.Observe(ev.Type, obj, time.Now())
				}
			case <-o.done:
				return
			}
		}
	}()
	return o, nil
}

// Stop ends the watches.
func (o *Observer) Stop() {
	select {
	case <-o.done:
	default:
		close(o.done)
	}
	for _, w := range o.watches {
		w.Stop()
	}
}
