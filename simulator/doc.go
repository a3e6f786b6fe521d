// Package simulator is a single-threaded discrete-event simulator of a
// Kubernetes API server plus the kube-controller-manager's Deployment and
// ReplicaSet controllers, the scheduler and a kwok-style kubelet. Any
// controller-runtime reconcile.Reconciler runs inside it in virtual time.
//
// Everything happens on the caller's goroutine: events sit in a heap ordered
// by (virtual time, sequence number) and Run pops them one at a time. Every
// random choice comes from one seeded *rand.Rand, so the same seed replays
// the same run byte for byte. Nothing in this package reads the wall clock.
//
// The API store (store*.go, client*.go) mirrors the semantics of
// k8s.io/apiserver's generic registry that controllers depend on:
// resourceVersion conflicts, generation bumps on spec changes only, the status
// subresource, merge / strategic-merge / JSON patches, label and field
// selectors, graceful pod deletion and finalizers. The controller models are
// named after the Kubernetes code they mirror (deployment_*.go after
// pkg/controller/deployment, replicaset_*.go after pkg/controller/replicaset,
// kubelet*.go after kwok's pod stages and the kubelet's back-off).
package simulator
