package simulator

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Names of the model controllers (see Sim.Controller).
const (
	DeploymentControllerName = "deployment-controller"
	ReplicaSetControllerName = "replicaset-controller"
)

// DeploymentWriteRoundTrip is the virtual time each API write keeps the
// Deployment controller model busy, as the real controller's sequential
// calls do (a sync that scales the old ReplicaSet down writes it, then the
// Deployment's status; one that creates the new ReplicaSet writes it, the
// revision status, then the rollout status, which conflicts:
// getNewReplicaSet keeps the Deployment it read — k8s.io/kubernetes
// pkg/controller/deployment rolling.go rolloutRolling, sync.go
// getNewReplicaSet). Meanwhile the ReplicaSet controller, whose model stays
// instantaneous, acts on the scale and reports its pods, so the
// Deployment's next sync reads the ReplicaSets as they are after it: the
// old ReplicaSet's pod is deleting before the next scale-up creates one,
// and the first status of a new generation counts the new ReplicaSet's
// pods — orders `make fidelity` records on the local control plane.
//
// Both orders occur there. Whether the Deployment controller's retry
// (after the conflict, 5 ms back-off) reads the new ReplicaSet before or
// after the ReplicaSet controller's second sync reports its pods
// (replica_set.go syncReplicaSet: the status is computed from the pods
// listed before manageReplicas, so the first sync reports 0) depends on
// the API round trip: three runs of the @real features on 2 loaded cores
// (2026-12-02) showed a first status of `rep 0 upd 0` after 55–59 of 72
// creates and the ReplicaSet's pods in the rest. The model yields the
// latter only: its writes take effect at the start of a reconcile. The
// fidelity report counts the missing `rep 0` state as grain (real refines
// sim), which it is: an intermediate state, the shared states in one order.
const DeploymentWriteRoundTrip = time.Millisecond

// KubeOptions configure the models InstallKubeControllers adds. The zero
// value gives the defaults documented on each field.
type KubeOptions struct {
	// DeploymentDelay and ReplicaSetDelay delay every watch event's delivery
	// to the Deployment / ReplicaSet controller (virtual time; default 0).
	DeploymentDelay time.Duration
	ReplicaSetDelay time.Duration
	// SchedulerDelay is the time from pod creation to binding (default 0).
	SchedulerDelay time.Duration
	// Nodes are the nodes pods are bound to, created Ready if missing
	// (default one, "kwok-node-0"; NodeNames(n) names n of them as the
	// local control plane does).
	Nodes []string
	// CrashLoopRunTime is how long a "crashloop" container runs before it
	// exits (default 500ms).
	CrashLoopRunTime time.Duration
	// DisableTerminatingReplicas turns the DeploymentReplicaSetTerminatingReplicas
	// feature gate off: status.terminatingReplicas stays nil, as on
	// clusters before 1.35.
	DisableTerminatingReplicas bool
	// DisableGarbageCollector keeps dependents when their owner is deleted.
	DisableGarbageCollector bool
}

func (o KubeOptions) withDefaults() KubeOptions {
	if len(o.Nodes) == 0 {
		o.Nodes = []string{"kwok-node-0"}
	}
	if o.CrashLoopRunTime <= 0 {
		o.CrashLoopRunTime = 500 * time.Millisecond
	}
	return o
}

// InstallKubeControllers adds the models of kube-controller-manager's
// Deployment, ReplicaSet, StatefulSet and DaemonSet controllers (and its
// garbage collector),
// kube-scheduler and a kwok-style kubelet, and creates the nodes. It panics
// if called twice.
func (s *Sim) InstallKubeControllers(opts KubeOptions) {
	if s.Controller(DeploymentControllerName) != nil {
		panic("simulator: InstallKubeControllers called twice")
	}
	opts = opts.withDefaults()
	kcm := s.clientFor("kube-controller-manager")
	s.installNodes(opts.Nodes)
	newScheduler(s, opts).install()
	newKubelet(s, opts).install()
	if !opts.DisableGarbageCollector {
		newGarbageCollector(s).install()
	}
	rsc := &replicaSetController{s: s, c: kcm, terminatingReplicas: !opts.DisableTerminatingReplicas}
	s.AddController(ReplicaSetControllerName, rsc,
		Watch{Object: &appsv1.ReplicaSet{}},
		Watch{Object: &corev1.Pod{}, Map: MapToControllerOwner("ReplicaSet")},
	).SetWatchDelay(opts.ReplicaSetDelay)
	dc := &deploymentController{s: s, c: kcm, terminatingReplicas: !opts.DisableTerminatingReplicas, templates: templateMatch{check: s.shared.on}}
	dc.ctrl = s.AddController(DeploymentControllerName, dc,
		Watch{Object: &appsv1.Deployment{}},
		Watch{Object: &appsv1.ReplicaSet{}, Map: MapToControllerOwner("Deployment")},
		Watch{Object: &corev1.Pod{}, Map: dc.mapDeletedPod, Filter: func(ev WatchEvent) bool { return ev.Type == watch.Deleted }},
	).SetWatchDelay(opts.DeploymentDelay).SetWriteDuration(DeploymentWriteRoundTrip)
	s.installWorkloadControllers(kcm)
	s.installResourceQuotaController(kcm)
}

// MapToControllerOwner is a Watch.Map to an object's controller owner of
// the given kind in its namespace (the informer handlers'
// resolveControllerRef; handler.EnqueueRequestForOwner with OnlyControllerOwner).
func MapToControllerOwner(kind string) func(_ context.Context, obj client.Object) []reconcile.Request {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		ref := metav1.GetControllerOfNoCopy(obj)
		if ref == nil || ref.Kind != kind {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
	}
}
