// Package e2e runs the operator's real manager against a real cluster — the
// local control plane of scenarios/real/controlplane (real kube-apiserver,
// kube-controller-manager and kube-scheduler, kwok for kubelets) or a Kind
// cluster — through the cases C01–C07 of the public bug reports, operator
// restarts (SIGKILL), and the mutation check (a counters-only readiness rule
// must be caught). Every case records the JSON Lines event log of
// scenarios/eventlog from watches and is judged from it.
//
// The test entry points carry build tags: `e2e` (make test-e2e, the local
// control plane) and `e2ekind` (make test-e2e-kind). This package holds the
// cases and the runner, shared by both.
package e2e
