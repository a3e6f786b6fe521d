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
# go test flags; CI keeps -v so every test is visible and counted.
TESTFLAGS ?= -count=1

export PATH := $(BIN):$(PATH)

.PHONY: all
all: build

##@ Generate

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Deepcopy code from the API types' markers.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths="./operator/api/..."

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## CRDs, RBAC and webhook configurations under deploy/ from markers.
	$(CONTROLLER_GEN) crd paths="./operator/api/..." output:crd:artifacts:config=deploy/crd/bases
	$(CONTROLLER_GEN) webhook paths="./operator/..." output:webhook:artifacts:config=deploy/webhook
	$(CONTROLLER_GEN) rbac:roleName=upgrade-operator-manager paths="./operator/..." output:rbac:artifacts:config=deploy/rbac

.PHONY: verify-generated
verify-generated: generate manifests ## Fails when generated files differ from the committed ones.
	@git diff --exit-code -- operator deploy || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }

$(CONTROLLER_GEN):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

##@ Build and run

.PHONY: build
build: ## Build the operator, simulate and helper binaries into ./bin.
	$(GO) build -o $(BIN)/ ./cmd/...

.PHONY: simulate
simulate: ## Run the demo upgrade (or ARGS="--manifests DIR") in the simulator; ARGS="--seeds 1000" for seeded fault schedules (docs/faults.md).
	$(GO) run ./cmd/simulate $(ARGS)

.PHONY: bench-sim
bench-sim: ## Simulator benchmarks: one demo run, seeded fault schedules (runs/s, virtual:wall, allocs per run).
	$(GO) test -run '^$$' -bench . -benchtime 30x ./scenarios/faults/

.PHONY: run
run: ## Run the manager against the current kubeconfig.
	$(GO) run ./cmd/upgrade-operator $(ARGS)

##@ Test

.PHONY: test
test: ## Unit and simulator tests.
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) ./...

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

.PHONY: controlplane
controlplane: $(CONTROLPLANE_BINS) ## Build kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kwok into ./bin.

# One go build for the three Kubernetes binaries: they share most packages.
$(KUBE_BINS) &: hack/tools/kube/go.mod hack/tools/kube/go.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/kube -ldflags "$(KUBE_LDFLAGS)" -o $(BIN)/ \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler
	@touch $(KUBE_BINS)

$(BIN)/etcd: hack/tools/etcd/go.mod hack/tools/etcd/go.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/etcd -ldflags "-s -w" -o $@ go.etcd.io/etcd/server/v3

$(BIN)/kwok: hack/tools/kwok/go.mod hack/tools/kwok/go.sum
	@mkdir -p $(BIN)
	$(TOOLS_BUILD) -C hack/tools/kwok -ldflags "-s -w" -o $@ sigs.k8s.io/kwok/cmd/kwok

# Built and run rather than go run: go run dies on SIGTERM without passing
# it on, which would leave the control plane running.
.PHONY: controlplane-up
controlplane-up: controlplane ## Run a local control plane until Ctrl-C; prints the KUBECONFIG to use.
	$(GO) build -o $(BIN)/controlplane ./cmd/controlplane
	$(BIN)/controlplane $(ARGS)

.PHONY: test-controlplane
test-controlplane: controlplane ## End-to-end test of the local control plane (real rollouts, kwok pods).
	$(GO) test -tags e2e -v -count=1 ./scenarios/controlplane/...

.PHONY: test-envtest
test-envtest: controlplane ## envtest tests (build tag envtest): need etcd and kube-apiserver in KUBEBUILDER_ASSETS or ./bin.
	KUBEBUILDER_ASSETS="$${KUBEBUILDER_ASSETS:-$(BIN)}" $(GO) test -tags envtest -v -count=1 ./operator/...

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Real control plane

.PHONY: demo
demo: controlplane ## Demo upgrade on the local control plane (builds it first); exits 0 only if ordered and Completed.
	$(GO) run ./cmd/demo $(ARGS)
