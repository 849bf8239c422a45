# Two entry points: `make demo` (the main job on a bundled dataset) and `make test`.
# Each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint docs smoke bench accept clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,dask,docs,dp,app]'
	touch $(STAMP)

demo: $(STAMP)
	@mkdir -p out
	$(BIN)/ppdm datasets export wdbc -o out/wdbc.csv --with-id --force
	$(BIN)/ppdm release out/wdbc.csv --id id --label class -o out/release --force
	@echo "outputs in out/release/: release.csv (publish), release.json (record), report.html, release.state (secret)"

# lint, the declared layers, the documentation site, the installed wheel, then the test suite (its summary
# line is the last)
test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts docs/hooks
	$(BIN)/lint-imports --no-cache
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d .site
	$(BIN)/python scripts/smoke_wheel.py
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts docs/hooks
	$(BIN)/lint-imports --no-cache

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d .site

smoke: $(STAMP)
	$(BIN)/python scripts/smoke_wheel.py

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

accept: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python ../shared/checks/accept.py $(GROUP)

clean:
	rm -rf $(VENV) out .pytest_cache .site
