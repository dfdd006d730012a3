# Every target that needs the package creates .venv and installs it first, so on a
# fresh machine `make demo` or `make test` is the whole set-up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench bench-ppl lint clean rules-docs docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed-base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	touch $@

$(VENV)/.installed-examples: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[examples]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $@

demo: $(VENV)/.installed-base
	$(BIN)/python -m rewritekit.demo

# two workers: 5.8 min instead of 8.5 on CI's 2 cores (each test is mostly one thread of
# Python; XLA's compiles do not fill the second core)
test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n 2

# compare.py takes about 5 minutes (PyTensor's first C compiles longer); the others a few more
# (xla_depth.py about 17 minutes on 2 cores: the jax.nn chains that blow up run to the 30 s limit)
bench: $(VENV)/.installed-bench
	$(BIN)/python bench/compare.py
	$(BIN)/python bench/ir_build.py
	$(BIN)/python bench/runtime.py
	$(BIN)/python bench/rewrite.py
	$(BIN)/python bench/grad.py
	$(BIN)/python bench/pipeline.py
	$(BIN)/python bench/logprob_build.py
	$(BIN)/python bench/xla_depth.py --timeout 30
	$(BIN)/python bench/first_call.py
	$(BIN)/python bench/vectorize.py
	$(BIN)/python bench/sharding.py
	$(BIN)/python bench/jax_import.py
	$(BIN)/python bench/pictures.py

rules-docs: $(VENV)/.installed-base
	$(BIN)/python -m rewritekit.rules.library.catalog > docs/rules-library.md

# the documentation site (mkdocs.yml) into site/; --strict turns every warning (a broken
# link, a docstring that does not render) into a failure
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d site

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .ruff_cache .hypothesis

# PyMC 5.28 needs pytensor<2.39, which the bench extra's PyTensor 3 excludes: its own venv,
# with .venv's jax for PyMC's JAX mode
.venv-pymc/bin/python:
	$(PYTHON) -m venv .venv-pymc
	.venv-pymc/bin/python -m pip install --quiet pymc "jax==$$($(BIN)/python -c 'import jax; print(jax.__version__)')"

# the eight-schools density against hand-written JAX and PyMC (bench/ppl.py, about a minute);
# posteriordb posteriors sampled with NUTS, BlackJAX on rewritekit against NumPyro, both
# checked against the reference draws (bench/posteriordb.py, about 5 minutes on 2 cores)
bench-ppl: $(VENV)/.installed-examples .venv-pymc/bin/python
	$(BIN)/python bench/ppl.py
	$(BIN)/python bench/posteriordb.py
