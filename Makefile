# hcpsched developer entry points. `make check` is the fast loop to run before each
# commit (lint and the unit tests on the memory store). `make test` is what CI runs on a
# clean clone, so every tool it needs is installed from here: Go modules through the
# module proxy, the emulator's npm packages with `npm ci` from the committed lockfile.

SHELL := /bin/bash
GO ?= go
EMULATOR_PORT ?= 8081
GOTEST_FLAGS ?= -race -count=1
MODULE := github.com/hcpsched/hcpsched

# Every package has an explicit test timeout well below Go's default of 10 minutes, so
# that a hung test fails with its goroutines dumped long before that. The long packages
# (a whole local region, the short chaos profile) have one of their own; they take
# under a minute warm.
TEST_TIMEOUT ?= 3m
LONG_TEST_TIMEOUT ?= 6m
LONG_TEST_PACKAGES := $(MODULE)/internal/dev/scenario $(MODULE)/internal/dev/localregion

.PHONY: all build check test fuzz lint fmt vet staticcheck emulator emulator-deps run bench chaos clean promtool alerts-test

all: build

## build: every package, and the operator command into _output/bin/hcpsched
## (docs/operations.md).
build:
	$(GO) build ./...
	$(GO) build -o _output/bin/hcpsched ./hcpsched

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
# test fails the run. The long packages run second, under their own timeout, and the
# fuzz targets meanwhile (FUZZ_LOG, printed after the summary): the long packages mostly
# wait on simulated time while fuzzing keeps both cores busy, so running them side by
# side takes about a minute less than one after the other (a cold `make test` was 736 s
# with them in turn).
FUZZ_LOG := _output/fuzz.log
test: emulator-deps lint alerts-test
	@mkdir -p $(dir $(FUZZ_LOG))
	set -o pipefail; { \
		$(GO) test $(GOTEST_FLAGS) -timeout $(TEST_TIMEOUT) -json $$($(GO) list ./... ./tools/... | grep -vxF $(LONG_TEST_PACKAGES:%=-e %)); \
		status=$$?; \
		$(MAKE) --no-print-directory fuzz > $(FUZZ_LOG) 2>&1 & fuzz=$$!; \
		$(GO) test $(GOTEST_FLAGS) -timeout $(LONG_TEST_TIMEOUT) -json $(LONG_TEST_PACKAGES) || status=1; \
		if ! wait $$fuzz; then cat $(FUZZ_LOG) >&2; echo "make fuzz failed (log: $(FUZZ_LOG))" >&2; status=1; fi; \
		exit $$status; \
	} | $(GO) run ./tools/testsummary
	@cat $(FUZZ_LOG)

# What `make check` leaves out. Whole packages: the emulator's own tests (its TestMain
# starts one), the scenario runner and the local region. Elsewhere, by name: a test
# that needs Cosmos has Emulator in its name or runs as a subtest named emulator (the
# conformance suite on the Cosmos store is TestConformance/emulator). Go's -skip keeps
# them from running at all, so nothing counts as skipped; and with HCPSCHED_NO_EMULATOR
# set the emulator refuses to start, so a test named otherwise fails instead of
# slowing the loop down.
CHECK_EXCLUDE := $(MODULE)/internal/dev/emulator $(LONG_TEST_PACKAGES)
CHECK_SKIP := Emulator|/^emulator$$|//^emulator$$

## check: the fast inner loop, about 2 minutes warm: gofmt, go vet, staticcheck, then the
## unit tests with the race detector on the memory store only (no emulator, no scenario
## or chaos run, no fuzzing, no promtool). `make test` runs everything.
check: lint
	set -o pipefail; HCPSCHED_NO_EMULATOR=1 $(GO) test $(GOTEST_FLAGS) -timeout $(TEST_TIMEOUT) -skip '$(CHECK_SKIP)' -json \
		$$($(GO) list ./... ./tools/... | grep -vxF $(CHECK_EXCLUDE:%=-e %)) | $(GO) run ./tools/testsummary -conformance memory

# Every `func FuzzX(f *testing.F)` in the repository, found afresh on each run, is fuzzed
# for FUZZTIME. Go fuzzes one target per run, so each package's fuzzing test binary is
# built once (into FUZZ_BIN) and run once per target from the package's directory: a
# `go test -fuzz` per target spent about 1.5 s in the go command alone, 37 times. Each
# worker minimizes every new input it finds for at most FUZZMINIMIZETIME; at Go's
# default of 60s, a run of a few seconds does little but minimize. The corpus grows in
# the Go build cache (`go env GOCACHE`, under fuzz/<import path>, where `go test -fuzz`
# keeps it too), not here; only a failing input is written into the repository, to the
# package's testdata/fuzz/<FuzzX>/, to be kept as a regression test.
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can fail a target
# with a bare "context deadline exceeded" when the time runs out while a worker is busy
# (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline to race. 100 inputs
# per target keep `make test` within its budget (300 made the fuzzing outlast the long
# packages beside it by minutes); `make fuzz FUZZTIME=100000x` fuzzes each for longer.
FUZZTIME ?= 100x
FUZZMINIMIZETIME ?= 100x
FUZZ_BIN := _output/fuzz

## fuzz: every fuzz target briefly; `make fuzz FUZZTIME=100000x` fuzzes each for longer.
fuzz:
	@set -o pipefail; mkdir -p $(FUZZ_BIN); cache=$$($(GO) env GOCACHE)/fuzz; \
	grep -rl --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata --exclude-dir=node_modules --exclude-dir=_output \
		'^func Fuzz' . | xargs -n1 dirname | sort -u | while read -r dir; do \
		pkg=$$($(GO) list "$$dir") || exit 1; \
		bin=$(CURDIR)/$(FUZZ_BIN)/$$(echo "$$pkg" | tr / _).test; \
		$(GO) test -c -race -fuzz=. -o "$$bin" "$$dir" || exit 1; \
		for name in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)([A-Za-z0-9_]* \*testing\.F).*/\1/p' "$$dir"/*_test.go); do \
			echo "fuzz: $$dir $$name for $(FUZZTIME)"; \
			(cd "$$dir" && "$$bin" -test.paniconexit0 -test.timeout=5m -test.run='^$$' -test.fuzz="^$$name\$$" \
				-test.fuzztime=$(FUZZTIME) -test.fuzzminimizetime=$(FUZZMINIMIZETIME) -test.fuzzcachedir="$$cache/$$pkg") || exit 1; \
		done; \
	done

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

# -race: vet type-checks against its dependencies' compiled export data, and compiled
# with the race detector, as the tests are, they are the tests' own build; a plain vet
# compiled every package a second time (about 2 minutes of a cold `make test`).
vet:
	$(GO) vet -race ./...

# staticcheck is pinned in tools/go.mod as a `tool` (go.work makes it visible), so it never
# enters the product's dependency graph. GOFLAGS=-race for the reason vet has it: the
# export data it loads is then the tests' own build; a plain run compiled every package
# again (cold, 140 s against 72 s after vet).
staticcheck:
	GOFLAGS=-race $(GO) tool staticcheck ./...

RUN_FLAGS ?=

## run: a whole region on this machine (Cosmos emulator, fake Cluster Service, MC simulator,
## fleet controller, backend). Ctrl-C stops it; RUN_FLAGS=--exit-when-settled exits 0 once
## settled. The orchestrator is built and then exec'd so that Ctrl-C reaches it directly.
# A line before and after the build of localregion, which says what it does from there on:
# on a cold cache this build compiles every dependency and takes minutes.
run: emulator-deps
	@echo "building localregion (the first build compiles every dependency: a few minutes) ..."
	@start=$$(date +%s); $(GO) build -o _output/bin/localregion ./cmd/localregion && \
		echo "built localregion in $$(( $$(date +%s) - start ))s"
	_output/bin/localregion $(RUN_FLAGS)

clean:
	rm -rf _output emulator/node_modules

## bench: the placement decision at 10 to 10,000 MCs, cache relist and memory per document,
## the emulator's latency and feed throughput, then the scenario runner: the whole pipeline,
## 50 MCs and a burst of 2,000 clusters, on the memory store (8 ms modelled per request)
## and on the emulator (5 ms added per request), each with 20 placement workers and then 1,
## with CPU, allocations, heap, queue waits, requests and CS calls per cluster. Writes
## _output/bench/summary.json and chart.svg. BENCH_FLAGS=--profile=large runs 200 MCs and
## 10,000 clusters. Long-running; not part of `make test`.
BENCH_FLAGS ?=
bench: emulator-deps
	$(GO) test -run '^$$' -bench . -benchmem ./internal/placement/
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/informers/
	$(GO) test -run '^$$' -bench . ./internal/dev/emulator/
	$(GO) test -run '^$$' -bench . ./internal/database/cosmos/
	$(GO) run ./cmd/scenario bench $(BENCH_FLAGS)

## chaos: the pipeline with more demand than capacity, under faults for at least a minute
## (emulator 412/429/503 and slow requests, Cluster Service 503s, backend replicas killed
## and restarted, two replicas at once, a pin violation, a placed cluster that fails, MCs
## cordoned and shrunk), with the invariants sampled from the change feeds throughout;
## exits non-zero on a FAIL. CHAOS_FLAGS=--short is the profile `make test` runs (as
## internal/dev/scenario's TestShortChaos).
# The runner, which hosts the fleet, the MC simulator and the fake Cluster Service, is
# built with -race like the backend it builds: a race report in its own output fails the
# run too (Go exits 66 after one, and the output is searched for it).
CHAOS_FLAGS ?=
chaos: emulator-deps
	@mkdir -p _output
	set -o pipefail; $(GO) run -race ./cmd/scenario chaos $(CHAOS_FLAGS) 2>&1 | tee _output/chaos.log
	@if grep -q 'WARNING: DATA RACE' _output/chaos.log; then echo "FAIL  the scenario runner reported a data race; see _output/chaos.log"; exit 1; fi
