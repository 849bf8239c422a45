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
	$(BIN)/ppdm perturb out/wdbc.csv --method svd --rank 4 --id id --label class \
		-o out/release.csv --state out/release.state --force
	$(BIN)/ppdm evaluate out/wdbc.csv out/release.csv --id id --label class
	$(BIN)/ppdm evaluate out/wdbc.csv out/release.csv --id id --label class --json > out/evaluation.json
	@echo "outputs in out/: release.csv (publish), release.state (secret), evaluation.json"

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
