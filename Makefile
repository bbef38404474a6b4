# hcpsched developer entry points. `make test` is what CI runs on a clean clone, so every
# tool it needs is installed from here: Go modules through the module proxy, the emulator's
# npm packages with `npm ci` from the committed lockfile.

SHELL := /bin/bash
GO ?= go
EMULATOR_PORT ?= 8081
GOTEST_FLAGS ?= -race -count=1

.PHONY: all build test lint fmt vet staticcheck emulator emulator-deps run bench clean promtool alerts-test

all: build

build:
	$(GO) build ./...

# npm ci only when the lockfile changed since the last install, so repeated runs stay fast.
emulator/node_modules/.installed: emulator/package.json emulator/package-lock.json
	cd emulator && npm ci --no-audit --no-fund --loglevel=error
	touch $@

emulator-deps: emulator/node_modules/.installed

## emulator: run the Cosmos emulator alone in the foreground on 127.0.0.1:$(EMULATOR_PORT).
emulator: emulator-deps
	node emulator/server.js --port $(EMULATOR_PORT)

# The -json stream goes through tools/testsummary, which prints each package's result,
# where the store conformance suite ran, and "N passed, N failed, N skipped"; a skipped
# test fails the run.
test: emulator-deps lint alerts-test
	set -o pipefail; $(GO) test $(GOTEST_FLAGS) -json ./... ./tools/... | $(GO) run ./tools/testsummary

# promtool comes from Debian's prometheus package (it ships /usr/bin/promtool), pinned to
# the version the alert unit tests were written against; installing it starts no server.
PROMTOOL ?= promtool
PROMTOOL_DEB_VERSION ?= 2.42.0+ds-5+deb12u1

## promtool: install promtool at the pinned version when it is missing or another version.
promtool:
	@if [ "$$(dpkg-query -W -f='$${Version}' prometheus 2>/dev/null)" != "$(PROMTOOL_DEB_VERSION)" ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus=$(PROMTOOL_DEB_VERSION); \
	fi
	@$(PROMTOOL) --version | head -n 1

## alerts-test: promtool's rule checks and unit tests of observability/alerts.
alerts-test: promtool
	PROMTOOL=$(PROMTOOL) observability/alerts/test.sh

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt would rewrite:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# staticcheck is pinned in tools/go.mod as a `tool` (go.work makes it visible), so it never
# enters the product's dependency graph.
staticcheck:
	$(GO) tool staticcheck ./...

RUN_FLAGS ?=

## run: a whole region on this machine (Cosmos emulator, fake Cluster Service, MC simulator,
## fleet controller, backend). Ctrl-C stops it; RUN_FLAGS=--exit-when-settled exits 0 once
## settled. The orchestrator is built and then exec'd so that Ctrl-C reaches it directly.
run: emulator-deps
	$(GO) build -o _output/bin/localregion ./cmd/localregion
	_output/bin/localregion $(RUN_FLAGS)

clean:
	rm -rf _output emulator/node_modules

## bench: Go benchmarks (cache relist and memory per document, emulator latency and feed
## throughput). Long-running; not part of `make test`.
bench: emulator-deps
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/informers/
	$(GO) test -run '^$$' -bench . ./internal/database/emulator/
