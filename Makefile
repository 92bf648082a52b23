# Two commands do all the set-up on a fresh machine (see README):
#   make demo   -> create .venv if missing, install what is missing, run the main job
#   make test   -> the same set-up, then the whole test suite (unit + integration)
# scripts/bootstrap.sh is idempotent: with everything installed it returns in about a second.

PY := .venv/bin/python
OUTPUT ?= liedar-report

.PHONY: setup demo test test-unit

setup:
	@bash scripts/bootstrap.sh

demo: setup
	$(PY) -m liedar.cli demo --output $(OUTPUT)

# the suite runs in a private network namespace: every server a test starts is loopback-only;
# two pytest-xdist workers (one per core), each test file on one worker, each model on one thread
# make test's set-up also installs the capable rung's weights (qwen2.5-coder-1.5b, one integration test)
WORKERS ?= 2
test:
	@bash scripts/bootstrap.sh --capable
	@bash scripts/browser.sh
	@bash scripts/isolated.sh $(PY) -m pytest -q --timeout=1200 -n $(WORKERS) --dist loadfile --durations=40

test-unit: setup
	@bash scripts/isolated.sh $(PY) -m pytest -q --timeout=600 -n $(WORKERS) --dist loadfile -m "not integration"
