# The README's commands. Each installs what is missing first.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.sluice-installed
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name Cargo.toml) Cargo.toml pyproject.toml scripts/setup.sh

.PHONY: demo test test-rust test-python results results-check bench bench-dpdk fuzz setup generate clean

setup: $(STAMP)

$(STAMP): $(SOURCES)
	./scripts/setup.sh
	@touch $(STAMP)

## RC(16) under every built-in controller: tables, out/demo.png and JSON reports.
demo: setup
	$(VENV)/bin/sluice demo

## Rewrites what is generated from the core: python/sluice/nf.py (the NF
## classes, from each NF's Rust configuration). A test fails while it is stale.
generate: setup
	$(PY) scripts/gen_nf.py

## Every Rust and Python test; says how long they took.
test:
	@start=$$(date +%s); $(MAKE) --no-print-directory test-rust test-python; rc=$$?; \
	  echo "make test: $$(( $$(date +%s) - start )) s"; exit $$rc

test-rust: setup
	cargo test --workspace --exclude sluice-py --quiet --no-fail-fast

test-python: setup
	$(PY) -m pytest -q
	$(PY) -m mypy --no-error-summary
	$(PY) -m mypy.stubtest sluice._core

## Every experiment at the README's settings: docs/RESULTS.md, docs/results/*.{png,json} and the
## README's headline figures (about an hour; QUICK=1 for the CI-sized runs, minutes). Only from a
## clean tree, so that each section's stamp names the commit that made it.
results: setup
	@test -z "$$(git status --porcelain)" || { echo "make results: the tree has uncommitted changes; commit them first, so the figures name their commit" >&2; exit 2; }
	$(VENV)/bin/sluice experiment all --out docs --readme README.md $(if $(QUICK),--quick)

## The sections of docs/RESULTS.md whose experiment changed since they were measured (a warning).
results-check: setup
	$(VENV)/bin/sluice experiment all --check --out docs

## Criterion benchmarks of the data path (numbers in README.md).
bench: setup
	cargo bench -p sluice-core --bench datapath -- --warm-up-time 1 --measurement-time 3
	cargo bench -p sluice-pipeline --bench walker -- --warm-up-time 1 --measurement-time 3
	cargo bench -p sluice-pipeline --bench round_cost
	cargo bench -p sluice-nf --bench acl -- --warm-up-time 1 --measurement-time 3

## Our LPM, exact-match and ACL lookups against DPDK's rte_lpm, rte_hash and
## rte_acl in the same run (installs Debian's libdpdk-dev if it is missing).
bench-dpdk:
	pkg-config --exists libdpdk || { sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq libdpdk-dev pkg-config; }
	cd bench/dpdk && cargo bench --bench lookups -- --warm-up-time 1 --measurement-time 3

## Every fuzz target for FUZZ_SECONDS each (needs the nightly toolchain and cargo-fuzz).
FUZZ_SECONDS ?= 60
fuzz:
	cd fuzz && for t in headers:1500 nfs:1500 pcap:4096 description:16384; do \
	  name=$${t%%:*}; mkdir -p corpus/$$name seeds/$$name && \
	  cargo +nightly fuzz run -O $$name corpus/$$name seeds/$$name -- -max_total_time=$(FUZZ_SECONDS) -max_len=$${t##*:} -print_final_stats=1 || exit 1; \
	done

clean:
	rm -rf $(VENV) target out
