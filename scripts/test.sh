#!/usr/bin/env bash
# All tests: unit, twin self-tests, module and playbook tests against the twin, ansible-test
# sanity, yamllint and ansible-lint, and the version matrix (scripts/matrix.sh). Works on a fresh Debian 12 machine
# as root (installs what it needs first).
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
status=0
# Sanity (ansible-test, antsibull-docs) runs beside pytest: the twin tests mostly wait on controllers, so the
# cores have room for it; its output is printed after pytest's. SANITY_SERIAL=1 runs it after pytest instead.
# Lint (yamllint, ansible-lint) runs beside pytest the same way.
sanity_log=$(mktemp "${TMPDIR:-/tmp}/ocp-egressip-sanity-log.XXXXXX")
lint_log=$(mktemp "${TMPDIR:-/tmp}/ocp-egressip-lint-log.XXXXXX")
sanity_pid=
lint_pid=
if [ "$#" -eq 0 ] && [ "${SANITY_SERIAL:-0}" != 1 ]; then
  bash scripts/sanity.sh >"$sanity_log" 2>&1 &
  sanity_pid=$!
  bash scripts/lint.sh >"$lint_log" 2>&1 &
  lint_pid=$!
fi
echo "==> pytest ($workers workers): unit tests, twin self-tests, module and playbook tests against the twin"
.venv/bin/python -m pytest -n "$workers" --dist loadfile "$@" || status=$?
if [ "$#" -eq 0 ] && [ "${SKIP_MATRIX:-0}" != 1 ]; then
  # The version matrix (scripts/matrix.sh): the unit tests on every other ansible-core release of the support matrix
  # (the main run above is 2.19, the release the integration tests use) and ansible-test sanity on the oldest and the
  # newest (2.19's sanity runs beside pytest). About 5 more minutes on 2 cores from a fresh machine.
  # MATRIX_CI_RELEASES narrows the releases, SKIP_MATRIX=1 leaves it out.
  releases=${MATRIX_CI_RELEASES:-2.16 2.17 2.18 2.20 2.21}
  echo
  echo "==> version matrix: unit tests on ansible-core $releases, sanity on ${SANITY_RELEASES:-2.16 2.21}"
  set +e
  # pip's install chatter is left out.
  # shellcheck disable=SC2086 # one argument per release
  bash scripts/matrix.sh --sanity $releases 2>&1 \
    | grep -v -E "^(Looking in|WARNING: Location 'file:|Collecting|  Downloading|     .*eta|Installing collected|Successfully installed|Requirement already)"
  matrix_status=${PIPESTATUS[0]}
  set -e
  [ "$matrix_status" -eq 0 ] || status=$matrix_status
fi
echo
echo "==> ansible-test sanity"
if [ -n "$sanity_pid" ]; then
  sanity_status=0
  wait "$sanity_pid" || sanity_status=$?
  cat "$sanity_log"
  [ "$sanity_status" -eq 0 ] || status=$sanity_status
else
  bash scripts/sanity.sh || status=$?
fi
rm -f "$sanity_log"
echo
echo "==> lint (yamllint, ansible-lint production profile)"
if [ -n "$lint_pid" ]; then
  lint_status=0
  wait "$lint_pid" || lint_status=$?
  grep -v "^WARNING: Location 'file:" "$lint_log" || true
  [ "$lint_status" -eq 0 ] || status=$lint_status
else
  bash scripts/lint.sh || status=$?
fi
rm -f "$lint_log"
if [ "$status" -ne 0 ]; then
  echo "==> FAILED (exit $status)"
else
  echo "==> all tests passed"
fi
exit "$status"
