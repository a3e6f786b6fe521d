# upgrade-operator Makefile. Extra flags go through ARGS, e.g.
#   make simulate ARGS="--events e.jsonl"
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
simulate: ## Run the demo upgrade (or ARGS="--manifests DIR") in the simulator.
	$(GO) run ./cmd/simulate $(ARGS)

.PHONY: run
run: ## Run the manager against the current kubeconfig.
	$(GO) run ./cmd/upgrade-operator $(ARGS)

##@ Test

.PHONY: test
test: ## Unit and simulator tests.
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) ./...

.PHONY: test-envtest
test-envtest: controlplane ## envtest tests (build tag envtest): need etcd and kube-apiserver in KUBEBUILDER_ASSETS or ./bin.
	KUBEBUILDER_ASSETS="$${KUBEBUILDER_ASSETS:-$(BIN)}" $(GO) test -tags envtest -v -count=1 ./operator/...

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
