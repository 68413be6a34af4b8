# Every target bootstraps what it needs: the OS packages, then .venv with the project in it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OS_STAMP := $(VENV)/.os-packages
OS_TEST_STAMP := $(VENV)/.os-test-packages
# libzbar0: pyzbar reads the layout's fiducials; socat: the demo's serial pseudo-terminals.
OS_PACKAGES := libzbar0 socat
# chromium: the browser tests drive Debian's Chromium with Playwright. npm (Debian's, unless
# one is on the PATH already) installs axe-core, the accessibility checker they run in the page.
OS_TEST_PACKAGES := chromium
AXE := $(VENV)/node/node_modules/axe-core/axe.min.js

.PHONY: screenshots demo test test-native native clean-native lint replay-examples bench docs docs-serve \
	wheelhouse clean

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
	@for f in tests/data/examples/*.jsonl; do echo "== $$f"; $(BIN)/floorctl replay $$f; done

$(AXE): | $(OS_TEST_STAMP)
	@command -v npm >/dev/null || { SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq npm; }
	npm install --prefix $(VENV)/node --no-audit --no-fund --silent axe-core@4
	@test -f $@ && touch $@

# A failing test is named as it fails; the time taken is printed at the end (the README says how
# long a run took from a fresh clone).
test: $(STAMP) $(OS_TEST_STAMP) $(AXE)
	@start=$$(date +%s); \
	url=$$(bash .ci/ensure-postgres) || exit 1; \
	echo "PostgreSQL for the tests: $$url"; \
	FLOORCTL_TEST_PG=$$url FLOORCTL_EXPECT_NATIVE=0 $(BIN)/python -m pytest -q; status=$$?; \
	if [ $$status = 0 ]; then $(MAKE) --no-print-directory test-native; status=$$?; fi; \
	echo "make test: $$(( ($$(date +%s) - start) / 60 )) min $$(( ($$(date +%s) - start) % 60 )) s, exit $$status"; \
	exit $$status

# The optional compiled engine (mypyc): built in place by `make native`, removed by
# `make clean-native`. `make test-native` builds it in a copy of the tree and runs the engine
# and simulator tests against that copy (the pure-Python run above is the rest of `make test`).
NATIVE_COPY := $(VENV)/native-copy
NATIVE_TESTS := tests/test_native_build.py tests/test_pontoon_rules.py \
	tests/test_blackjack_rules.py tests/test_irregularities.py tests/test_rescue_12_8.py \
	tests/test_due.py tests/test_examples.py tests/test_properties.py tests/test_snapshot.py \
	tests/test_dealer_bot.py tests/test_simulate_run.py tests/test_simulate_strategy.py \
	tests/test_replay_cli.py tests/test_opening.py tests/test_scenarios.py \
	tests/test_reconciliation_property.py tests/test_check_property.py

native: $(STAMP)
	$(BIN)/python tools/build_native.py

clean-native: $(STAMP)
	$(BIN)/python tools/build_native.py --clean

test-native: $(STAMP)
	@rm -rf $(NATIVE_COPY) && mkdir -p $(NATIVE_COPY)
	@cp -r controller config tools $(NATIVE_COPY)/
	@find $(NATIVE_COPY) \( -name '*.so' -o -name __pycache__ -o -name _native.json \) -prune -exec rm -rf {} +
	$(BIN)/python $(NATIVE_COPY)/tools/build_native.py
	cd $(NATIVE_COPY) && PYTHONPATH=$(abspath $(NATIVE_COPY)) FLOORCTL_EXPECT_NATIVE=1 \
		$(abspath $(BIN))/python -m pytest -q -p no:cacheprovider --rootdir=$(CURDIR) \
		-c $(CURDIR)/pyproject.toml $(addprefix $(CURDIR)/,$(NATIVE_TESTS))

lint: $(STAMP)
	$(BIN)/ruff check controller drivers tests hil_tests benchmarks tools setup.py
	$(BIN)/ruff format --check controller drivers tests hil_tests benchmarks tools setup.py
	$(BIN)/mypy

# Every benchmark in turn (or those named: make bench BENCHES="benchmarks/bench_shoe_latency.py"),
# each one's printed figures also written to benchmarks/RESULTS.md with the date and the machine.
# The full set takes the better part of an hour on 2 cores.
BENCHES ?= $(sort $(wildcard benchmarks/bench_*.py))
bench: $(STAMP)
	@url=$$(bash .ci/ensure-postgres) || exit 1; \
	FLOORCTL_TEST_PG=$$url $(BIN)/python tools/bench_results.py --out benchmarks/RESULTS.md $(BENCHES)

# The documentation site: docs/ built by MkDocs (Material theme) into site/, warnings as errors.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install -q -e '.[docs]'
	@touch $@

# The dealer's guide's pictures, retaken by the layout walk at the touchscreen's size.
screenshots: $(STAMP) $(OS_TEST_STAMP) $(AXE)
	FLOORCTL_SCREENSHOTS=docs/img $(BIN)/python -m pytest -q tests/test_ui_layout.py

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

# Wheels of floorctl and of every dependency, for this platform and Python, into wheelhouse/:
# a table PC with no route to the package index installs from it with
#   python3 -m venv .venv && .venv/bin/pip install --no-index --find-links wheelhouse floorctl
WHEELHOUSE ?= wheelhouse
wheelhouse: $(STAMP)
	@mkdir -p $(WHEELHOUSE) && rm -f $(WHEELHOUSE)/*.whl
	$(BIN)/python -m pip wheel -q --wheel-dir $(WHEELHOUSE) .
	@echo "$(WHEELHOUSE): $$(ls $(WHEELHOUSE) | wc -l) wheels, $$(du -sh $(WHEELHOUSE) | cut -f1)"

clean:
	@if [ -f $(VENV)/pg/data/postmaster.pid ]; then \
	  runas=""; [ "$$(id -u)" = 0 ] && runas="runuser -u postgres --"; \
	  $$runas $$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/pg_ctl -D $(VENV)/pg/data stop -m fast; fi
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache site
	find controller -name '*.so' -delete; rm -f controller/engine/_native.json
