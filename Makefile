# upgrade-operator Makefile. Extra flags go through ARGS, e.g.
#   make simulate ARGS="--events e.jsonl"
#   make simulate ARGS="--seeds 1000"
#   make run ARGS="--watch-namespaces=job-system"

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN ?= $(CURDIR)/bin
GO ?= go
ARGS ?=
CONTROLLER_GEN_VERSION ?= v0.23.0
CONTROLLER_GEN ?= $(BIN)/controller-gen
# Deployment tools, each built from its own module under hack/tools/.
KUSTOMIZE ?= $(BIN)/kustomize
HELM ?= $(BIN)/helm
KUBECTL ?= $(BIN)/kubectl
CHART ?= deploy/helm/upgrade-operator
# go test flags; CI keeps -v so every test is visible and counted.
TESTFLAGS ?= -count=1

export PATH := $(BIN):$(PATH)

.PHONY: all
all: build

##@ Generate

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Deepcopy code from the API types' markers; the simulator's apply schema from client-go's.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths="./operator/api/..."
	$(GO) run ./simulator/internal/applyschema/gen

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## CRDs, RBAC and webhook configurations under deploy/ from markers.
	$(CONTROLLER_GEN) crd paths="./operator/api/..." output:crd:artifacts:config=deploy/crd/bases
	$(CONTROLLER_GEN) webhook paths="./operator/..." output:webhook:artifacts:config=deploy/webhook
	$(CONTROLLER_GEN) rbac:roleName=upgrade-operator-manager paths="./operator/..." output:rbac:artifacts:config=deploy/rbac
	@# The Helm chart gets its own generated copies: a chart can only read files inside its directory.
	@# ApplicationUpgrade's CRD is a template (files/crds -> templates/webhook.yaml: conversion + caBundle); the others stay in crds/.
	$(CONTROLLER_GEN) crd paths="./operator/api/..." output:crd:artifacts:config=$(CHART)/files/crds
	mv $(CHART)/files/crds/upgrade.starlingx.io_upgrades.yaml $(CHART)/crds/
	$(CONTROLLER_GEN) webhook paths="./operator/..." output:webhook:artifacts:config=$(CHART)/files/webhook
	$(CONTROLLER_GEN) rbac:roleName=upgrade-operator-manager paths="./operator/..." output:rbac:artifacts:config=$(CHART)/files/rbac

.PHONY: verify-generated
verify-generated: generate manifests ## Fails when generated files differ from the committed ones.
	@git diff --exit-code -- operator deploy simulator/applyschema.yaml || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }

$(CONTROLLER_GEN):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

##@ Build and run

.PHONY: build
build: ## Build the operator, simulate and helper binaries into ./bin.
	$(GO) build -o $(BIN)/ ./cmd/...

.PHONY: simulate
simulate: ## Run the demo upgrade (or ARGS="--manifests DIR") in the simulator; ARGS="--seeds 1000" for seeded fault schedules (docs/faults.md).
	$(GO) run ./cmd/simulate $(ARGS)

# BENCH_SIM_BASE=<commit> also builds that commit's benchmark in a
# temporary worktree under /tmp and runs the two alternately (ratio last).
BENCH_SIM_BASE ?=
.PHONY: bench-sim
bench-sim: ## Simulator throughput: BenchmarkDemoRun on one core (runs per CPU-second, allocs and MB per run; BENCH_SIM_BASE=<commit> side by side), then seeded fault schedules.
	BASE=$(BENCH_SIM_BASE) hack/bench-sim.sh
	$(GO) test -run '^$$' -bench . -benchtime 30x ./scenarios/faults/

# RUN_FLAGS come before ARGS (the last of a repeated flag wins), e.g. the
# quick-start test moves the metrics and probe ports off 8080/8081.
RUN_FLAGS ?=
# The port `make run` serves the webhooks (ApplicationUpgrade conversion) on
# and `make install` points the CRD's conversion at: one value for both, so
# starting the operator does not change the CRD under a running watch.
WEBHOOK_PORT ?= 9443
.PHONY: run
run: ## Run the manager against the current kubeconfig, serving the conversion webhook on 127.0.0.1:WEBHOOK_PORT (self-signed certificate shared with make install) and plain-HTTP metrics on 127.0.0.1:8080.
	$(GO) run ./cmd/upgrade-operator --webhook-self-signed --webhook-port=$(WEBHOOK_PORT) --metrics-bind-address=127.0.0.1:8080 $(RUN_FLAGS) $(ARGS)

##@ Deploy (the kubebuilder verbs; the cluster is the current kubeconfig's)

IMG ?= ghcr.io/lunadas/upgrade-operator:0.1.0
CONTAINER_TOOL ?= docker

.PHONY: install
install: ## Install the CRDs into the current kubeconfig's cluster, conversion pointed at make run's webhook (127.0.0.1:WEBHOOK_PORT).
	$(GO) run ./cmd/crds install --conversion-url=https://127.0.0.1:$(WEBHOOK_PORT)/convert $(ARGS)

.PHONY: uninstall
uninstall: ## Delete the CRDs (and every ApplicationUpgrade and Upgrade) from the current kubeconfig's cluster.
	$(GO) run ./cmd/crds uninstall $(ARGS)

.PHONY: deploy
deploy: $(KUSTOMIZE) $(KUBECTL) ## Deploy CRDs, RBAC and the manager (deploy/default, image IMG) to the current kubeconfig's cluster.
	@# kustomize edit rewrites kustomization.yaml: edit a copy outside the module (go test ./... would see one inside).
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cp -r deploy/. "$$tmp"/ && \
		(cd "$$tmp"/default && $(KUSTOMIZE) edit set image ghcr.io/lunadas/upgrade-operator=$(IMG)) && \
		echo "$(KUSTOMIZE) build deploy/default (image $(IMG)) | $(KUBECTL) apply -f -" && \
		$(KUSTOMIZE) build "$$tmp"/default | $(KUBECTL) apply -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) $(KUBECTL) ## Remove what make deploy created (CRDs and custom resources included).
	$(KUSTOMIZE) build deploy/default | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: docker-build
docker-build: ## Build the manager image IMG from the Dockerfile (needs a running Docker engine).
	@if ! $(CONTAINER_TOOL) info >/dev/null 2>&1; then \
		echo "docker-build: no container engine answers ('$(CONTAINER_TOOL) info' failed). The image cannot be built on this machine;"; \
		echo "  on a machine with Docker run: $(CONTAINER_TOOL) build -t $(IMG) ."; \
		echo "  the Dockerfile is linted by 'make test' (deploy/dockerfile_test.go)."; \
		exit 1; \
	fi
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image IMG.
	$(CONTAINER_TOOL) push $(IMG)

##@ Test

.PHONY: test
test: ## Unit and simulator tests (the features and the mutants on the simulator included).
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) ./...

##@ Scenarios (features/*.feature; ARGS e.g. "-godog.tags=@C01 -seed 7 -godog.format=progress")

# One test package serves every target below; the real-cluster ones need the
# e2e build tag (plus mutants / fidelity for those two) and the control plane
# binaries in ./bin. A generic `go test -tags e2e ./...` runs the @real
# features (TestFeaturesReal) and neither the mutants nor the fidelity report.
STEPS_PKG := ./scenarios/steps/app
E2E_TIMEOUT ?= 60m

.PHONY: test-features
test-features: ## Every ApplicationUpgrade scenario on the simulator, one subtest each (platform_*.feature: go test ./scenarios/steps/platform).
	$(GO) test $(TESTFLAGS) $(STEPS_PKG) -run '^TestFeatures$$' $(ARGS)

.PHONY: test-features-real
test-features-real: controlplane ## The @real scenarios on the local control plane; keeps their event logs for make fidelity.
	$(GO) test -tags e2e $(TESTFLAGS) -timeout $(E2E_TIMEOUT) $(STEPS_PKG) -run '^TestFeaturesReal$$' $(ARGS)

.PHONY: test-mutants
test-mutants: controlplane ## C01-C04 against every mutant, on the simulator and the local control plane; passes only if each is caught.
	$(GO) test -tags e2e,mutants $(TESTFLAGS) -v -timeout $(E2E_TIMEOUT) $(STEPS_PKG) -run '^TestMutants(Real)?$$' $(ARGS)

# FIDELITY_REUSE=1 compares with the event logs of the last
# test-features-real run instead of running the real scenarios again.
FIDELITY_REUSE ?= 0
.PHONY: fidelity
# REAL_NODE=1: the @real-node scenarios, sim vs the real kubelet (their
# logs from the last make test-node-features with FIDELITY_REUSE=1), and a
# crash-looping pod on both kubelets (restart delays, CrashLoopBackOff,
# the operator's verdict; ~2 min, always on a fresh real node).
fidelity: controlplane $(if $(filter 1 true yes,$(REAL_NODE)),node) ## Sim vs real: state sequences of every @real scenario, agreement and phase-duration ratios (REAL_NODE=1: vs the real kubelet).
	$(GO) test -tags e2e,fidelity $(TESTFLAGS) -v -timeout $(E2E_TIMEOUT) $(STEPS_PKG) -run '^TestFidelity$$' \
		-fidelity.reuse=$(if $(filter 1 true yes,$(FIDELITY_REUSE)),true,false) $(if $(filter 1 true yes,$(REAL_NODE)),-real.node) $(ARGS)

##@ Local control plane (real kube-apiserver, controllers, scheduler, etcd, kwok)

# Versions are pinned by the tools modules under hack/tools/ (each its own
# go.mod, so the root module never depends on them). Binaries go to $(BIN),
# which is git-ignored. Cold build on 2 cores: see hack/tools/README.md.
KUBE_VERSION ?= v1.37.2
# -s -w (no symbol table, no DWARF) as Kubernetes' own release builds do:
# ~30% smaller binaries and a faster link; stack traces still work.
KUBE_LDFLAGS := -s -w -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=37 \
	-X k8s.io/component-base/version.gitTreeState=clean
KUBE_BINS := $(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kube-scheduler
CONTROLPLANE_BINS := $(KUBE_BINS) $(BIN)/etcd $(BIN)/kwok
# Static binaries, as Kubernetes and etcd release them.
TOOLS_BUILD := CGO_ENABLED=0 $(GO) build

# A tool is rebuilt when its module under hack/tools/ changes in content,
# not in mtime: hack/tool-stamp.sh keeps a hash per module in
# $(BIN)/.mod-<dir>.sum, rewritten (made newer than the binaries) only when
# it changes. A fresh clone stamps every file new; a bin/ copied into it
# from another clone (cp -a, stamps included) is kept.
TOOL_BINS_kube := $(KUBE_BINS)
TOOL_BINS_etcd := $(BIN)/etcd
TOOL_BINS_kwok := $(BIN)/kwok
TOOL_BINS_kustomize := $(BIN)/kustomize
TOOL_BINS_helm := $(BIN)/helm
TOOL_BINS_kubectl := $(BIN)/kubectl
$(BIN)/.mod-%.sum: FORCE
	@hack/tool-stamp.sh $* $@ $(TOOL_BINS_$*)

.PHONY: FORCE
FORCE:

.PHONY: controlplane
controlplane: $(CONTROLPLANE_BINS) ## Build kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kwok into ./bin.

# One go build for the three Kubernetes binaries: they share most packages.
$(KUBE_BINS) &: $(BIN)/.mod-kube.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/kube -ldflags "$(KUBE_LDFLAGS)" -o $(BIN)/ \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler
	@touch $(KUBE_BINS)

$(BIN)/etcd: $(BIN)/.mod-etcd.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/etcd -ldflags "-s -w" -o $@ go.etcd.io/etcd/server/v3

$(BIN)/kwok: $(BIN)/.mod-kwok.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/kwok -ldflags "-s -w" -o $@ sigs.k8s.io/kwok/cmd/kwok

# Built and run rather than go run: go run dies on SIGTERM without passing
# it on, which would leave the control plane running.
.PHONY: controlplane-up
controlplane-up: controlplane ## Run a local control plane until Ctrl-C; prints the KUBECONFIG to use.
	$(GO) build -o $(BIN)/controlplane ./cmd/controlplane
	$(BIN)/controlplane $(ARGS)

.PHONY: test-workloads-real
test-workloads-real: controlplane ## The StatefulSet / DaemonSet scenarios on the real controllers vs the simulator (ARGS=-rewrite records testdata/).
	$(GO) test -tags e2e -v -count=1 -timeout 20m ./scenarios/fidelity/workloads/ -run '^TestRecordReal$$' $(ARGS)

.PHONY: test-controlplane
test-controlplane: controlplane ## End-to-end test of the local control plane (real rollouts, kwok pods).
	$(GO) test -tags e2e -v -count=1 ./scenarios/real/controlplane/...

.PHONY: test-envtest
test-envtest: controlplane ## envtest tests (build tag envtest): need etcd and kube-apiserver in KUBEBUILDER_ASSETS or ./bin.
	KUBEBUILDER_ASSETS="$${KUBEBUILDER_ASSETS:-$(BIN)}" $(GO) test -tags envtest -v -count=1 ./operator/...

# The cases C01-C07 of shared/cases/public-cases.md as features/ writes
# them, and C09's SIGKILLs, on the operator's own binary (go build
# ./cmd/upgrade-operator, one process per scenario); judged as every
# feature. 8 at a time: they wait on kwok's pod timings, not on CPU.
E2E_TAGS := @C01,@C02,@C03,@C04,@C05,@C06,@C07,@C09,@C10,@actors
.PHONY: test-e2e
test-e2e: controlplane ## C01-C07, the operator SIGKILLed 5 times (C09), the leader frozen (C10) and the cluster actors (@actors): the features on the out-of-process operator binary on the local control plane.
	$(GO) test -tags e2e -v -count=1 -timeout 20m $(STEPS_PKG) -run '^TestFeaturesReal$$' \
		-real.operator=process -real.concurrency=8 -godog.format=progress -godog.tags='$(E2E_TAGS)' $(ARGS)

# The same features on a Kind cluster (sigs.k8s.io/kind library, real
# kubelets, the pause image tagged under the scenarios' image names,
# termination delays as preStop sleeps). Without a reachable Docker engine
# it prints one line saying so and exits 0. The test binary is built, then
# run, so that line is the only output. KIND_NODE_IMAGE picks the node
# image, E2E_KIND_KEEP=1 keeps the cluster.
.PHONY: test-e2e-kind
test-e2e-kind: ## The test-e2e features on a Kind cluster where a Docker engine is reachable; skips (exit 0) otherwise.
	@$(GO) test -c -tags e2e -o $(BIN)/e2e-kind.test $(STEPS_PKG)
	@cd $(STEPS_PKG) && $(BIN)/e2e-kind.test -test.v -test.count=1 -test.timeout=40m -test.run '^TestFeaturesReal$$' \
		-real.kind -real.operator=process -real.concurrency=8 -godog.format=progress -godog.tags='$(E2E_TAGS)' $(ARGS)

##@ Deployment tools (each built from its own module under hack/tools/)


.PHONY: tools
tools: $(KUSTOMIZE) $(HELM) $(KUBECTL) ## Build kustomize, helm and kubectl into ./bin.

.PHONY: kustomize helm kubectl
kustomize: $(KUSTOMIZE) ## Build bin/kustomize (sigs.k8s.io/kustomize/kustomize/v5, hack/tools/kustomize).
helm: $(HELM) ## Build bin/helm (helm.sh/helm/v3, hack/tools/helm).
kubectl: $(KUBECTL) ## Build bin/kubectl (k8s.io/kubectl, hack/tools/kubectl).

$(KUSTOMIZE): $(BIN)/.mod-kustomize.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/kustomize -ldflags "-s -w" -o $@ sigs.k8s.io/kustomize/kustomize/v5

# As Helm's own Makefile: the version, and the Kubernetes version that
# `helm template` and `helm lint` assume (else v1.20, below the chart's kubeVersion).
HELM_LDFLAGS := -s -w -X helm.sh/helm/v3/internal/version.version=v3.22.0 \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37 \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37
$(HELM): $(BIN)/.mod-helm.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/helm -ldflags "$(HELM_LDFLAGS)" -o $@ helm.sh/helm/v3/cmd/helm

$(KUBECTL): $(BIN)/.mod-kubectl.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/kubectl -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" -o $@ .

##@ Install paths on the local control plane (build tag e2e; scenarios/real/install)

.PHONY: test-rbac
test-rbac: controlplane $(HELM) ## Chart RBAC: namespaced-only with watchNamespaces, minimal, and sufficient (the manager as its ServiceAccount completes the demo).
	$(GO) test -tags e2e -v -count=1 -run 'TestHelm|TestRBAC' ./scenarios/real/install/

.PHONY: test-tenant
test-tenant: controlplane $(HELM) ## Tenant safety (issue 14): the manager as the chart's ServiceAccount; a restricted tenant's cross-namespace, v1alpha1-smuggle, disclosure, serviceAccountName and ValidatingAdmissionPolicy cases, and the hostile-input corpus (scenarios/input/hostile).
	$(GO) test -tags e2e -v -count=1 -run 'TestTenant' ./scenarios/real/install/

.PHONY: test-chart-e2e
test-chart-e2e: controlplane $(HELM) ## The chart on the local control plane: two replicas with the leader stopped mid-upgrade (admission and v1alpha1 reads still served); platform.enabled against fakevim with the seed's usage examples.
	$(GO) test -tags e2e -v -count=1 -run 'TestChartTwoReplicas|TestChartPlatformAgainstFakeVIM' ./scenarios/real/install/

.PHONY: test-gitops
test-gitops: controlplane $(HELM) ## Flux-, Helm- and Argo CD-like actors own the Deployments (issue 19): with docs/gitops.md's settings the upgrade completes with each image written once; without, the revert is reported and never Completed.
	$(GO) test -tags e2e -v -count=1 -run 'TestGitOpsToolsOwnTheDeployments' ./scenarios/real/install/

.PHONY: test-dryrun
test-dryrun: controlplane $(HELM) $(KUSTOMIZE) flux-crds prometheus-crds ## Server-side dry run of the kustomize and Helm renderings (with the chart's ServiceMonitor and PrometheusRule against prometheus-operator's CRDs) and of deploy/flux (Flux CRDs installed).
	$(GO) test -tags e2e -v -count=1 -run 'TestServerSideDryRun|TestFluxManifestsServerSideDryRun' ./scenarios/real/install/

# Flux's CRDs, generated by controller-gen from the Flux API modules pinned in
# hack/tools/flux (as Flux's controllers generate theirs).
FLUX_CRDS ?= $(BIN)/flux-crds
.PHONY: flux-crds
flux-crds: $(FLUX_CRDS)/.stamp ## Flux's CRDs (GitRepository, OCIRepository, HelmRelease, Kustomization, ...) into bin/flux-crds.
$(FLUX_CRDS)/.stamp: hack/tools/flux/go.mod hack/tools/flux/go.sum $(CONTROLLER_GEN)
	rm -rf $(FLUX_CRDS)
	cd hack/tools/flux && $(CONTROLLER_GEN) crd paths=github.com/fluxcd/source-controller/api/v1 \
		paths=github.com/fluxcd/kustomize-controller/api/v1 paths=github.com/fluxcd/helm-controller/api/v2 \
		output:crd:dir=$(FLUX_CRDS)
	touch $@

# prometheus-operator's CRDs (ServiceMonitor, PrometheusRule, ...), generated by
# controller-gen from its API module pinned in hack/tools/prometheus, with the
# options of prometheus-operator's own Makefile (crd:crdVersions=v1).
PROMETHEUS_CRDS ?= $(BIN)/prometheus-crds
.PHONY: prometheus-crds
prometheus-crds: $(PROMETHEUS_CRDS)/.stamp ## prometheus-operator's CRDs (monitoring.coreos.com) into bin/prometheus-crds.
$(PROMETHEUS_CRDS)/.stamp: hack/tools/prometheus/go.mod hack/tools/prometheus/go.sum $(CONTROLLER_GEN)
	rm -rf $(PROMETHEUS_CRDS)
	cd hack/tools/prometheus && $(CONTROLLER_GEN) crd:crdVersions=v1 \
		paths=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1 \
		output:crd:dir=$(PROMETHEUS_CRDS)
	touch $@

.PHONY: test-quickstart
test-quickstart: controlplane $(KUBECTL) ## The quick start of docs/README.md, typed as written, on the local control plane.
	$(GO) test -tags e2e -v -count=1 -run 'TestQuickStart' ./scenarios/real/install/

.PHONY: test-chart
test-chart: $(HELM) $(KUSTOMIZE) ## Chart and kustomize renderings (no cluster): two helm template runs identical, platform wiring, HA defaults.
	$(GO) test -tags e2e -v -count=1 -run 'TestChart|TestConversionStanza|TestHelmRefusesBadValues|TestHelmRenderingsAreMinimal|TestHelmWatchNamespaces' ./scenarios/real/install/

.PHONY: lint-chart
lint-chart: $(HELM) ## helm lint --strict of the chart, default and namespaced values.
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --set 'watchNamespaces={job-system}'
	$(HELM) lint --strict $(CHART) --set platform.enabled=true --set vim.credentialsSecret=keystone --set metrics.secure=false --set metrics.port=8080
##@ Platform upgrades (the StarlingX Upgrade controller)

.PHONY: test-platform
test-platform: ## Platform unit tests and the features/platform_*.feature scenarios (simulator; @http ones also over fakevim).
	$(GO) test $(TESTFLAGS) ./operator/platform/... ./scenarios/sim/platformsim/... ./scenarios/steps/platform/... ./cmd/upgrade-operator/...

.PHONY: test-platform-e2e
test-platform-e2e: controlplane ## Platform e2e (build tag e2e): the manager on the local control plane, fakevim over HTTP.
	$(GO) test -tags e2e -v -count=1 ./scenarios/real/platforme2e/...

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Performance (figures, not tests; not in CI — see docs/performance.md)

# The simulator benchmark runs first (its raw output, bench-sim.txt, is
# benchstat-comparable), then the real-control-plane phases; everything is
# built before anything is measured. Sizes and counts are flags of
# scenarios/bench/cmd/bench, e.g. ARGS="-demo 20 -fixed 5 -sizes 0,1000,5000 -phases latency".
BENCH_SIM_COUNT ?= 6
.PHONY: bench
bench: controlplane ## Handoff latency, ordering overhead, 2 s poller baseline, simulator speed, cost vs cluster size: one table, bench.json.
	$(GO) build -o $(BIN)/benchoperator ./scenarios/bench/cmd/benchoperator
	$(GO) build -tags bench -o $(BIN)/bench ./scenarios/bench/cmd/bench
	$(GO) test -c -o $(BIN)/simbench.test ./scenarios/bench/simbench
	cd scenarios/bench/simbench && $(BIN)/simbench.test -test.run '^$$' -test.bench '^BenchmarkDemoRun$$' -test.benchmem -test.cpu 1 -test.benchtime 2s -test.count $(BENCH_SIM_COUNT) > $(CURDIR)/bench-sim.txt
	cd scenarios/bench/simbench && $(BIN)/simbench.test -test.run '^$$' -test.bench '^BenchmarkDemoRunParallel$$' -test.benchmem -test.cpu $$(nproc) -test.benchtime 2s -test.count 3 >> $(CURDIR)/bench-sim.txt
	$(BIN)/bench -operator $(BIN)/benchoperator -sim bench-sim.txt -json bench.json $(ARGS)

##@ Real control plane

.PHONY: demo
# REAL_NODE=1 runs the demo pods as real containers on the real node (make node).
REAL_NODE ?=
demo: controlplane $(if $(filter 1 true yes,$(REAL_NODE)),node) ## Demo upgrade on the local control plane (builds it first); REAL_NODE=1: real containers; exits 0 only if ordered and Completed.
	$(GO) run ./cmd/demo $(if $(filter 1 true yes,$(REAL_NODE)),--real-node) $(ARGS)

##@ Real node (a kubelet and containerd beside the kwok node; docs/README.md → Real node)

# The kubelet comes from its own tools module (hack/tools/kubelet: the same
# k8s.io/kubernetes as hack/tools/kube, so the build cache is shared; cold
# ~6 min on 2 idle cores). containerd, runc and the CNI plugins are Debian's
# packages, installed by hack/node/install-deps.sh where missing (root and
# apt-get). The images (pause, the demo app at every tag, the operator)
# are built without a registry into $(NODE_IMAGES).
KUBELET := $(BIN)/kubelet
NODE_IMAGES := $(BIN)/node-images.tar

.PHONY: node
node: $(KUBELET) node-deps node-images ## Build the kubelet, install containerd + CNI plugins where missing, build the node images.

$(KUBELET): hack/tools/kubelet/go.mod hack/tools/kubelet/go.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/kubelet -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kubelet

.PHONY: node-deps
node-deps: ## Install Debian's containerd, runc and containernetworking-plugins where missing.
	@hack/node/install-deps.sh

.PHONY: node-images
node-images: ## The real node's images (pause, demo app, operator) as one archive, no registry or Docker.
	$(GO) run ./scenarios/real/nodeimages/cmd/nodeimages -o $(NODE_IMAGES)

# Skips with one line (exit 0) where containerd cannot start on the machine.
.PHONY: test-node
test-node: controlplane node ## Real containers on the real node: exec readiness, SIGTERM drain while terminating, crash restarts.
	$(GO) test -tags realnode -v -count=1 -timeout 15m ./scenarios/real/realnode/ $(ARGS)

# The @real-node scenarios (features/README.md) with their pods as real
# containers on the real node (C01/C02: SIGKILL at the end of the grace
# period; every old worker container's exit checked before the API write),
# then the counters-only mutant against them (~16 min under load);
# their event logs go to artifacts/traces/real-node (make fidelity REAL_NODE=1 FIDELITY_REUSE=1).
.PHONY: test-node-features
test-node-features: controlplane node ## The @real-node scenarios on the real node's containers, and the counters-only mutant caught there.
	$(GO) test -tags e2e,mutants -v -count=1 -timeout 30m $(STEPS_PKG) -run '^(TestFeaturesReal|TestMutantsReal)$$' -real.node -real.concurrency 1 -mutant=counters-only $(ARGS)

# The chart's operator as a pod on the real node (its image from the node
# image archive, checked against the current go build), webhooks served
# from the pod at https://localhost:<port>, the pod deleted mid-rollout.
.PHONY: test-node-incluster
test-node-incluster: controlplane node $(HELM) $(KUBECTL) ## The operator in-cluster on the real node: helm install, the demo upgrade on real containers, kubectl delete pod mid-rollout.
	$(GO) test -tags e2e,realnode -v -count=1 -timeout 15m -run '^TestInClusterOnRealNode$$' ./scenarios/real/install/ $(ARGS)
