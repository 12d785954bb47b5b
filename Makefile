# kscale — the two commands of the README:
#   make density   the density job on the embedded local control plane
#   make test      every test (what CI runs)

SHELL := /bin/bash
GO    ?= go
BIN   := $(CURDIR)/bin

# Static binaries: the kubemark image has no libc, and one setting for every
# build and test keeps a single build cache.
export CGO_ENABLED := 0

# -buildvcs=auto records the commit in the binaries (the image's revision
# label) wherever a GOFLAGS of the machine turns it off.
# Stamp the Kubernetes version into both binaries so nodes and servers report
# v1.37.2, not v0.0.0-master. It is read from go.mod: one place to change.
K8S_VERSION := $(shell $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
K8S_MAJOR   := $(word 1,$(subst ., ,$(patsubst v%,%,$(K8S_VERSION))))
K8S_MINOR   := $(word 2,$(subst ., ,$(patsubst v%,%,$(K8S_VERSION))))
# The last commit's time, not now: an unchanged tree links nothing again.
BUILD_DATE  := $(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null || echo 1970-01-01T00:00:00Z)
VERSION_PKGS := k8s.io/component-base/version k8s.io/client-go/pkg/version
LDFLAGS := -s -w $(foreach p,$(VERSION_PKGS),-X '$(p).gitVersion=$(K8S_VERSION)' -X '$(p).gitMajor=$(K8S_MAJOR)' -X '$(p).gitMinor=$(K8S_MINOR)' -X '$(p).gitTreeState=clean' -X '$(p).buildDate=$(BUILD_DATE)')

# HEAVY_PKGS link k8s.io/kubernetes (the two binaries and the two rooms of
# the import rule). Only cmd/kscale holds tests (see unit). Vetting them
# would analyse the whole Kubernetes tree (minutes on a cold cache), so
# `make vet-all` does that apart.
# Integration packages start real clusters and run one at a time.
HEAVY_PKGS       := /cmd/ /controlplane/components /kubemark/morph
INTEGRATION_PKGS := ./framework/provider/local/... ./framework/provider/kubemark ./framework/fidelity ./suites
LIGHT_PKGS = $(shell $(GO) list ./... | grep -v $(foreach p,$(HEAVY_PKGS),-e $(p)))
UNIT_PKGS  = $(shell $(GO) list ./... | grep -v $(foreach p,$(HEAVY_PKGS) /suites /framework/provider/local /framework/provider/kubemark /framework/fidelity,-e $(p)))

export KSCALE_BIN_DIR := $(BIN)

.PHONY: all deps build kubelet kubemark-image kubemark-e2e test unit integration density bench vet vet-all clean-results docs bench-stale

all: build

build: ## the kscale and kubemark binaries, in bin/
	@mkdir -p $(BIN)
	$(GO) build -buildvcs=auto -ldflags "$(LDFLAGS)" -o $(BIN)/kscale ./cmd/kscale
	$(GO) build -buildvcs=auto -ldflags "$(LDFLAGS)" -o $(BIN)/kubemark ./cmd/kubemark

# The Debian packages the project needs, each as package:probe, a probe
# being a command on PATH or an absolute path (| separates alternatives).
# Chromium renders report.html in the report test; Prometheus runs beside
# the local cluster; containerd, runc and the CNI plugins make a real root
# node for the kubemark provider.
CNI_BIN_DIR ?= /usr/lib/cni
DEBIAN_DEPS := chromium:chromium|chromium-browser prometheus:prometheus containerd:containerd runc:runc containernetworking-plugins:$(CNI_BIN_DIR)/bridge

# make deps installs what is missing as root where apt-get is; elsewhere it
# stops, naming the packages and the command that installs them. It builds
# nothing, so `make test` fails at once rather than after the build.
deps: ## the Debian packages the tests need (installed when root, else named)
	@missing() { \
	  local dep pkg alt found; \
	  for dep in $(foreach d,$(DEBIAN_DEPS),'$(d)'); do \
	    pkg=$${dep%%:*}; found=; \
	    IFS='|' read -ra alts <<< "$${dep#*:}"; \
	    for alt in "$${alts[@]}"; do \
	      if [[ $$alt == /* ]]; then [ -e "$$alt" ] && found=1; else command -v "$$alt" >/dev/null && found=1; fi; \
	    done; \
	    [ -n "$$found" ] || printf '%s ' "$$pkg"; \
	  done; \
	}; \
	need=$$(missing); need=$${need% }; \
	[ -z "$$need" ] && exit 0; \
	if [ "$$EUID" -ne 0 ] || ! command -v apt-get >/dev/null; then \
	  echo "make deps: missing Debian packages: $$need" >&2; \
	  echo "make deps: install them with: sudo apt-get install -y $$need" >&2; \
	  exit 1; \
	fi; \
	echo "make deps: installing $$need"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null || exit 1; \
	need=$$(missing); \
	if [ -n "$$need" ]; then echo "make deps: still missing after apt-get install: $$need" >&2; exit 1; fi

# The real kubelet of a root node (kscale cluster node up), from
# k8s.io/kubernetes at the go.mod version.
kubelet: ## bin/kubelet, the real kubelet of a root node
	@mkdir -p $(BIN)
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/kubelet k8s.io/kubernetes/cmd/kubelet

# The hollow-node image, as an OCI archive (ctr images import, skopeo);
# IMAGE names it, and PUSH=1 also pushes it to IMAGE's registry.
IMAGE ?=
kubemark-image: build ## bin/kubemark-image.tar, the hollow-node image (IMAGE=registry/kubemark:tag PUSH=1 to push)
	$(BIN)/kscale kubemark image --kubemark $(BIN)/kubemark --output $(BIN)/kubemark-image.tar $(if $(IMAGE),--tag $(IMAGE)) $(if $(PUSH),--push)

# The generated docs: docs/reference/ (kscale's commands, the suite flags,
# kubemark's flags, the measurement methods) and docs/img/ (figures drawn
# from results/bench). Each is a golden file of a test named *Reference,
# which make test runs: a change to the code that leaves them behind fails.
DOC_PKGS := ./cmd/kscale ./framework/suite ./measurements ./bench
docs: build ## regenerate docs/reference and docs/img from the code and results/bench
	$(GO) test -count=1 -run 'Reference$$' $(DOC_PKGS) -update

bench-stale: ## list the results/bench files whose code changed since they were written
	@$(GO) test -count=1 -run 'TestBenchmarksPageMarksStaleFiles' -v ./bench | grep -E 'stale|^(ok|FAIL)'

vet:
	$(GO) vet $(LIGHT_PKGS)

vet-all:
	$(GO) vet ./...

test: deps build vet unit integration ## every test

# cmd/kscale's tests of its flags link the whole control plane, as the
# binary does; they run with the unit tests all the same.
unit:
	$(GO) test -count=1 $(UNIT_PKGS) ./cmd/kscale

integration: build kubelet kubemark-image
	$(GO) test -count=1 -p 1 -timeout 40m $(INTEGRATION_PKGS)

# The kubemark provider on a real root: a local root cluster whose node is
# the real kubelet on containerd (kscale cluster node up), a cluster under
# test, and the density suite with hollow nodes as containers, in both
# layouts. As root; it runs in make test too.
kubemark-e2e: deps build kubelet kubemark-image ## the kubemark provider end to end on a real kubelet + containerd root (as root)
	$(GO) test -count=1 -timeout 30m -run 'TestKubemarkOnRealRoot' -v ./suites

# NODES=1000 make density for a bigger run; ARGS for more suite flags.
density: build ## the density suite: local cluster, hollow-node fleets, the density config, SLO verdicts, reports
	$(GO) tool ginkgo --timeout=24h ./suites/density -- --nodes=$${NODES:-100} $(ARGS)

# KWOK, the simulator BenchmarkFleetLight5000VsKWOK compares the light
# fleet with, built from the Go module proxy into bin/tools (outside this
# module: the tool's own go.mod decides its dependencies).
KWOK_VERSION := v0.8.0
KWOK         := $(BIN)/tools/kwok-$(KWOK_VERSION)
$(KWOK):
	mkdir -p $(BIN)/tools
	cd $$(mktemp -d) && GOBIN=$(BIN)/tools GOFLAGS= $(GO) install sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)
	mv $(BIN)/tools/kwok $@

# make bench BENCH=FleetKubelet1000 runs one (BENCH=Fidelity: the fleet
# against kubelet morphs); all of them take about 2 h.
BENCH ?= .
bench: build $(KWOK) ## benchmarks; results in results/bench/*.json (KSCALE_BENCH_NODES=1000 for the big density run)
	KSCALE_KWOK=$(KWOK) $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime 1x -count 1 -timeout 180m ./framework/tuningset/ ./framework/executor/ ./bench ./framework/fidelity ./suites

clean-results: ## removes the runs' report folders; results/bench stays
	find results -mindepth 1 -maxdepth 1 -type d ! -name bench -exec rm -rf {} +
