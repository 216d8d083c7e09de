# The README's commands. Each installs what is missing first.
VENV   := .venv
PY     := $(VENV)/bin/python
PYTEST := $(PY) -m pytest -q
STAMP  := $(VENV)/.sluice-installed
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name Cargo.toml) Cargo.toml pyproject.toml scripts/setup.sh docs/api/openapi.json

.PHONY: demo test test-rust test-python test-python-engine test-python-offline typecheck lab-check results results-check bench bench-dpdk fuzz fuzz-build setup generate clean

setup: $(STAMP)

$(STAMP): $(SOURCES)
	./scripts/setup.sh
	@touch $(STAMP)

## RC(16) under every built-in controller: tables, out/demo.png and JSON reports.
demo: setup
	$(VENV)/bin/sluice demo

## Rewrites the Python generated from the core's Rust types (the description's
## JSON form, the NF classes, the parts a builder makes, a run's parameters;
## see scripts/generate.py). A test fails while one is stale.
generate: setup
	$(PY) scripts/generate.py

## Every Rust and Python test and the type checks; says how long they took.
## The release core and the Python package build first; the Rust test
## binaries build beside them and beside the Python tests that run the
## engine, at a lower priority (nice 10). Beside those, at the lowest, the
## type checks and the offline Python tests (marked `offline`: the
## simulator, refusals, code checks). The Rust tests run last: some claim
## cores, as the engine's Python tests do, so the two never overlap. Each
## suite's output comes whole.
RUST_BUILD_LOG := target/test-rust-build.log
OFFLINE_LOG := target/test-offline.log
test:
	@start=$$(date +%s); ./scripts/setup.sh system && mkdir -p target || exit 1; \
	  nice -n 10 cargo test --workspace --exclude sluice-py --no-run --quiet >$(RUST_BUILD_LOG) 2>&1 & rust_build=$$!; \
	  $(MAKE) --no-print-directory setup || { wait; exit 1; }; \
	  ( nice -n 19 $(MAKE) --no-print-directory -k typecheck test-python-offline >$(OFFLINE_LOG) 2>&1; echo $$? >$(OFFLINE_LOG).status ) & \
	  $(MAKE) --no-print-directory test-python-engine; engine=$$?; \
	  wait $$rust_build; cat $(RUST_BUILD_LOG); \
	  $(MAKE) --no-print-directory test-rust; rust=$$?; wait; \
	  cat $(OFFLINE_LOG); offline=$$(cat $(OFFLINE_LOG).status); \
	  verdict() { [ $$1 -eq 0 ] && echo passed || echo FAILED; }; \
	  echo "make test: $$(( $$(date +%s) - start )) s (engine tests $$(verdict $$engine), Rust tests $$(verdict $$rust)," \
	    "offline tests and type checks $$(verdict $$offline))"; \
	  [ $$rust -eq 0 ] && [ $$engine -eq 0 ] && [ $$offline -eq 0 ]

## (Needs only cargo and the system packages, not the Python package.)
test-rust:
	cargo test --workspace --exclude sluice-py --quiet --no-fail-fast

## Every Python test in one process.
test-python: setup
	$(PYTEST) --durations=15

test-python-engine: setup
	$(PYTEST) --durations=15 -m "not offline"

## (No cache: the engine's half writes it at the same time.)
test-python-offline: setup
	$(PYTEST) --durations=5 -m offline -p no:cacheprovider

## The Python package's types, and its stub against the built core.
typecheck: setup
	$(PY) -m mypy --no-error-summary
	$(PY) -m mypy.stubtest sluice._core sluice.lab._core

## The lab's experiments at their CI size, each checked against the report its section of
## docs/RESULTS.md documents (about four minutes; not part of `make test`, which checks the product).
lab-check: setup
	$(PYTEST) --durations=5 tests/lab

## Every experiment at the README's settings: docs/RESULTS.md, docs/results/*.{png,json} and the
## README's headline figures (about an hour; QUICK=1 for the CI-sized runs, minutes). Only from a
## clean tree, so that each section's stamp names the commit that made it.
results: setup
	@test -z "$$(git status --porcelain)" || { echo "make results: the tree has uncommitted changes; commit them first, so the figures name their commit" >&2; exit 2; }
	$(VENV)/bin/sluice experiment all --out docs --readme README.md $(if $(QUICK),--quick)

## The sections of docs/RESULTS.md whose experiment changed since they were measured (a warning).
results-check: setup
	$(VENV)/bin/sluice experiment all --check --out docs

## Criterion benchmarks of the data path (numbers in README.md), then the
## round's instructions per packet by part (callgrind; installs valgrind if
## it is missing); FASTCLICK=PATH/TO/click counts FastClick's beside them.
bench: setup
	cargo bench -p sluice-core --bench datapath -- --warm-up-time 1 --measurement-time 3
	cargo bench -p sluice-pipeline --bench walker -- --warm-up-time 1 --measurement-time 3
	cargo bench -p sluice-lab --bench round_cost
	cargo bench -p sluice-nf --bench acl -- --warm-up-time 1 --measurement-time 3
	command -v valgrind >/dev/null || { sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq valgrind; }
	$(VENV)/bin/python scripts/round_breakdown.py --passes 2 $(if $(FASTCLICK),--click $(FASTCLICK))

## Our LPM, exact-match and ACL lookups against DPDK's rte_lpm, rte_hash and
## rte_acl in the same run (installs Debian's libdpdk-dev if it is missing).
bench-dpdk:
	pkg-config --exists libdpdk || { sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq libdpdk-dev pkg-config; }
	cd bench/dpdk && cargo bench --bench lookups -- --warm-up-time 1 --measurement-time 3

## Every fuzz target for FUZZ_SECONDS, all at once (the nightly toolchain and
## cargo-fuzz); each one's final statistics, and its whole log if it failed.
## FUZZ_QUICK=1 runs each target a fixed number of inputs instead (a short
## pass before a commit that touches a parser: the same work on any
## machine, seconds of a core each), built without AddressSanitizer: its
## build is a fifth cheaper. Panics, overflow and debug assertions are still caught;
## the timed runs keep ASan for the unsafe code (pool, rings, LPM tables).
## Both build optimised with debug assertions, cargo-fuzz's default (its
## `-O` would turn the assertions and overflow checks off).
FUZZ_SECONDS ?= 60
FUZZ_BUILD := $(if $(FUZZ_QUICK),-s none)
## name:max_len:inputs under FUZZ_QUICK
FUZZ_TARGETS := headers:1500:1500000 nfs:1500:85000 pcap:4096:10000 description:16384:9500 requests:4096:25000 neighbors:1500:1500000
fuzz-build:
	cd fuzz && cargo +nightly fuzz build $(FUZZ_BUILD)

fuzz: fuzz-build
	@cd fuzz && mkdir -p logs && runs=""; for t in $(FUZZ_TARGETS); do \
	  name=$${t%%:*}; rest=$${t#*:}; len=$${rest%%:*}; inputs=$${rest#*:}; mkdir -p corpus/$$name seeds/$$name; \
	  limit=$$( [ -n "$(FUZZ_QUICK)" ] && echo "-runs=$$inputs" || echo "-max_total_time=$(FUZZ_SECONDS)" ); \
	  cargo +nightly fuzz run $(FUZZ_BUILD) $$name corpus/$$name seeds/$$name -- $$limit -max_len=$$len \
	    -print_final_stats=1 >logs/$$name.log 2>&1 & runs="$$runs $$name:$$!"; \
	done; failed=""; for r in $$runs; do \
	  name=$${r%%:*}; if wait $${r##*:}; then echo "fuzz $$name: $$(grep -m1 '^Done' logs/$$name.log)"; \
	  else failed="$$failed $$name"; cat logs/$$name.log; fi; \
	done; [ -z "$$failed" ] || { echo "fuzz: failed:$$failed" >&2; exit 1; }

clean:
	rm -rf $(VENV) target out
