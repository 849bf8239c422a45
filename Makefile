# Two entry points: `make demo` (the main job on a bundled dataset) and `make test`.
# Each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# anonymeter (the auditors' tool, the `audit` extra) pins numpy < 1.27: it gets an environment of its own, where
# the cross-check tests run ppdm beside it
AUDIT_VENV := .venv-audit
AUDIT_STAMP := $(AUDIT_VENV)/.installed-stamp
AUDIT_TESTS := tests/attacks/test_anonymeter_crosscheck.py tests/cli/test_attack_control.py::test_anonymeter_beside_ppdm

.PHONY: demo test lint docs smoke bench accept clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,dask,docs,dp,app]'
	touch $(STAMP)

$(AUDIT_STAMP): pyproject.toml
	$(PYTHON) -m venv $(AUDIT_VENV)
	$(AUDIT_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(AUDIT_VENV)/bin/python -m pip install --quiet -e '.[audit]' 'pytest>=8' 'pytest-timeout>=2.3' 'hypothesis>=6.100'
	touch $(AUDIT_STAMP)

demo: $(STAMP)
	@mkdir -p out
	$(BIN)/ppdm datasets export wdbc -o out/wdbc.csv --with-id --force
	$(BIN)/ppdm release out/wdbc.csv --id id --label class -o out/release --force
	@echo "outputs in out/release/: release.csv (publish), release.json (record), report.html, release.state (secret)"

# lint, the declared layers, the documentation site, the installed wheel, ppdm's attacks against anonymeter's
# in their own environment, then the test suite (its summary line is the last), its files shared out among the
# cores (pytest-xdist; a file's tests stay together, so its fixtures are made once)
test: $(STAMP) $(AUDIT_STAMP)
	$(BIN)/ruff check src tests benchmarks scripts docs/hooks
	$(BIN)/lint-imports --no-cache
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d .site
	$(BIN)/python scripts/smoke_wheel.py
	$(AUDIT_VENV)/bin/pytest -q -p no:cacheprovider $(AUDIT_TESTS)
	$(BIN)/pytest -q -n auto --dist loadfile

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
	rm -rf $(VENV) $(AUDIT_VENV) out .pytest_cache .site
