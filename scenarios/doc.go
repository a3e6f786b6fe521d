// Package scenarios holds no code: it is the map of the tree below it, the
// wiring of the operator (operator/) to the simulator (simulator/) and to
// real clusters, grouped by role. One line a package; "the one" marks the
// runner or judge to use.
//
// Running the features (features/*.feature):
//
//	cluster              the Cluster the steps talk to, with its two backends: Sim (simulator) and Real (any real cluster; the operator in-process, or its binary as a process SIGKILL can kill); Inject takes a catalog fault (the cluster actors: faults.LiveActors on both)
//	steps/app            the ApplicationUpgrade steps; make test-features (Sim), test-features-real (Real), test-e2e (Real, the operator binary: C01-C07, C09's SIGKILLs), test-e2e-kind, test-mutants, fidelity
//	steps/platform       the platform Upgrade steps (features/platform_*.feature) on sim/platformsim
//
// Simulator runners (virtual time, replay from a seed):
//
//	sim/simrun           the one ApplicationUpgrade runner in the simulator: Run (make simulate, --manifests), NewEnv, NewSim
//	sim/platformsim      the platform Upgrade runner in the simulator: the StarlingX model direct (NewDirectClient) or fakevim over HTTP
//
// Real clusters (local processes: etcd, kube-apiserver, kcm, scheduler, kwok):
//
//	real/controlplane    starts and stops the local control plane (make controlplane builds its binaries)
//	real/realcluster     the real-cluster driver every real runner uses (CRDs, apply, event log from watches); RunDemo (make demo)
//	real/operatorproc    an operator binary as a child process (log file, exit naming pid and log, SIGKILL, SIGTERM with grace): cluster's out-of-process operator and the bench's
//	real/platforme2e     the platform Upgrade controller end to end, fakevim over HTTP (make test-platform-e2e)
//	real/install         kustomize, Helm, RBAC, tenancy, quick start on the control plane (make test-chart-e2e, test-rbac, ...)
//	real/realnode        workloads on the real node's containers (make test-node)
//	real/nodeimages      the real node's images, no registry or Docker (make node); cmd/nodeimages, demoapp, pause are its binaries
//
// Inputs:
//
//	input/manifests      decodes YAML manifests (files, directories, embedded) into typed objects for both backends
//	input/hostile        the bad-input corpus of ApplicationUpgrades (webhook unit test and real/install's tenant suite)
//
// Recording, judging, rendering (the same on both backends):
//
//	eventlog             the event log (JSON Lines, version 2, docs/eventlog.md): the one record every runner writes; Replay
//	judge                the one judge: Judge / JudgeEvents — porcupine model, invariants and per-edge Ordering; artifacts on failure
//	render/console       what a user watching the cluster sees: the text of make simulate and make demo (golden *.transcript files)
//	render/timeline      the run as an SVG picture, written beside the porcupine HTML on a failure
//	fidelity             simulator versus real cluster: state sequences compared (make fidelity)
//	fidelity/workloads   the StatefulSet and DaemonSet models versus the real controllers (make test-workloads-real)
//
// Faults:
//
//	faults               the one fault catalog, of cmd/simulate and the features: ParseFaults, Generate, Run (--seeds, --faults), Shrink; Boundary injects at the features' recording client; the cluster actors (actor.go) over an ActorRuntime, run by the Injector and by LiveActors (the features); Cache, the informer model (stale, drop) wired into a simulated operator process, the Injector's and the features' Sim's
//	faults/sweep         the crash-point sweep (make simulate --crash-sweep)
//	faults/mutants       deliberately weakened policies that the judge must catch (make test-mutants)
//
// Benchmarks (make bench):
//
//	bench/realbench      handoff latency, ordering overhead and scale on the local control plane; bench/cmd/bench drives it
//	bench/simbench       the simulator's speed on the demo (go test -bench)
//	bench/poller         the baseline: the ordered upgrade as Helm --wait / Argo CD waves / kapp groups poll it
//	bench/opstats        an operator process's requests, reconciles and memory, measured from inside
//	bench/cmd/benchoperator the manager with opstats instruments
package scenarios
