#!/usr/bin/env bash
# All tests: unit, twin self-tests, module and playbook tests against the twin, ansible-test
# sanity. Works on a fresh Debian 12 machine as root (installs what it needs first).
# Arguments go to pytest (for example: bash scripts/test.sh -k egressip -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo
echo "==> building the vCenter simulator"
.venv/bin/python tests/twin/ctl.py build
echo
# Test modules run in parallel (each with a twin of its own); most of their time is spent waiting
# on the twin's controllers and on ansible-playbook, so more workers than cores pays off.
workers=${PYTEST_WORKERS:-4}
echo "==> pytest ($workers workers): unit tests, twin self-tests, module and playbook tests against the twin"
status=0
.venv/bin/python -m pytest -n "$workers" --dist loadfile "$@" || status=$?
echo
echo "==> ansible-test sanity"
bash scripts/sanity.sh || status=$?
if [ "$status" -ne 0 ]; then
  echo "==> FAILED (exit $status)"
else
  echo "==> all tests passed"
fi
exit "$status"
