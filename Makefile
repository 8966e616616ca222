# fabctl developer targets. `make help` lists them.
#
#   make build   bin/fabctl with version and commit stamped in (with the traffic test when rdma-core is found)
#   make test    go test ./... (the per-package ok/FAIL lines)
#   make lint    go vet + gofmt check
#   make demo    build, run the main job against the local testbed (root), tear it down
#   make demo-ib the job against a simulated InfiniBand subnet: ibsim + opensm (root; examples/ib-testbed)
#   make demo-vm the same job in the VM testbed with real RDMA traffic (root; testbed/vm)
#   make bench   benchmarks of spec loading and lint
#   make bench-ssh  fabctl apply to 256 hosts over SSH (loopback sshd, netns hosts; root)
#   make bench-ib   InfiniBand discovery+compare beside ibnetdiscover, 16/64 and 24/128 fat trees (ibsim; root)
#   make bench-ansible  the same MTU change by fabctl and by Ansible (tuned and default) on N netns hosts (root)
#   make fuzz    each fuzz target for FUZZTIME (default 30s)
#   make e2e-vm  the VM testbed: real kernel RDMA (rxe, siw) in qemu, every section (root; testbed/vm/README.md)
#   make e2e-kube  the Kubernetes engine against a real kube-apiserver + etcd (root; docs/kubernetes.md)
#   make bench-kube  publish 1,024/2,048/4,096 host intents, time until all Applied (light agents; docs/kubernetes.md)
#   make image   the agent image for the DaemonSet under dist/ (OCI layout, oci-archive, docker-archive; no docker)
#   make image-test  tools/image's tests: reproducibility, read-back, the binary run, skopeo, podman, a real registry

# Go lives in /usr/local/go/bin on the CI image; a non-login shell under CI may not have it on PATH.
export PATH := /usr/local/go/bin:$(PATH)
SHELL := /bin/bash

GO      ?= go
BIN     ?= bin/fabctl
PKG     := github.com/fabctl/fabctl
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X $(PKG)/internal/cli.version=$(VERSION) -X $(PKG)/internal/cli.commit=$(COMMIT)

# libyang (yangval/libyang) is a build tag. make test adds it when pkg-config finds libyang
# (Debian libyang2-dev), so the tests check payloads with libyang; under CI=true a missing
# libyang fails them. make build leaves it out unless LIBYANG=1: a default fabctl must not need
# libyang.so.2 at run time, because it ships itself to every host as the agent.
HAVE_LIBYANG := $(shell pkg-config --exists libyang 2>/dev/null && echo libyang)
TEST_TAGS    ?= $(HAVE_LIBYANG)
# The verbs traffic test (validate/verbs, cgo) is the verbs build tag: make build adds it when
# pkg-config finds rdma-core's libibverbs and librdmacm (Debian libibverbs-dev, librdmacm-dev);
# VERBS=0 builds without it, VERBS=1 insists on it.
HAVE_VERBS   := $(shell pkg-config --exists libibverbs librdmacm 2>/dev/null && echo 1)
VERBS        ?= $(if $(HAVE_VERBS),1,0)
BUILD_TAGS   ?= $(strip $(if $(LIBYANG),libyang) $(if $(filter 1,$(VERBS)),verbs))

# go test's -timeout per test binary. internal/cli, the longest, takes about 75 s inside make test on
# an idle 2-core machine and went past 10 minutes at a load average of 38: the limit catches a hang,
# not a busy machine.
TEST_TIMEOUT ?= 20m
TESTFLAGS    ?=

# Benchmarks: spec loading and lint (internal/fabgen generates the large specs they use), and
# plan/apply of 64 emulated switches at 200 ms per commit (testbed/local).
BENCH_PKGS ?= ./spec/ ./validate/... ./internal/fabgen/ ./intent/ ./plan/ ./apply/ ./testbed/local/

# Fuzzing: "package:Target" pairs, each run for FUZZTIME. Add targets here as they are written.
FUZZTIME     ?= 30s
FUZZ_TARGETS ?= ./spec:FuzzLoad ./spec:FuzzUnits ./spec:FuzzFastParse ./spec:FuzzEvaluation ./spec:FuzzOverride \
                ./drivers/switch/openconfig:FuzzReadJSON ./drivers/switch/srlinux:FuzzReadJSON \
                ./drivers/switch/openconfig:FuzzDecodeLinks ./drivers/switch/srlinux:FuzzDecodeLinks ./drivers/switch/gnmicore:FuzzLinkTree ./drivers/switch/sonic:FuzzParseLinks \
                ./validate/verbs:FuzzDecode ./drivers/host/agentproto:FuzzDecodeRequest \
                ./validate/traffic:FuzzDecodeSideRequest ./yangval/libyang:FuzzValidateJSON \
                ./drivers/sm/ibfabric:FuzzParseTopology ./drivers/sm/ibfabric:FuzzParsePortInfo \
                ./drivers/sm/ibfabric:FuzzParseTables ./drivers/sm/ibfabric:FuzzParseBatch ./drivers/sm/ibfabric:FuzzParseDump \
                ./drivers/sm/ibfabric/ibmad:FuzzDecode ./internal/dcbnl:FuzzDecodeIEEE \
                ./internal/dcbnl:FuzzDecodeStatus ./internal/dcbnl:FuzzDecodeNotification \
                ./drivers/switch/clicore:FuzzTables ./drivers/switch/sonic:FuzzParseCounters \
                ./drivers/switch/cumulus:FuzzParseCountersQoS ./telemetry:FuzzParseQPDump \
                ./internal/safefile:FuzzFileOps ./apply:FuzzSavedPlanApply ./internal/termsafe:FuzzWriter \
                ./drivers/switch/sonic:FuzzRenderedLines ./drivers/switch/eos:FuzzRenderedLines \
                ./drivers/switch/nxos:FuzzRenderedLines ./drivers/switch/cumulus:FuzzRenderedLines \
                ./drivers/switch/srlinux:FuzzRenderedLines ./drivers/switch/openconfig:FuzzRenderedLines \
                ./drivers/host:FuzzHostPaths

# Example specs `make demo` validates (every directory under examples/).
EXAMPLES := $(sort $(patsubst %/,%,$(dir $(wildcard examples/*/*.fab.hcl))))

.PHONY: all help build test lint vet fmt-check bench bench-ssh bench-ib bench-ansible bench-kube fuzz demo demo-ib demo-vm e2e-vm e2e-kube image image-test clean

all: lint test build

help:
	@sed -n 's/^#   make /  make /p' $(firstword $(MAKEFILE_LIST))

build:
	@mkdir -p $(dir $(BIN))
	$(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/fabctl
	@$(BIN) version
	@if [[ " $(BUILD_TAGS) " == *" verbs "* ]]; then \
		echo "built $(BIN) with the verbs traffic test (-tags verbs, rdma-core found by pkg-config)"; \
	else \
		echo "built $(BIN) WITHOUT the verbs traffic test: validate's traffic stage will exit 5;"; \
		echo "  install rdma-core's headers (Debian: apt install pkg-config libibverbs-dev librdmacm-dev) and run make build again"; \
	fi
	@if [[ " $(BUILD_TAGS) " == *" libyang "* ]]; then \
		echo "built $(BIN) with libyang (LIBYANG=1): render --yang-dir and the emulators validate with libyang"; \
	elif [[ -n "$(HAVE_LIBYANG)" ]]; then \
		echo "built $(BIN) without libyang (found by pkg-config): make build LIBYANG=1 links it, for libyang's verdict in render --yang-dir and the emulators"; \
	fi

test:
	$(GO) test -tags '$(TEST_TAGS)' -timeout $(TEST_TIMEOUT) $(TESTFLAGS) ./...

lint: vet fmt-check

vet:
	$(GO) vet -tags '$(TEST_TAGS)' ./...

fmt-check:
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then \
		echo "gofmt: these files are not formatted (run gofmt -w on them):"; \
		echo "$$out"; \
		exit 1; \
	fi; \
	echo "gofmt: ok"

bench:
	$(GO) test -tags '$(TEST_TAGS)' -run '^$$' -bench . -benchmem $(BENCH_PKGS)
	@# Load+lint of the generated pod, 1/8 to 1/1, each in a fresh process: wall, CPU and its own peak RSS.
	$(GO) run ./internal/fabgen/cmd/podbench -all

# `fabctl apply --parallelism 64` to 256 namespace hosts over a loopback OpenSSH server, vs one host
# (drivers/host/ssh_bench_test.go; needs root and openssh-server). Prints s/apply, ms/host, p50/max.
bench-ssh:
	$(GO) test -run '^$$' -bench 'SSHApply' -benchtime $${BENCHTIME:-3x} -timeout 30m ./drivers/host/

# fabctl's InfiniBand read (fabctl ibmad: topology, PortInfo, P_Key, SL2VL and VL arbitration
# tables in one process) plus the comparison, beside ibnetdiscover alone, on simulated 2-level fat
# trees of 16 switches/64 adapters and 24/128 (testbed/ibsim/bench_test.go; ibsim + opensm, root).
# Prints medians of 7 rounds, the ratio and the goal (within 2x of ibnetdiscover, under 1 s at 16/64).
bench-ib:
	$(GO) test -run '^$$' -bench 'FatTree' -benchtime 1x -timeout 20m ./testbed/ibsim/
# The same change (read the MTU, set it, verify) on N netns hosts behind one loopback sshd, by fabctl
# and by Debian's ansible-core, tuned and default, alternating rounds (drivers/host/ansible_bench_test.go;
# root). Installs ansible-core and openssh-server when missing. BENCH_HOSTS=N (default 64), ROUNDS (2).
bench-ansible:
	@command -v ansible-playbook >/dev/null && test -x /usr/sbin/sshd || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ansible-core openssh-server; }
	$(GO) test -v -run '^$$' -bench 'AnsibleVsFabctl' -benchtime $${ROUNDS:-2}x -timeout 60m ./drivers/host/

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg="$${t%%:*}"; target="$${t##*:}"; \
		echo "== fuzz $$target in $$pkg for $(FUZZTIME)"; \
		$(GO) test -tags '$(TEST_TAGS)' "$$pkg" -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
	done

# The demo: the main job for real against the local testbed (examples/testbed, as root), narrated
# by testbed/demo.sh: testbed up, validate --static, plan (must show changes), apply -auto-approve,
# plan again (--detailed-exitcode: must be 0), validate, then one Ethernet fault (two host cables
# swapped: validate and plan must exit 6 naming both ends; swapped back: validate clean), a
# summary, testbed down always, then the static check of every other example. The hosts are network namespaces, where the Debian kernel's
# soft-RoCE carries no RDMA traffic, so the last validate skips the traffic stage: `make demo-vm`
# runs the same job inside the VM testbed with real RDMA traffic (examples/vm-testbed).
DEMO_SPEC ?= examples/testbed
# YANG models (one sub-directory per set: sonic, openconfig, srlinux): when the directory exists,
# the SONiC emulators validate every patch and the gNMI targets every Set against them.
DEMO_YANG ?= ../shared/yang
# The Ethernet fault the demo injects and heals (fabctl testbed fault KIND ARGS; needs lldpd).
DEMO_ETH_FAULT ?= miswire h1:eth1 h3:eth1

demo: build
	@BIN=$(BIN) YANG=$(DEMO_YANG) VALIDATE_FLAGS=--skip-traffic ETH_FAULT="$(DEMO_ETH_FAULT)" testbed/demo.sh $(DEMO_SPEC) $(filter-out $(DEMO_SPEC),$(EXAMPLES))

# The InfiniBand demo (testbed/demo-ib.sh, root): examples/ib-testbed as a simulated subnet (ibsim,
# the real opensm and infiniband-diags under libumad2sim): up, validate --static, plan, apply,
# validate (the fabric read back over MADs), re-plan clean, a cable fault caught by port, down.
demo-ib: build
	@BIN=$(BIN) testbed/demo-ib.sh examples/ib-testbed

# The demo with real RDMA traffic: boots the VM testbed (below) and runs testbed/demo.sh on
# examples/vm-testbed inside it (section demo): emulated switches, two soft-RoCE hosts on a veth
# pair, and `fabctl validate` with every stage, the verbs traffic test included.
demo-vm:
	FABTB_SHOW_LOG=1 testbed/vm/run.sh demo

# The VM testbed (testbed/vm/README.md): builds the guest image when its inputs changed (cached in
# FABCTL_VM_CACHE, default /var/cache/fabctl-vm; root), boots it under qemu TCG and runs every section
# (FABTB_SECTIONS="info rxe" for some), one subtest each, then a summary with timings and figures;
# TestVMHarness (first) boots it once more to prove the runner (reset, skip/fail/timeout reporting);
# a failed section's reason and the end of its log are repeated last, where CI's excerpt looks.
# `make test` never boots the VM; `make demo-vm` boots it for the demo section only.
# go test -timeout for both tests: CI's run took 37 min; at load 10-19 on 2 cores TestVMHarness took
# 4.5 min and the sections 52 min, which the former 60m cut short.
E2E_VM_TIMEOUT ?= 70m
e2e-vm:
	FABCTL_E2E_VM=1 $(GO) test -count=1 -v -timeout $(E2E_VM_TIMEOUT) -run '^TestVM(Harness)?$$' ./testbed/vm/

# The Kubernetes engine (docs/kubernetes.md): kube-apiserver and kubectl built from the module proxy by
# the nested module testbed/kube (cached in FABCTL_KUBE_CACHE, default /var/cache/fabctl-kube; reused
# when its inputs are unchanged), Debian's etcd, and every scenario of testbed/kubetb (root: netns hosts).
E2E_KUBE_TIMEOUT ?= 30m
e2e-kube:
	apiserver=$$(testbed/kube/build.sh | tail -n 1) && \
	FABCTL_E2E_KUBE=1 FABCTL_KUBE_APISERVER=$$apiserver FABCTL_KUBECTL=$$(dirname $$apiserver)/kubectl $(GO) test -count=1 -v -timeout $(E2E_KUBE_TIMEOUT) -run '^TestKubeEngine$$' ./testbed/kubetb/

bench-kube:
	apiserver=$$(testbed/kube/build.sh | tail -n 1) && \
	FABCTL_E2E_KUBE=1 FABCTL_KUBE_APISERVER=$$apiserver $(GO) test -count=1 -run '^$$' -bench '^BenchmarkPublish4096$$' -benchtime 1x -timeout 30m ./testbed/kubetb/

# The agent image (docs/kubernetes.md): tools/image, a nested module on go-containerregistry, builds
# fabctl static for each platform and writes a reproducible image named as `fabctl kube manifests`
# expects by default (fabctl:$(VERSION)): every timestamp is the commit time, so the same commit
# and Go give the same digest. IMAGE_NAME=registry.example/fabctl:v1 names it otherwise.
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_NAME      ?=
IMAGE_SOURCE    ?= https://$(PKG)
image:
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 0)} $(GO) -C tools/image run . -repo $(CURDIR) \
		-out $(CURDIR)/dist -platforms '$(IMAGE_PLATFORMS)' -version '$(VERSION)' -commit '$(COMMIT)' \
		-source '$(IMAGE_SOURCE)' $(if $(IMAGE_NAME),-name '$(IMAGE_NAME)')

# Its tests live in the nested module (make test does not reach it); skopeo, docker-registry
# and podman (Debian) are skipped without them, and fail under CI=true.
image-test:
	$(GO) -C tools/image vet ./...
	$(GO) -C tools/image test -count=1 -timeout $(TEST_TIMEOUT) $(TESTFLAGS) ./...

clean:
	rm -rf bin dist
	$(GO) clean -testcache
