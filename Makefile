# The README's commands. Each installs what is missing first.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.sluice-installed
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name Cargo.toml) Cargo.toml pyproject.toml scripts/setup.sh

.PHONY: demo test test-rust test-python bench setup clean

setup: $(STAMP)

$(STAMP): $(SOURCES)
	./scripts/setup.sh
	@touch $(STAMP)

## RC(16) under every built-in controller: a table, out/demo.png and JSON reports.
demo: setup
	$(VENV)/bin/sluice demo

## Every Rust and Python test.
test: test-rust test-python

test-rust: setup
	cargo test --workspace --exclude sluice-py --quiet --no-fail-fast

test-python: setup
	$(PY) -m pytest -q
	$(PY) -m mypy --no-error-summary
	$(PY) -m mypy.stubtest sluice._core

## Criterion benchmarks of the data path (numbers in README.md).
bench: setup
	cargo bench -p sluice-core --bench datapath -- --warm-up-time 1 --measurement-time 3
	cargo bench -p sluice-pipeline --bench walker -- --warm-up-time 1 --measurement-time 3

clean:
	rm -rf $(VENV) target out
