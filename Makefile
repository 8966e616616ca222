# fabctl developer targets. `make help` lists them.
#
#   make build   bin/fabctl with version and commit stamped in
#   make test    go test ./... (the per-package ok/FAIL lines)
#   make lint    go vet + gofmt check
#   make demo    build, run the main job against the local testbed (root), tear it down
#   make bench   benchmarks of spec loading and lint
#   make bench-ssh  fabctl apply to 256 hosts over SSH (loopback sshd, netns hosts; root)
#   make fuzz    each fuzz target for FUZZTIME (default 30s)
#   make e2e-vm  the VM testbed: real kernel RDMA (rxe, siw) in qemu, every section (root; testbed/vm/README.md)

# Go lives in /usr/local/go/bin on the CI image; a non-login shell under CI may not have it on PATH.
export PATH := /usr/local/go/bin:$(PATH)
SHELL := /bin/bash

GO      ?= go
BIN     ?= bin/fabctl
PKG     := github.com/fabctl/fabctl
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X $(PKG)/internal/cli.version=$(VERSION) -X $(PKG)/internal/cli.commit=$(COMMIT)

# go test's -timeout per test binary; the whole suite runs in well under a minute today.
TEST_TIMEOUT ?= 10m
TESTFLAGS    ?=

# Benchmarks: spec loading and lint (internal/fabgen generates the large specs they use), and
# plan/apply of 64 emulated switches at 200 ms per commit (testbed/local).
BENCH_PKGS ?= ./spec/ ./validate/... ./internal/fabgen/ ./intent/ ./plan/ ./apply/ ./testbed/local/

# Fuzzing: "package:Target" pairs, each run for FUZZTIME. Add targets here as they are written.
FUZZTIME     ?= 30s
FUZZ_TARGETS ?= ./spec:FuzzLoad ./spec:FuzzUnits ./spec:FuzzFastParse \
                ./drivers/switch/openconfig:FuzzReadJSON ./drivers/switch/srlinux:FuzzReadJSON \
                ./validate/verbs:FuzzDecode ./drivers/host/agent:FuzzDecodeRequest

# Example specs `make demo` validates (every directory under examples/).
EXAMPLES := $(sort $(patsubst %/,%,$(dir $(wildcard examples/*/*.fab.hcl))))

.PHONY: all help build test lint vet fmt-check bench bench-ssh fuzz demo e2e-vm clean

all: lint test build

help:
	@sed -n 's/^#   make /  make /p' $(firstword $(MAKEFILE_LIST))

build:
	@mkdir -p $(dir $(BIN))
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/fabctl
	@$(BIN) version

test:
	$(GO) test -timeout $(TEST_TIMEOUT) $(TESTFLAGS) ./...

lint: vet fmt-check

vet:
	$(GO) vet ./...

fmt-check:
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then \
		echo "gofmt: these files are not formatted (run gofmt -w on them):"; \
		echo "$$out"; \
		exit 1; \
	fi; \
	echo "gofmt: ok"

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(BENCH_PKGS)
	@# Load+lint of the generated pod, 1/8 to 1/1, each in a fresh process: wall, CPU and its own peak RSS.
	$(GO) run ./internal/fabgen/cmd/podbench -all

# `fabctl apply --parallelism 64` to 256 namespace hosts over a loopback OpenSSH server, vs one host
# (drivers/host/ssh_bench_test.go; needs root and openssh-server). Prints s/apply, ms/host, p50/max.
bench-ssh:
	$(GO) test -run '^$$' -bench 'SSHApply' -benchtime $${BENCHTIME:-3x} -timeout 30m ./drivers/host/

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg="$${t%%:*}"; target="$${t##*:}"; \
		echo "== fuzz $$target in $$pkg for $(FUZZTIME)"; \
		$(GO) test "$$pkg" -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
	done

# The demo: the main job for real against the local testbed (examples/testbed, as root):
# testbed up, validate --static, plan (must show changes), apply -auto-approve, plan again
# (--detailed-exitcode: must be 0, no changes), validate (static and read-back; the traffic stage
# needs soft-RoCE, which works only in the root namespace, so it runs in the VM testbed's verbs
# section instead), a summary, and testbed down always (trap), then the static check of every
# other example. Exits non-zero if any step fails.
# FABCTL_TESTBED_PASSWORD is generated when unset (never printed); plan/apply state goes to
# a temporary --state-dir so the demo leaves nothing in the tree.
DEMO_SPEC ?= examples/testbed
# YANG models (one sub-directory per set: sonic, openconfig, srlinux): when the directory exists,
# the SONiC emulators validate every patch and the gNMI targets every Set against them.
DEMO_YANG ?= ../shared/yang

demo: build
	@set -uo pipefail; \
	if [ "$$(id -u)" -ne 0 ]; then echo "make demo needs root: the testbed creates network namespaces and veth pairs (run it as root)"; exit 1; fi; \
	start=$$(date +%s); \
	if [ -z "$${FABCTL_TESTBED_PASSWORD:-}" ]; then \
		FABCTL_TESTBED_PASSWORD="$$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"; \
	fi; \
	export FABCTL_TESTBED_PASSWORD; \
	state="$$(mktemp -d)"; up=0; \
	cleanup() { \
		if [ "$$up" -eq 1 ]; then echo; echo "== $(BIN) testbed down $(DEMO_SPEC)"; $(BIN) testbed down --no-color $(DEMO_SPEC) || echo "demo: testbed down FAILED"; fi; \
		rm -rf "$$state"; \
	}; \
	trap cleanup EXIT; \
	results=(); \
	step() { \
		local want="$$1" name="$$2"; shift 2; \
		echo; echo "== $$name"; \
		local t0=$$(date +%s%N); "$$@"; local rc=$$?; local ms=$$(( ($$(date +%s%N) - t0) / 1000000 )); \
		local secs=$$(printf '%d.%d' $$((ms / 1000)) $$((ms % 1000 / 100))); \
		if [ "$$rc" -ne "$$want" ]; then \
			results+=("FAIL  $${secs}s  $$name (exit $$rc, want $$want)"); \
			echo; echo "demo: step failed: $$name (exit $$rc, want $$want)"; \
			printf '  %s\n' "$${results[@]}"; exit 1; \
		fi; \
		results+=("ok    $${secs}s  $$name"); \
	}; \
	yang=(); if [ -d "$(DEMO_YANG)" ]; then yang=(--yang-dir "$(DEMO_YANG)"); fi; \
	step 0 "$(BIN) testbed up $${yang[*]} $(DEMO_SPEC)" $(BIN) testbed up --no-color "$${yang[@]}" $(DEMO_SPEC); \
	up=1; \
	step 0 "$(BIN) validate --static $(DEMO_SPEC)" $(BIN) validate --static --no-color $(DEMO_SPEC); \
	step 2 "$(BIN) plan $(DEMO_SPEC)  (changes expected: exit 2)" $(BIN) plan --detailed-exitcode --no-color --state-dir "$$state" $(DEMO_SPEC); \
	step 0 "$(BIN) apply -auto-approve $(DEMO_SPEC)" $(BIN) apply -auto-approve --no-color --state-dir "$$state" $(DEMO_SPEC); \
	step 0 "$(BIN) plan --detailed-exitcode $(DEMO_SPEC)  (no changes: exit 0)" $(BIN) plan --detailed-exitcode --no-color --state-dir "$$state" $(DEMO_SPEC); \
	step 0 "$(BIN) validate --skip-traffic $(DEMO_SPEC)" $(BIN) validate --skip-traffic --no-color $(DEMO_SPEC); \
	others=0; \
	for d in $(filter-out $(DEMO_SPEC),$(EXAMPLES)); do \
		if ! out="$$($(BIN) validate --static --no-color "$$d" 2>&1)"; then echo "$$out"; others=1; fi; \
	done; \
	step 0 "$(BIN) validate --static (the other examples) and fmt -check" \
		bash -c 'test '"$$others"' -eq 0 && $(BIN) fmt -check -recursive examples && echo "$(words $(EXAMPLES)) example specs valid and formatted"'; \
	echo; echo "== summary"; \
	$(BIN) testbed status --no-color $(DEMO_SPEC) | sed 's/^/  /'; \
	echo; printf '  %s\n' "$${results[@]}"; \
	echo; echo "demo: ok: the testbed was planned, applied and re-planned clean in $$(( $$(date +%s) - start ))s (settings a veth cannot have are listed as not expressible above)"

# The VM testbed (testbed/vm/README.md): builds the guest image when its inputs changed (cached in
# FABCTL_VM_CACHE, default /var/cache/fabctl-vm; root), boots it under qemu TCG and runs every section
# (FABTB_SECTIONS="info rxe" for some), one subtest each, then a summary with timings and figures;
# TestVMHarness boots it once more to prove the runner (reset, skip/fail/timeout reporting).
# `make test` never boots the VM. A `make demo-vm` (narrated run in the VM) is still to come.
E2E_VM_TIMEOUT ?= 60m
e2e-vm:
	FABCTL_E2E_VM=1 $(GO) test -count=1 -v -timeout $(E2E_VM_TIMEOUT) -run '^TestVM(Harness)?$$' ./testbed/vm/

clean:
	rm -rf bin
	$(GO) clean -testcache
