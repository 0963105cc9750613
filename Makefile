# memdesk: `make run` serves the console and API, `make test` runs lint and the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test test-fast lint docs format migrations check-deploy bench demo-agent clean

# Compiled modules are kept (in __pycache__, which git ignores) even where the environment
# says not to: otherwise every test worker, Celery worker and command the suite starts
# compiles the project again, and pytest rewrites the asserts of every test module and
# plugin again (about 7 s of CPU for each process that collects the suite).
unexport PYTHONDONTWRITEBYTECODE

install: $(STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[embedded,dev]'
	# The agents' client and MCP server (clients/python), which the tests import.
	$(BIN)/python -m pip install --quiet -e 'clients/python[mcp]'
	touch $(STAMP)

run: install
	$(BIN)/python -m config.stack run

# mypy's django-stubs plugin imports the settings, which insist on both URLs; nothing connects.
MYPY := env DATABASE_URL=postgres://lint@localhost/lint REDIS_URL=redis://localhost/0 DEBUG=1 $(BIN)/mypy

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MYPY)

# The documentation site (mkdocs.yml, docs/): a broken link or a page missing from the
# navigation fails the build.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The suite runs in TEST_WORKERS processes (pytest-xdist), each with its own test database
# and Redis key prefix; most of its time is spent waiting on workers, browsers and leases.
TEST_WORKERS ?= 2

# The lint of `make lint`, with mypy (half a minute of CPU when its cache is cold, as in a
# fresh clone) checking while the suite runs rather than before it, at the lowest priority:
# it takes the CPU the suite leaves idle while it waits, not the CPU the suite needs. Its
# report is printed after the suite's; either failing fails the target.
test: install docs
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@typed=$$(mktemp); nice -n 19 $(MYPY) >"$$typed" 2>&1 & mypy=$$!; \
	DEBUG=1 $(BIN)/python -m config.stack exec -- sh -c '\
	  $(BIN)/python manage.py makemigrations --check --dry-run && \
	  $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=15 $(PYTEST_ARGS)'; \
	suite=$$?; wait $$mypy; mypy_status=$$?; echo "mypy:"; cat "$$typed"; rm -f "$$typed"; \
	[ $$suite -eq 0 ] && [ $$mypy_status -eq 0 ]

# The suite without the tests marked slow (soaks and a benchmark smoke run).
test-fast: install
	DEBUG=1 $(BIN)/python -m config.stack exec -- \
	  $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal -m "not slow" $(PYTEST_ARGS)

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

migrations: install
	DEBUG=1 $(BIN)/python -m config.stack exec -- $(BIN)/python manage.py makemigrations

check-deploy: install
	DEBUG=0 SECRET_KEY=$$(head -c 48 /dev/urandom | base64) ALLOWED_HOSTS=memdesk.example \
	  $(BIN)/python -m config.stack exec -- $(BIN)/python manage.py check --deploy --fail-level WARNING

bench: install
	DEBUG=1 $(BIN)/python -m config.stack exec -- $(BIN)/python -m bench

# The reference agent (examples/scheduled_publisher) against the memdesk `make run` serves.
# Its setup commands need only PostgreSQL: a REDIS_URL nothing contacts keeps config.stack
# from starting a second embedded Redis on the data file `make run`'s Redis is using.
demo-agent: install
	DEBUG=1 REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:1/0} $(BIN)/python -m config.stack exec -- \
	  $(BIN)/python -m examples.scheduled_publisher $(DEMO_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache test-artifacts
