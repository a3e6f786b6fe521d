// Package realbench is make bench's driver: handoff latency, ordering
// overhead and the poller baseline on a local real control plane
// (scenarios/real/controlplane), and the operator's cost versus cluster size.
// The cluster-driving code is behind the build tag bench; what is here
// without the tag (moments read from event logs, statistics, the table, the
// simulator's benchmark output) is pure and unit-tested.
package realbench

import (
	"math"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// Moments are what one upgrade's event log says, in seconds since the
// recording started; -1 where the moment is absent.
type Moments struct {
	// WorkerWrite and APIWrite are the first writes of the target images.
	WorkerWrite float64 `json:"workerWrite"`
	APIWrite    float64 `json:"apiWrite"`
	// WorkerGone and APIGone are the deletions of the last pod of an older
	// image, once the write was seen and the new pods were all Ready: the
	// moment the rollout really ended.
	WorkerGone float64 `json:"workerGone"`
	APIGone    float64 `json:"apiGone"`
	// Completed is the ApplicationUpgrade's Completed phase, if any.
	Completed float64 `json:"completed"`
	// Failed names a Failed phase's upgrade, if any.
	Failed bool `json:"failed,omitempty"`
	// OldWorkerPodsAtAPIWrite counts the worker pods of an older image
	// that still existed (terminating or not) when the API image was
	// written: the one judge's ordering violations (judge.Judge,
	// judge.Ordering on the worker → API edge).
	OldWorkerPodsAtAPIWrite int `json:"oldWorkerPodsAtAPIWrite"`
	// Judge is the one judge's first failure (the porcupine model, an
	// invariant, the ordering); "" when the writes were legal.
	Judge string `json:"judge,omitempty"`
}

// Handoff is APIWrite − WorkerGone in seconds: how long after the last old
// worker pod's deletion the API image was written; negative when it was
// written while old worker pods still existed. NaN when either is absent.
func (t Moments) Handoff() float64 {
	if t.APIWrite < 0 || t.WorkerGone < 0 {
		return math.NaN()
	}
	return t.APIWrite - t.WorkerGone
}

// Done reports whether both rollouts have ended.
func (t Moments) Done() bool { return t.WorkerGone >= 0 && t.APIGone >= 0 }

// Upgrade names one worker/API pair and the images it moves them to.
type Upgrade struct {
	Namespace           string
	Worker, API         string
	WorkerImage, APIImg string
	// Replicas of each Deployment: a rollout has ended when this many pods
	// of the new image were Ready and no pod of an older one is left.
	WorkerReplicas, APIReplicas int
}

// oldPodEvent says whether a pod event is of an old pod of its
// Deployment, by pod-template-hash against the template's whole history
// in events (eventlog.DeploymentState.OldHash).
func oldPodEvent(events []eventlog.Event) func(eventlog.Event) bool {
	final := eventlog.Final(events)
	return func(e eventlog.Event) bool {
		d := final.Deployments[eventlog.Key(e.Namespace, e.Deployment)]
		return d != nil && d.OldHash(e.Hash)
	}
}

// Measure reads u's Moments from events (any order; they are put in
// resourceVersion order as judge.Ordered does).
func Measure(events []eventlog.Event, u Upgrade) Moments {
	t := Moments{WorkerWrite: -1, APIWrite: -1, WorkerGone: -1, APIGone: -1, Completed: -1}
	type dep struct {
		target   string
		replicas int
		write    *float64
		gone     *float64
		oldLive  map[string]bool
		newReady map[string]bool
	}
	deps := map[string]*dep{
		u.Worker: {target: u.WorkerImage, replicas: u.WorkerReplicas, write: &t.WorkerWrite, gone: &t.WorkerGone, oldLive: map[string]bool{}, newReady: map[string]bool{}},
		u.API:    {target: u.APIImg, replicas: u.APIReplicas, write: &t.APIWrite, gone: &t.APIGone, oldLive: map[string]bool{}, newReady: map[string]bool{}},
	}
	old := oldPodEvent(events)
	for _, e := range judge.Ordered(events) {
		if e.Namespace != u.Namespace {
			continue
		}
		if e.Event == eventlog.Phase {
			switch e.Phase {
			case "Completed":
				if t.Completed < 0 {
					t.Completed = e.T
				}
			case "Failed":
				t.Failed = true
			}
			continue
		}
		d := deps[e.Deployment]
		if d == nil {
			continue
		}
		switch e.Event {
		case eventlog.DeploymentWrite:
			if e.Image == d.target && *d.write < 0 {
				*d.write = e.T
			}
		case eventlog.PodCreated:
			if old(e) {
				d.oldLive[e.Name] = true
			}
		case eventlog.PodReady:
			if !old(e) {
				d.newReady[e.Name] = true
			}
		case eventlog.PodDeleted:
			delete(d.newReady, e.Name)
			if d.oldLive[e.Name] {
				delete(d.oldLive, e.Name)
				if *d.write >= 0 && len(d.oldLive) == 0 && len(d.newReady) >= d.replicas && *d.gone < 0 {
					*d.gone = e.T
				}
			}
		}
	}
	// the one judge (judge.Judge) over the log: its per-edge ordering
	// counts the old worker pods, its porcupine model and invariants say
	// whether the writes were legal
	j := judge.JudgeEvents(events, []judge.UpgradeSpec{{Name: "bench", Namespace: u.Namespace,
		Worker: u.Worker, WorkerImage: u.WorkerImage, API: u.API, APIImage: u.APIImg}})
	for _, v := range j.Violations {
		if v.Check == judge.CheckOrdering {
			t.OldWorkerPodsAtAPIWrite++
		}
	}
	if !j.OK() {
		t.Judge = j.Summary()
	}
	return t
}

// Stats summarises samples (seconds).
type Stats struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	// SD is the sample standard deviation (0 for one sample).
	SD float64 `json:"sd"`
}

// Summarize computes Stats over the samples that are not NaN (all zero
// when there are none); percentiles
// are nearest-rank (p99 of fewer than 100 samples is the maximum).
func Summarize(samples []float64) Stats {
	var xs []float64
	for _, x := range samples {
		if !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return Stats{} // N 0: no figure (JSON has no NaN)
	}
	sort.Float64s(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	sd := 0.0
	if len(xs) > 1 {
		for _, x := range xs {
			sd += (x - mean) * (x - mean)
		}
		sd = math.Sqrt(sd / float64(len(xs)-1))
	}
	return Stats{N: len(xs), Mean: mean, Min: xs[0], P50: rank(xs, 0.50), P99: rank(xs, 0.99), Max: xs[len(xs)-1], SD: sd}
}

func rank(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// DeploymentStatus is one watch event of a Deployment, reduced to what
// "the counters say done" needs.
type DeploymentStatus struct {
	T                                  float64 `json:"t"`
	RV                                 string  `json:"rv"`
	Name                               string  `json:"name"`
	Generation, ObservedGeneration     int64
	Spec, Replicas, Updated, Available int32
	// Terminating is status.terminatingReplicas, -1 when absent.
	Terminating int32
}

func statusOf(d *appsv1.Deployment, t float64) DeploymentStatus {
	st := DeploymentStatus{T: t, RV: d.ResourceVersion, Name: d.Name, Generation: d.Generation, ObservedGeneration: d.Status.ObservedGeneration,
		Spec: 1, Replicas: d.Status.Replicas, Updated: d.Status.UpdatedReplicas, Available: d.Status.AvailableReplicas, Terminating: -1}
	if d.Spec.Replicas != nil {
		st.Spec = *d.Spec.Replicas
	}
	if d.Status.TerminatingReplicas != nil {
		st.Terminating = *d.Status.TerminatingReplicas
	}
	return st
}

// countersDone: generation observed, every counter equal to spec, nothing terminating.
func (s DeploymentStatus) countersDone() bool {
	return s.ObservedGeneration >= s.Generation && s.Replicas == s.Spec && s.Updated == s.Spec &&
		s.Available == s.Spec && s.Terminating <= 0
}

// StatusSettled is when the worker Deployment's status, as the
// controller-manager writes it, first showed the rollout done (counters
// complete, terminatingReplicas 0) after the last old worker pod was
// deleted: the two controller hops (ReplicaSet, then Deployment status)
// the operator waits for. -1 when not seen.
func StatusSettled(statuses []DeploymentStatus, events []eventlog.Event, u Upgrade) float64 {
	// The resourceVersion of the last old worker pod's deletion.
	var goneRV uint64
	old := oldPodEvent(events)
	for _, e := range events {
		if e.Namespace == u.Namespace && e.Deployment == u.Worker && e.Event == eventlog.PodDeleted && old(e) {
			if rv, err := strconv.ParseUint(e.RV, 10, 64); err == nil && rv > goneRV {
				goneRV = rv
			}
		}
	}
	if goneRV == 0 {
		return -1
	}
	best, bestRV := -1.0, uint64(math.MaxUint64)
	for _, s := range statuses {
		rv, err := strconv.ParseUint(s.RV, 10, 64)
		if err != nil || s.Name != u.Worker || rv <= goneRV || !s.countersDone() {
			continue
		}
		if rv < bestRV {
			best, bestRV = s.T, rv
		}
	}
	return best
}
