# syntax=docker/dockerfile:1
# The manager image: a static binary on distroless, non-root, with nothing
# to write (run it with readOnlyRootFilesystem: true, as deploy/ does).
# It also holds /simulate, the simulator CLI, for seed sweeps run as a
# Kubernetes Indexed Job (deploy/sweep, docs/sweeps.md).
#   make docker-build IMG=registry.local:9001/upgrade-operator:0.1.0
# Linted by deploy/dockerfile_test.go (make test); no engine runs in CI.

FROM golang:1.26.8-bookworm AS builder
ARG TARGETOS=linux
ARG TARGETARCH=amd64
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY internal/ internal/
COPY operator/ operator/
COPY cmd/upgrade-operator/ cmd/upgrade-operator/
# Static (no cgo), reproducible paths, no symbol table.
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/manager ./cmd/upgrade-operator
# simulate: the simulator, its scenarios and the embedded demo manifests.
COPY deploy/ deploy/
COPY simulator/ simulator/
COPY scenarios/ scenarios/
COPY cmd/simulate/ cmd/simulate/
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/simulate ./cmd/simulate

FROM gcr.io/distroless/static-debian12:nonroot
LABEL org.opencontainers.image.source="https://github.com/lunadas/upgrade-operator" \
      org.opencontainers.image.description="upgrade-operator manager" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /
COPY --from=builder /out/manager /manager
COPY --from=builder /out/simulate /simulate
# 65532 is distroless' nonroot user; numeric so runAsNonRoot can verify it.
USER 65532:65532
EXPOSE 8080 8081 9443
ENTRYPOINT ["/manager"]
