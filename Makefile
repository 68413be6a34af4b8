# Every target bootstraps what it needs: the OS packages, then .venv with the project in it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OS_STAMP := $(VENV)/.os-packages
OS_TEST_STAMP := $(VENV)/.os-test-packages
# libzbar0: pyzbar reads the layout's fiducials; socat: the demo's serial pseudo-terminals.
OS_PACKAGES := libzbar0 socat
# chromium: the browser tests drive Debian's Chromium with Playwright.
OS_TEST_PACKAGES := chromium

.PHONY: demo test lint replay-examples bench clean

define apt_install
	@mkdir -p $(VENV)
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing OS packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@touch $@
endef

$(OS_STAMP): Makefile
	$(call apt_install,$(OS_PACKAGES))

$(OS_TEST_STAMP): Makefile
	$(call apt_install,$(OS_TEST_PACKAGES))

$(STAMP): pyproject.toml $(OS_STAMP)
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

demo: $(STAMP)
	$(BIN)/floorctl demo $(ARGS)

replay-examples: $(STAMP)
	@for f in ../shared/spec/examples/*.jsonl; do echo "== $$f"; $(BIN)/floorctl replay $$f; done

test: $(STAMP) $(OS_TEST_STAMP)
	@bash .ci/ensure-postgres
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check controller drivers tests hil_tests benchmarks
	$(BIN)/ruff format --check controller drivers tests hil_tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
