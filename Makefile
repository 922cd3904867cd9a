# One entry point for people, CI and AAP image builders. Every target bootstraps what it needs.
SHELL := /bin/bash
PY := .venv/bin/python
PYTEST_ARGS ?=

.PHONY: help venv demo test unit selftest integration sanity lint matrix matrix-sanity twin twin-stop twin-status clean

help:
	@echo "make demo       - the main job against the twin: enable, verify, failover drill, report"
	@echo "make test       - all tests: unit, twin self-tests, module/playbook tests, ansible-test sanity"
	@echo "make unit | selftest | integration | sanity | lint - one part of make test; make matrix - unit tests on ansible-core 2.16 to 2.21 (matrix-sanity: and sanity on 2.16, 2.21)"
	@echo "make twin       - start the twin in the background (then: source .twin/env); DUAL_STACK=1 for a dual-stack one"
	@echo "make twin-stop  - stop it"

venv:
	@bash scripts/bootstrap.sh

demo: venv
	@bash scripts/demo.sh

test:
	@bash scripts/test.sh $(PYTEST_ARGS)

unit: venv
	$(PY) -m pytest tests/unit $(PYTEST_ARGS)

selftest: venv
	$(PY) -m pytest tests/twin/selftest tests/twin/conformance $(PYTEST_ARGS)

integration: venv
	$(PY) -m pytest tests/integration $(PYTEST_ARGS)

sanity: venv
	@bash scripts/sanity.sh

lint: venv
	@bash scripts/lint.sh

matrix: venv
	@bash scripts/matrix.sh

matrix-sanity: venv
	@bash scripts/matrix.sh --sanity

# make twin DUAL_STACK=1: a dual-stack twin (tests/twin/README.md, "Dual stack")
twin: venv
	@$(PY) tests/twin/ctl.py start $(if $(DUAL_STACK),--dual-stack)

twin-stop:
	@$(PY) tests/twin/ctl.py stop

twin-status:
	@$(PY) tests/twin/ctl.py status

clean: twin-stop
	rm -rf .build .cache .pytest_cache reports
