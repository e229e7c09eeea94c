# One image, two static binaries: /manager (the Deployment) and /daemon (the DaemonSet the manager
# creates). hack/imagebuilder builds the same image without a Docker engine (local cluster, e2e):
# keep both in step (binaries, flags, user, entrypoint).
# Override BASE_IMAGE to build from another registry, e.g. docker.io/library/golang:1.26
ARG BASE_IMAGE=golang:1.26
FROM ${BASE_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH
# The -X flags that stamp the version and git revision (`hack/version.sh ldflags`; make
# docker-build passes them). Without them the binaries report version "unknown".
ARG VERSION_LDFLAGS=""

WORKDIR /workspace
# Modules first: source changes do not invalidate the download layer.
COPY go.mod go.mod
COPY go.sum go.sum
RUN go mod download

# Go sources only (.dockerignore)
COPY . .

# TARGETARCH is left empty by default so that the binaries match the building host.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w ${VERSION_LDFLAGS}" -o manager ./cmd && \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w ${VERSION_LDFLAGS}" -o daemon ./cmd/daemon

# distroless static: no shell, no package manager.
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager /manager
COPY --from=builder /workspace/daemon /daemon
# The manager runs as non-root. The daemon's DaemonSet sets runAsUser 0 (CRI sockets are
# root-owned) with every capability dropped.
USER 65532:65532

ENTRYPOINT ["/manager"]
