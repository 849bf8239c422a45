# Two entry points: `make demo` (the main job on a bundled dataset) and `make test`.
# Each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint bench accept clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,dask]'
	touch $(STAMP)

demo: $(STAMP)
	@mkdir -p out
	$(BIN)/ppdm datasets export wdbc -o out/wdbc.csv --with-id --force
	$(BIN)/ppdm release out/wdbc.csv --id id --label class -o out/release --force
	@echo "outputs in out/release/: release.csv (publish), release.json (record), report.html, release.state (secret)"

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

accept: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python ../shared/checks/accept.py $(GROUP)

clean:
	rm -rf $(VENV) out .pytest_cache
