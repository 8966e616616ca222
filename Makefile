# fabctl developer targets. `make help` lists them.
#
#   make build   bin/fabctl with version and commit stamped in
#   make test    go test ./... (the per-package ok/FAIL lines)
#   make lint    go vet + gofmt check
#   make demo    build, then validate every example spec statically
#   make bench   benchmarks of spec loading and lint
#   make fuzz    each fuzz target for FUZZTIME (default 30s)

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

# Benchmarks: spec loading and lint (internal/fabgen generates the large specs they use).
BENCH_PKGS ?= ./spec/ ./validate/... ./internal/fabgen/ ./intent/ ./plan/ ./apply/

# Fuzzing: "package:Target" pairs, each run for FUZZTIME. Add targets here as they are written.
FUZZTIME     ?= 30s
FUZZ_TARGETS ?= ./spec:FuzzLoad ./spec:FuzzUnits ./spec:FuzzFastParse

# Example specs `make demo` validates (every directory under examples/).
EXAMPLES := $(sort $(patsubst %/,%,$(dir $(wildcard examples/*/*.fab.hcl))))

.PHONY: all help build test lint vet fmt-check bench fuzz demo clean

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

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg="$${t%%:*}"; target="$${t##*:}"; \
		echo "== fuzz $$target in $$pkg for $(FUZZTIME)"; \
		$(GO) test "$$pkg" -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
	done

# Until the testbed exists, the demo is the static stage: load and lint every example, check
# their formatting, and show the machine-readable output. Exits non-zero if any example fails.
demo: build
	@set -u; failed=0; \
	for d in $(EXAMPLES); do \
		echo; echo "== $(BIN) validate --static $$d"; \
		if ! $(BIN) validate --static --no-color "$$d"; then failed=$$((failed + 1)); fi; \
	done; \
	echo; echo "== $(BIN) fmt -check -recursive examples"; \
	if $(BIN) fmt -check -recursive examples; then echo "all example files are formatted"; else failed=$$((failed + 1)); fi; \
	echo; echo "== $(BIN) validate --static --json examples/ai-pod | head -n 20"; \
	if json="$$($(BIN) validate --static --json examples/ai-pod)"; then \
		printf '%s\n' "$$json" | head -n 20; \
	else \
		printf '%s\n' "$$json" | head -n 20; failed=$$((failed + 1)); \
	fi; \
	echo; \
	if [ "$$failed" -ne 0 ]; then echo "demo: $$failed check(s) FAILED"; exit 1; fi; \
	echo "demo: $(words $(EXAMPLES)) example specs valid and formatted"

clean:
	rm -rf bin
	$(GO) clean -testcache
