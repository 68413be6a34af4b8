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

.PHONY: demo test test-native native clean-native lint replay-examples bench clean

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

# The suite takes about 8 minutes on 2 cores (after the first run's installs). A failing test is
# named as it fails; the time taken is printed at the end.
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

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b; done

clean:
	@if [ -f $(VENV)/pg/data/postmaster.pid ]; then \
	  runas=""; [ "$$(id -u)" = 0 ] && runas="runuser -u postgres --"; \
	  $$runas $$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/pg_ctl -D $(VENV)/pg/data stop -m fast; fi
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
	find controller -name '*.so' -delete; rm -f controller/engine/_native.json
