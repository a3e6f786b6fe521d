// Package platforme2e is the end-to-end test of the platform Upgrade
// controller (build tag e2e, `make test-platform-e2e`): the operator's
// manager runs in-process against the local control plane
// (scenarios/real/controlplane: real etcd and kube-apiserver) and talks over
// HTTP to fakevim, whose StarlingX model runs at a speed factor so that a
// multi-step major upgrade takes seconds. The admission webhook is served
// by the in-process manager on 127.0.0.1 over TLS with a self-signed
// certificate made by the test, and installed as a
// ValidatingWebhookConfiguration with that CA bundle.
package platforme2e
