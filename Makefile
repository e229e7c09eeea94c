# VERSION: the version of everything built here (both binaries, the images, the OLM bundle, the
# Helm chart): semver, with or without a leading v (make release VERSION=v0.1.0). Default: the
# first section of CHANGELOG.md. hack/version.sh decides it (docs/release.md).
VERSION ?=
VERSION_ORIGIN := $(origin VERSION)
override VERSION := $(shell VERSION='$(VERSION)' hack/version.sh)
# The linker flags that stamp VERSION and the git revision into a binary (internal/version).
VERSION_LDFLAGS = $(shell VERSION='$(VERSION)' hack/version.sh ldflags)

# Image URL to use all building/pushing image targets
IMG ?= controller:latest
# YEAR defines the year value used for substituting the YEAR placeholder in the boilerplate header.
YEAR ?= 2026

# Get the currently used golang install path (in GOPATH/bin, unless GOBIN is set)
ifeq (,$(shell go env GOBIN))
GOBIN=$(shell go env GOPATH)/bin
else
GOBIN=$(shell go env GOBIN)
endif

# CONTAINER_TOOL defines the container tool to be used for building images.
# Be aware that the target commands are only tested with Docker which is
# scaffolded by default. However, you might want to replace it to use other
# tools. (i.e. podman)
CONTAINER_TOOL ?= docker

# Setting SHELL to bash allows bash commands to be executed by recipes.
# Options are set to exit when a recipe line exits non-zero or a piped command fails.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

# The help target prints out all targets with their descriptions organized
# beneath their categories. The categories are represented by '##@' and the
# target descriptions by '##'. The awk command is responsible for reading the
# entire set of makefiles included in this invocation, looking for lines of the
# file as xyz: ## something, and then pretty-format the target and help. Then,
# if there's a line with ##@ something, that gets pretty-printed as a category.
# More info on the usage of ANSI control characters for terminal formatting:
# https://en.wikipedia.org/wiki/ANSI_escape_code#SGR_parameters
# More info on the awk command:
# http://linuxcommand.org/lc3_adv_awk.php

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-15s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate WebhookConfiguration, ClusterRole and CustomResourceDefinition objects.
	@hack/progress.sh "controller-gen: CRDs, RBAC, webhooks" "$(CONTROLLER_GEN)" rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: controller-gen ## Generate code containing DeepCopy, DeepCopyInto, and DeepCopyObject method implementations.
	@hack/progress.sh "controller-gen: deepcopy" "$(CONTROLLER_GEN)" object:headerFile="hack/boilerplate.go.txt",year=$(YEAR) paths="./..."

.PHONY: api-docs
api-docs: crd-ref-docs ## Generate the API reference docs/api-reference.md from the Go types in api/ (crd-ref-docs).
	@hack/progress.sh "crd-ref-docs: docs/api-reference.md" "$(CRD_REF_DOCS)" --source-path=./api \
		--config=hack/crd-ref-docs.yaml --renderer=markdown --output-mode=single \
		--output-path=docs/api-reference.md --log-level=ERROR

# The Helm chart (charts/enhanced-liveness-operator): its templates/generated/ come from
# config/default, its values schema from both binaries' flag sets, its version from VERSION
# (hack/chart; docs/development.md#the-helm-chart).
.PHONY: chart
chart: manifests kustomize ## Generate the Helm chart's templates, values schema and version from config/default and the flag sets.
	@hack/progress.sh "hack/chart: charts/enhanced-liveness-operator" go run ./hack/chart generate -kustomize "$(KUSTOMIZE)" -version $(VERSION)

.PHONY: chart-check
chart-check: kustomize helm ## Check that the Helm chart rendered with its default values is config/default, object by object.
	go run ./hack/chart check -kustomize "$(KUSTOMIZE)" -helm "$(HELM)"

.PHONY: fmt
fmt: ## Run go fmt against code.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet against code.
	go vet ./...

# One pass, under the race detector, with coverage: a second pass without it doubled the time of
# the envtest suites (most of which wait on the API server) and found nothing the race pass does not.
.PHONY: test
test: manifests generate fmt vet setup-envtest helm cyclonedx-gomod ## Run unit and envtest tests (the README's test command).
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" HELM="$(HELM)" CYCLONEDX_GOMOD="$(CYCLONEDX_GOMOD)" go test -race $$(go list ./... | grep -v /test/e2e) -coverprofile cover.out
	$(MAKE) test-bench-diff

# test/bench is a separate Go module (it imports k8s.io/kubernetes to compare with the kubelet's prober).
.PHONY: test-bench-diff
test-bench-diff: ## Differential test: our HTTP/TCP/gRPC probers vs the kubelet's pkg/probe (docs/probe-semantics.md #16-#25).
	cd test/bench && go vet ./... && go test ./...

BENCH_SCALE_PODS ?= 10000
BENCH_SCALE_STRIP ?= true,false
.PHONY: bench-scale
bench-scale: setup-envtest ## Manager at scale: cold start, memory and rounds of 1,000 failures at BENCH_SCALE_PODS enrolled pods (docs/development.md).
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go run ./test/benchscale -pods $(BENCH_SCALE_PODS) -strip $(BENCH_SCALE_STRIP)

BENCH_NPP_PODS ?= 1,110
.PHONY: bench-status-writes
bench-status-writes: setup-envtest ## API server CPU per NodePodProbeReport status write beside a NodePodProbe of BENCH_NPP_PODS pods, against one pod status patch.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go run ./test/benchscale -status-writes 1000 -status-pods $(BENCH_NPP_PODS)

BENCH_WORKERS ?= 5000
BENCH_DURATION ?= 20s
.PHONY: bench
bench: ## Probe engine benchmark: BENCH_WORKERS HTTP workers at 1 s, ours vs the kubelet's prober (lag, CPU/probe, RSS).
	cd test/bench && go test -run '^$$' -bench . -benchtime 2000x ./engine
	cd test/bench && go run ./cmd/enginebench -workers $(BENCH_WORKERS) -period 1s -warmup 5s -duration $(BENCH_DURATION)

BENCH_EXEC_PODS ?= 10
.PHONY: bench-exec
bench-exec: ## Exec probes on the local node: BENCH_EXEC_PODS pods, our CRI path vs the kubelet's (CPU/probe, ExecSync p50/p99, RSS). Shared machine: flock -o /tmp/elo-node.lock make bench-exec.
	BENCH_EXEC_PODS=$(BENCH_EXEC_PODS) hack/bench-exec.sh -period 1s -warmup 5s -duration $(BENCH_DURATION)

.PHONY: verify
verify: manifests generate fmt api-docs bundle chart ## Regenerate everything (CRDs, RBAC, webhooks, deepcopy, API reference, bundle, Helm chart), fail if the committed files differ, and check the chart against config/default.
	@if [ -n "$$(git status --porcelain --untracked-files=all -- . ':!bin' ':!cover.out')" ]; then \
		echo "verify: generated or formatted files differ from the commit:"; git status --porcelain --untracked-files=all; git --no-pager diff --stat; exit 1; \
	fi
	@echo "verify: generated files are current"
	@$(MAKE) --no-print-directory chart-check

##@ Local cluster, end-to-end tests and demo (root; see docs/e2e.md)

# Images are docker-archive tarballs written by hack/imagebuilder (no Docker engine, no registry)
# and imported into the local node's containerd by hack/local-cluster/up.sh.
.PHONY: e2e-images
e2e-images: ## Build the pause, operator and test-app image tarballs into bin/images.
	@mkdir -p bin/hack && hack/progress.sh "compiling ./hack/imagebuilder" go build -v -o bin/hack/imagebuilder ./hack/imagebuilder
	bin/hack/imagebuilder -out bin/images -tag e2e

.PHONY: cluster-up
cluster-up: e2e-images ## Start the local cluster of ELO_NODES (default 2) real nodes (kubelet + containerd built here) and import the images.
	hack/local-cluster/up.sh

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and undo every host change it made.
	hack/local-cluster/down.sh

.PHONY: test-e2e
test-e2e: manifests generate fmt vet kustomize helm ## Run the real-node e2e suites (test/e2e, test/quickstart, test/helm) on a local cluster started and stopped for the run.
	KUSTOMIZE="$(KUSTOMIZE)" HELM="$(HELM)" hack/local-cluster/e2e.sh

# OLM tools are built from the Go module proxy by hack/build-olm.sh (wrapper module hack/olm-build).
# `make bundle` needs only operator-sdk, built alone unless the others are there already.
OPERATOR_SDK ?= $(shell hack/build-olm.sh --print-dir)/operator-sdk
.PHONY: operator-sdk
operator-sdk: ## Build operator-sdk into bin/olm/<versions>/ (hack/build-olm.sh; skipped when present).
	@hack/build-olm.sh operator-sdk >/dev/null

.PHONY: test-olm
test-olm: manifests generate fmt vet kustomize ## Install, upgrade and remove the operator with the real OLM (operator-sdk run bundle) on a local node.
	KUSTOMIZE="$(KUSTOMIZE)" hack/olm/test-olm.sh

.PHONY: olm-tools
olm-tools: ## Build operator-sdk, opm and OLM's binaries into bin/olm/<versions>/ (skipped when present) and print that directory.
	@hack/build-olm.sh

.PHONY: demo
demo: manifests generate kustomize ## Start the node, deploy the operator and a demo app, make part of it sick, narrate; leaves it up.
	KUSTOMIZE="$(KUSTOMIZE)" hack/local-cluster/demo.sh

.PHONY: demo-down
demo-down: ## Stop the demo cluster and undo every host change (same as cluster-down).
	hack/local-cluster/down.sh


.PHONY: lint
lint: golangci-lint ## Run golangci-lint linter
	"$(GOLANGCI_LINT)" run

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint linter and perform fixes
	"$(GOLANGCI_LINT)" run --fix

.PHONY: lint-config
lint-config: golangci-lint ## Verify golangci-lint linter configuration
	"$(GOLANGCI_LINT)" config verify

# The README's chart: the storm specs' restart counts over time (bin/e2e-report/storms/*.json,
# written by make test-e2e), native against enrolled, and the hang specs' recovery times
# (bin/e2e-report/storms/recovery/*.json).
STORM_CHART ?= bin/e2e-report/storm-restarts.svg
.PHONY: storm-chart
storm-chart: ## Draw the storm specs' restart counts and the hang specs' recovery times of the last make test-e2e as an SVG (STORM_CHART; the README's is docs/images/storm-restarts.svg).
	go run ./hack/stormchart -in bin/e2e-report -out "$(STORM_CHART)"

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager and daemon binaries, stamped with VERSION (bin/manager --version).
	go build -ldflags "$(VERSION_LDFLAGS)" -o bin/manager ./cmd
	go build -ldflags "$(VERSION_LDFLAGS)" -o bin/daemon ./cmd/daemon

.PHONY: plugin
plugin: ## Build the kubectl plugin into bin/kubectl-enhancedliveness, stamped with VERSION (docs/kubectl-plugin.md).
	go build -ldflags "$(VERSION_LDFLAGS)" -o bin/kubectl-enhancedliveness ./cmd/kubectl-enhancedliveness

.PHONY: run
run: manifests generate fmt vet ## Run a controller from your host.
	go run -ldflags "$(VERSION_LDFLAGS)" ./cmd

# Images without a container engine: hack/imagebuilder compiles the static binaries (stamped with
# VERSION) for each of IMAGE_PLATFORMS and writes one multi-arch image (an OCI image index) as an
# OCI layout under bin/push/, crane pushes it. Credentials: those of `crane auth login` or
# `docker login` (~/.docker/config.json). A cluster whose nodes are of several architectures
# pulls the one each node needs; leave out an architecture none of your nodes has to build faster.
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
# INSECURE_REGISTRY=true pushes to a registry over plain HTTP (crane --insecure).
INSECURE_REGISTRY ?= false
# SAMPLE_IMG: the sample application of the quick start (docs/install.md), test/e2e/app.
SAMPLE_IMG ?=
PUSH_DIR ?= $(LOCALBIN)/push

# need-image NAME VAR: fails unless VAR names an image in a registry.
define need-image
@case "$(2)" in ""|controller:latest) echo "$(1): set $(3)=<registry>/<name>:<tag>, a registry your nodes pull from" >&2; exit 1;; esac
endef

.PHONY: image-push
image-push: crane ## Build the operator image (manager and daemon) without a container engine and push it to IMG.
	$(call need-image,image-push,$(IMG),IMG)
	@mkdir -p bin/hack && hack/progress.sh "compiling ./hack/imagebuilder" go build -o bin/hack/imagebuilder ./hack/imagebuilder
	bin/hack/imagebuilder -out "$(PUSH_DIR)" -format oci -platforms $(IMAGE_PLATFORMS) -version $(VERSION) operator
	"$(CRANE)" push $(if $(filter true,$(INSECURE_REGISTRY)),--insecure) "$(PUSH_DIR)/operator" $(IMG)

.PHONY: sample-image-push
sample-image-push: crane ## Build the quick start's sample application image without a container engine and push it to SAMPLE_IMG.
	$(call need-image,sample-image-push,$(SAMPLE_IMG),SAMPLE_IMG)
	@mkdir -p bin/hack && hack/progress.sh "compiling ./hack/imagebuilder" go build -o bin/hack/imagebuilder ./hack/imagebuilder
	bin/hack/imagebuilder -out "$(PUSH_DIR)" -format oci -platforms $(IMAGE_PLATFORMS) -version $(VERSION) app
	"$(CRANE)" push $(if $(filter true,$(INSECURE_REGISTRY)),--insecure) "$(PUSH_DIR)/app" $(SAMPLE_IMG)

# If you wish to build the manager image targeting other platforms you can use the --platform flag.
# (i.e. docker build --platform linux/arm64). However, you must enable docker buildKit for it.
# More info: https://docs.docker.com/develop/develop-images/build_enhancements/
# Override BASE_IMAGE to build from another registry, e.g.
# make docker-build IMG=<img> BASE_IMAGE=docker.io/library/golang:1.26
.PHONY: docker-build
docker-build: ## Build docker image with the manager.
	$(CONTAINER_TOOL) build $(if $(BASE_IMAGE),--build-arg BASE_IMAGE=$(BASE_IMAGE)) --build-arg VERSION_LDFLAGS="$(VERSION_LDFLAGS)" -t ${IMG} .

.PHONY: docker-push
docker-push: ## Push docker image with the manager.
	$(CONTAINER_TOOL) push ${IMG}

# PLATFORMS defines the target platforms for the manager image be built to provide support to multiple
# architectures. (i.e. make docker-buildx IMG=myregistry/mypoperator:0.0.1). To use this option you need to:
# - be able to use docker buildx. More info: https://docs.docker.com/build/buildx/
# - have enabled BuildKit. More info: https://docs.docker.com/develop/develop-images/build_enhancements/
# - be able to push the image to your registry (i.e. if you do not set a valid value via IMG=<myregistry/image:<tag>> then the export will fail)
# To adequately provide solutions that are compatible with multiple platforms, you should consider using this option.
PLATFORMS ?= linux/arm64,linux/amd64,linux/s390x,linux/ppc64le
.PHONY: docker-buildx
docker-buildx: ## Build and push docker image for the manager for cross-platform support
	# copy existing Dockerfile and insert --platform=${BUILDPLATFORM} into Dockerfile.cross, and preserve the original Dockerfile
	sed -e '1 s/\(^FROM\)/FROM --platform=\$$\{BUILDPLATFORM\}/; t' -e ' 1,// s//FROM --platform=\$$\{BUILDPLATFORM\}/' Dockerfile > Dockerfile.cross
	- $(CONTAINER_TOOL) buildx create --name enhanced-liveness-operator-builder
	$(CONTAINER_TOOL) buildx use enhanced-liveness-operator-builder
	- $(CONTAINER_TOOL) buildx build --push --platform=$(PLATFORMS) $(if $(BASE_IMAGE),--build-arg BASE_IMAGE=$(BASE_IMAGE)) --build-arg VERSION_LDFLAGS="$(VERSION_LDFLAGS)" --tag ${IMG} -f Dockerfile.cross .
	- $(CONTAINER_TOOL) buildx rm enhanced-liveness-operator-builder
	rm Dockerfile.cross

# DEPLOY_CONFIG: the kustomization `make deploy` applies; your own overlay of config/default (e.g.
# with a patch of the manager's flags, docs/install.md) instead of config/default itself.
DEPLOY_CONFIG ?= config/default

# render-default prints $(DEPLOY_CONFIG) with the manager image set to $(IMG) (hack/render-install.sh).
define render-default
KUSTOMIZE="$(KUSTOMIZE)" hack/render-install.sh "$(IMG)" "$(DEPLOY_CONFIG)"
endef

.PHONY: build-installer
build-installer: manifests generate kustomize ## Write $(DIST)/install.yaml: everything `make deploy` applies, with IMG.
	mkdir -p "$(DIST)"
	@$(render-default) > "$(DIST)/install.yaml"
	@echo "build-installer: wrote $(DIST)/install.yaml (image $(IMG))"

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

# check-kubectl: the deployment targets run $(KUBECTL), the kubectl on your PATH unless set.
define check-kubectl
@command -v "$(KUBECTL)" >/dev/null || { echo "$@: $(KUBECTL) not found: install kubectl, or set KUBECTL=/path/to/kubectl" >&2; exit 1; }
endef

.PHONY: install
install: manifests kustomize ## Install CRDs into the K8s cluster specified in ~/.kube/config.
	$(check-kubectl)
	@out="$$( "$(KUSTOMIZE)" build config/crd 2>/dev/null || true )"; \
	if [ -n "$$out" ]; then echo "$$out" | "$(KUBECTL)" apply --server-side --force-conflicts -f -; else echo "No CRDs to install; skipping."; fi

.PHONY: uninstall
uninstall: manifests kustomize ## Uninstall CRDs from the K8s cluster specified in ~/.kube/config. Call with ignore-not-found=true to ignore resource not found errors during deletion.
	$(check-kubectl)
	@out="$$( "$(KUSTOMIZE)" build config/crd 2>/dev/null || true )"; \
	if [ -n "$$out" ]; then echo "$$out" | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -; else echo "No CRDs to delete; skipping."; fi

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator (DEPLOY_CONFIG, image IMG) with KUBECTL to the cluster of KUBECONFIG or ~/.kube/config.
	$(check-kubectl)
	@$(render-default) | "$(KUBECTL)" apply --server-side --force-conflicts -f -

# The manager's DaemonSet is owned by its Deployment and goes with it (and with the namespace).
# The manager goes first, and is waited for (foreground: until its pods are gone): as it stops,
# the leader sets the Node conditions it holds True to False (docs/policy.md), which it can only
# do while its RBAC, service account and namespace are still there. Then everything else but the
# namespace, then the namespace. The three selectors split the manifest without overlap: the
# namespace is the only object with the manager's label that has the Pod Security label.
.PHONY: undeploy
undeploy: kustomize ## Remove everything `make deploy` installed, CRDs included. ignore-not-found=true ignores missing objects.
	$(check-kubectl)
	@$(render-default) | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) --cascade=foreground --wait=true --timeout=120s \
		-l 'control-plane=controller-manager,!pod-security.kubernetes.io/enforce' -f -
	@$(render-default) | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -l 'control-plane!=controller-manager' -f -
	@$(render-default) | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) \
		-l 'control-plane=controller-manager,pod-security.kubernetes.io/enforce' -f -

##@ Bundle (OLM)

# The bundle's version is VERSION (above): make bundle VERSION=0.2.0.
IMAGE_TAG_BASE ?= ghcr.io/enhanced-liveness/enhanced-liveness-operator
# The bundle's manager image: IMG when given on the command line, else the release image.
BUNDLE_MANAGER_IMG ?= $(if $(filter command line,$(origin IMG)),$(IMG),$(IMAGE_TAG_BASE):v$(VERSION))
BUNDLE_DAEMON_IMG ?= $(BUNDLE_MANAGER_IMG)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
# BUNDLE_REPLACES: the CSV this version upgrades, e.g. enhanced-liveness-operator.v0.1.0 (none by default).
BUNDLE_REPLACES ?=
BUNDLE_CHANNELS ?= stable
BUNDLE_DEFAULT_CHANNEL ?= stable
# Fixed, so that regenerating an unchanged bundle changes nothing (make verify).
BUNDLE_CREATED_AT ?= 2026-11-30T00:00:00Z
# Deprecated-API checks target the Kubernetes version the project builds against (1.37).
BUNDLE_K8S_VERSION ?= $(patsubst v%,%,$(basename $(K8S_VERSION)))

.PHONY: bundle
bundle: manifests kustomize operator-sdk ## Generate bundle/ and bundle.Dockerfile with operator-sdk (generate kustomize manifests, generate bundle, bundle validate).
	"$(OPERATOR_SDK)" generate kustomize manifests --quiet --interactive=false
	KUSTOMIZE="$(KUSTOMIZE)" OPERATOR_SDK="$(OPERATOR_SDK)" hack/bundle.sh --version $(VERSION) \
		--image $(BUNDLE_MANAGER_IMG) --daemon-image $(BUNDLE_DAEMON_IMG) --created-at $(BUNDLE_CREATED_AT) \
		--channels $(BUNDLE_CHANNELS) --default-channel $(BUNDLE_DEFAULT_CHANNEL) $(if $(BUNDLE_REPLACES),--replaces $(BUNDLE_REPLACES)) \
		--k8s-version $(BUNDLE_K8S_VERSION) --output-dir bundle --dockerfile bundle.Dockerfile

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG.
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image BUNDLE_IMG.
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

##@ Release (docs/release.md)

# DIST: where make release writes the release (dist/ is git-ignored).
DIST ?= dist
# REGISTRY: where the release is published; every image reference it writes is
# $(REGISTRY)/<repository>:v<version>@<digest>, and release-push pushes there.
REGISTRY ?= ghcr.io/enhanced-liveness
# The platforms of the release's images (OCI image indexes).
RELEASE_PLATFORMS ?= linux/amd64,linux/arm64
# The platforms of the release-push program shipped in DIST.
RELEASE_TOOL_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64
# The platforms of the kubectl plugin shipped in DIST (krew archives and manifest); PLUGIN_URL_BASE
# is where its archives are downloaded from (default: the GitHub release of VERSION).
PLUGIN_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64
PLUGIN_URL_BASE ?=
# PREVIOUS: the release this one upgrades (the catalog's replaces and skipRange); default: the
# newest dated CHANGELOG.md section below VERSION; "none": no upgrade edge.
PREVIOUS ?=
OPM ?= $(shell hack/build-olm.sh --print-dir)/opm

.PHONY: release
release: kustomize helm cyclonedx-gomod ## Write release VERSION (make release VERSION=vX.Y.Z [REGISTRY=host/path]) into DIST: manifests, chart, image, bundle and catalog archives, their SBOMs, release-push, the kubectl plugin's krew archives, SHA256SUMS.
	@case "$(VERSION_ORIGIN)" in "command line"|environment) ;; \
		*) echo "release: name the version: make release VERSION=vX.Y.Z (docs/release.md)" >&2; exit 1;; esac
	@VERSION=$(VERSION) PREVIOUS=$(PREVIOUS) hack/release.sh --preflight
	@hack/build-olm.sh operator-sdk opm >/dev/null
	VERSION=$(VERSION) REGISTRY=$(REGISTRY) DIST="$(DIST)" RELEASE_PLATFORMS=$(RELEASE_PLATFORMS) \
		RELEASE_TOOL_PLATFORMS=$(RELEASE_TOOL_PLATFORMS) PLUGIN_PLATFORMS=$(PLUGIN_PLATFORMS) PLUGIN_URL_BASE=$(PLUGIN_URL_BASE) PREVIOUS=$(PREVIOUS) \
		BUNDLE_K8S_VERSION=$(BUNDLE_K8S_VERSION) KUSTOMIZE="$(KUSTOMIZE)" HELM="$(HELM)" OPERATOR_SDK="$(OPERATOR_SDK)" \
		OPM="$(OPM)" CYCLONEDX_GOMOD="$(CYCLONEDX_GOMOD)" hack/release.sh

.PHONY: release-push
release-push: ## Publish the release in DIST to its registry with cmd/release-push (INSECURE_REGISTRY=true: plain HTTP).
	go run ./cmd/release-push --dist "$(DIST)" $(if $(filter true,$(INSECURE_REGISTRY)),--insecure)

##@ Dependencies

## Location to install dependencies to
LOCALBIN ?= $(shell pwd)/bin
$(LOCALBIN):
	mkdir -p "$(LOCALBIN)"

## Tool Binaries
# The kubectl of the deployment targets: yours, from PATH (any version the cluster supports).
KUBECTL ?= kubectl
HELM ?= $(LOCALBIN)/helm
KUSTOMIZE ?= $(LOCALBIN)/kustomize
CRANE ?= $(LOCALBIN)/crane
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
CRD_REF_DOCS ?= $(LOCALBIN)/crd-ref-docs
CYCLONEDX_GOMOD ?= $(LOCALBIN)/cyclonedx-gomod
GOLANGCI_LINT = $(LOCALBIN)/golangci-lint

## Tool Versions
KUSTOMIZE_VERSION ?= v5.8.1
# crane pushes the images; same go-containerregistry version as go.mod's.
CRANE_VERSION ?= v0.22.1
CONTROLLER_TOOLS_VERSION ?= v0.22.0
CRD_REF_DOCS_VERSION ?= v0.3.0

# Kubernetes version of the binaries built from source for envtest and the local cluster
# (hack/build-k8s.sh); keep it in step with k8s.io/* in go.mod (v0.X.Y <-> v1.X.Y).
K8S_VERSION ?= v1.37.2
ENVTEST_ASSETS ?= $(LOCALBIN)/k8s/$(patsubst v%,%,$(K8S_VERSION))-linux-$(shell go env GOARCH)
export K8S_VERSION

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Download kustomize locally if necessary.
$(KUSTOMIZE): $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: crane
crane: $(CRANE) ## Build crane (go-containerregistry) locally if necessary.
$(CRANE): $(LOCALBIN)
	$(call go-install-tool,$(CRANE),github.com/google/go-containerregistry/cmd/crane,$(CRANE_VERSION))

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Download controller-gen locally if necessary.
$(CONTROLLER_GEN): $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: crd-ref-docs
crd-ref-docs: $(CRD_REF_DOCS) ## Download crd-ref-docs locally if necessary.
$(CRD_REF_DOCS): $(LOCALBIN)
	$(call go-install-tool,$(CRD_REF_DOCS),github.com/elastic/crd-ref-docs,$(CRD_REF_DOCS_VERSION))

.PHONY: setup-envtest
setup-envtest: ## Build kube-apiserver, etcd and kubectl for envtest from the Go module proxy (skipped when present).
	@hack/build-k8s.sh etcd kube-apiserver kubectl >/dev/null

# helm is built from the Go module proxy, pinned by the wrapper module hack/helm-build (its go.mod).
HELM_VERSION := $(shell awk '$$1 == "require" && $$2 == "helm.sh/helm/v4" {print $$3}' hack/helm-build/go.mod)
.PHONY: helm
helm: $(HELM) ## Build helm from hack/helm-build (version pinned in its go.mod) into bin/ if necessary.
$(HELM): $(LOCALBIN) hack/helm-build/go.mod
	@[ -x "$(HELM)-$(HELM_VERSION)" ] || (cd hack/helm-build && CGO_ENABLED=0 ../progress.sh "compiling helm $(HELM_VERSION)" \
		go build -v -mod=mod -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION) \
		-X helm.sh/helm/v4/internal/version.gitTreeState=clean" -o "$(HELM)-$(HELM_VERSION)" helm.sh/helm/v4/cmd/helm)
	@ln -sf "$(notdir $(HELM))-$(HELM_VERSION)" "$(HELM)"

# cyclonedx-gomod writes the release's SBOMs (hack/sbom); built from the Go module proxy, pinned by
# the wrapper module hack/sbom-build (its go.mod).
CYCLONEDX_GOMOD_VERSION := $(shell awk '$$1 == "require" && $$2 == "github.com/CycloneDX/cyclonedx-gomod" {print $$3}' hack/sbom-build/go.mod)
.PHONY: cyclonedx-gomod
cyclonedx-gomod: $(CYCLONEDX_GOMOD) ## Build cyclonedx-gomod from hack/sbom-build (version pinned in its go.mod) into bin/ if necessary.
$(CYCLONEDX_GOMOD): $(LOCALBIN) hack/sbom-build/go.mod
	@[ -x "$(CYCLONEDX_GOMOD)-$(CYCLONEDX_GOMOD_VERSION)" ] || (cd hack/sbom-build && CGO_ENABLED=0 ../progress.sh \
		"compiling cyclonedx-gomod $(CYCLONEDX_GOMOD_VERSION)" go build -v -mod=mod -trimpath \
		-o "$(CYCLONEDX_GOMOD)-$(CYCLONEDX_GOMOD_VERSION)" github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod)
	@ln -sf "$(notdir $(CYCLONEDX_GOMOD))-$(CYCLONEDX_GOMOD_VERSION)" "$(CYCLONEDX_GOMOD)"

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Build golangci-lint with the logcheck plugin from hack/golangci-lint (versions pinned in its go.mod).
$(GOLANGCI_LINT): hack/golangci-lint/go.mod hack/golangci-lint/main.go | $(LOCALBIN)
	@cd hack/golangci-lint && ../progress.sh "compiling golangci-lint with logcheck" go build -v -o "$(GOLANGCI_LINT)" .

# go-install-tool will 'go install' any package with custom target and name of binary, if it doesn't exist
# $1 - target path with name of binary
# $2 - package url which can be installed
# $3 - specific version of package
define go-install-tool
@[ -f "$(1)-$(3)" ] && [ "$$(readlink -- "$(1)" 2>/dev/null)" = "$(1)-$(3)" ] || { \
set -e; \
package=$(2)@$(3) ;\
rm -f "$(1)" ;\
GOBIN="$(LOCALBIN)" hack/progress.sh "go install $${package}" go install -v $${package} ;\
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)" ;\
} ;\
ln -sf "$(1)-$(3)" "$(1)"
endef

define gomodver
$(shell go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' $(1) 2>/dev/null)
endef
