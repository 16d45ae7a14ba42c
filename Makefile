# Two commands do all the set-up on a machine with Python 3.11 and git:
#   make demo   the app, its worker and beat, with sample data, on the embedded default
#   make test   the whole suite (set DATABASE_URL / REDIS_URL to run it on PostgreSQL + Redis)

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-16)

.PHONY: demo test lint format install clean system-packages

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

system-packages:
	@scripts/system-packages.sh $(SYSTEM_PACKAGES_FLAGS)

demo: SYSTEM_PACKAGES_FLAGS :=
demo: system-packages install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_setup
	$(BIN)/python manage.py run_demo

test: SYSTEM_PACKAGES_FLAGS := --browser
test: system-packages install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf var/test var/broker var/cache
