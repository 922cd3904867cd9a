#!/usr/bin/env bash
# All tests: unit, twin self-tests, module and playbook tests against the twin, ansible-test
# sanity, yamllint and ansible-lint, and the version matrix (scripts/matrix.sh). Works on a fresh Debian 12 machine
# as root (installs what it needs first).
# Arguments go to pytest (for example: bash scripts/test.sh -k egressip -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo
# the collection's and the tests' own bytecode, which the test processes, the twins and the unit tests import: a machine
# with PYTHONDONTWRITEBYTECODE=1 (CI's) would compile them in every process (scripts/bootstrap.sh)
.venv/bin/python -m compileall -q -j 0 plugins tests benchmarks >/dev/null || true
echo "==> building the vCenter simulator"
.venv/bin/python tests/twin/ctl.py build
echo
# Test modules run in parallel (each with a twin of its own); most of their time is spent waiting
# on the twin's controllers and on ansible-playbook, so more workers than cores pays off.
workers=${PYTEST_WORKERS:-4}
status=0
# Sanity (ansible-test, antsibull-docs), lint (yamllint, ansible-lint) and the version matrix's sanity on the oldest
# and the newest release run beside pytest, one after the other: the twin tests mostly wait on controllers, so the
# cores have room for one more job, not for three. Their output is printed after pytest's. SANITY_SERIAL=1 runs them
# after pytest instead. The matrix's unit tests on the other releases run last in that job.
# The unit tests beside pytest on the oldest and the newest release (2.19 is the main run); `make matrix` runs every
# release of the support matrix (2.16 to 2.21): CI's 30 minutes on 2 cores leave room for two more unit runs, not five.
matrix_releases=${MATRIX_CI_RELEASES:-2.16 2.21}
matrix_sanity_releases=${SANITY_RELEASES:-2.16 2.21}
background_dir=$(mktemp -d "${TMPDIR:-/tmp}/ocp-egressip-test.XXXXXX")
quiet_pip() {
  # pip's install chatter is left out of the matrix's output
  grep -v -E "^(Looking in|WARNING: Location 'file:|Collecting|  Downloading|     .*eta|Installing collected|Successfully installed|Requirement already)" || true
}
cpu_of_children() {
  # children_cpu: CPU seconds (user + system) of the processes this shell has waited for so far (fields 16 and 17 of
  # its stat; a function, not a $(...), which would read its own subshell's)
  local stat
  read -r -a stat <"/proc/$BASHPID/stat"
  children_cpu=$(((stat[15] + stat[16]) / $(getconf CLK_TCK)))
}
timed() {
  # timed PART COMMAND...: runs the command, then notes its wall and CPU seconds in PART.time (printed after pytest's
  # output: what the checks beside pytest cost on CI's 2 cores)
  local part=$1 started=$SECONDS cpu status
  shift
  cpu_of_children
  cpu=$children_cpu
  "$@"
  status=$?
  cpu_of_children
  echo "$((SECONDS - started)) s, $((children_cpu - cpu)) s of CPU" >"$background_dir/$part.time"
  return "$status"
}
checks() {
  # each part's exit status goes to a file; a failing part does not stop the next
  set +e
  timed sanity bash scripts/sanity.sh >"$background_dir/sanity.log" 2>&1
  echo $? >"$background_dir/sanity.rc"
  timed lint bash scripts/lint.sh >"$background_dir/lint.log" 2>&1
  echo $? >"$background_dir/lint.rc"
  if [ "${SKIP_MATRIX:-0}" != 1 ]; then
    # On the other releases only the sanity tests whose verdict depends on the release (the module documentation schema,
    # ansible-doc, compilation and imports on that release's Pythons); the style checks (pylint, pep8, shellcheck, ...)
    # give the same verdict on every release and run once, in the main sanity run above. MATRIX_SANITY_TESTS="" runs all.
    # shellcheck disable=SC2086 # one argument per release
    MATRIX_UNIT=0 SANITY_RELEASES="$matrix_sanity_releases" MATRIX_SANITY_TESTS="${MATRIX_SANITY_TESTS-validate-modules ansible-doc compile import}" \
      timed matrix-sanity bash scripts/matrix.sh --sanity $matrix_sanity_releases 2>&1 \
      | quiet_pip >"$background_dir/matrix-sanity.log"
    echo "${PIPESTATUS[0]}" >"$background_dir/matrix-sanity.rc"
    # The unit tests on every other ansible-core release of the support matrix (the main run is 2.19, the release the
    # integration tests use). MATRIX_CI_RELEASES narrows the releases, SKIP_MATRIX=1 leaves the matrix out.
    # shellcheck disable=SC2086 # one argument per release
    timed matrix-unit bash scripts/matrix.sh $matrix_releases 2>&1 | quiet_pip >"$background_dir/matrix-unit.log"
    echo "${PIPESTATUS[0]}" >"$background_dir/matrix-unit.rc"
  fi
  set -e
}
checks_pid=
if [ "$#" -eq 0 ] && [ "${SANITY_SERIAL:-0}" != 1 ]; then
  checks &
  checks_pid=$!
fi
echo "==> pytest ($workers workers): unit tests, twin self-tests, module and playbook tests against the twin"
.venv/bin/python -m pytest -n "$workers" --dist loadfile "$@" || status=$?
echo "==> pytest done after ${SECONDS} s of this script"
if [ "$#" -eq 0 ]; then
  if [ -n "$checks_pid" ]; then
    wait "$checks_pid" || true
  else
    checks
  fi
  for part in sanity lint matrix-sanity matrix-unit; do
    [ -f "$background_dir/$part.rc" ] || continue
    echo
    case $part in
      sanity) echo "==> ansible-test sanity (ansible-core of .venv)" ;;
      lint) echo "==> lint (yamllint, ansible-lint production profile)" ;;
      matrix-sanity) echo "==> version matrix: ansible-test sanity on ansible-core $matrix_sanity_releases" ;;
      matrix-unit) echo "==> version matrix: unit tests on ansible-core $matrix_releases" ;;
    esac
    grep -v "^WARNING: Location 'file:" "$background_dir/$part.log" || true
    [ -f "$background_dir/$part.time" ] && echo "($part: $(cat "$background_dir/$part.time"))"
    part_status=$(cat "$background_dir/$part.rc")
    [ "$part_status" -eq 0 ] || status=$part_status
  done
fi
rm -rf "$background_dir"
cpu_of_children
if [ "$status" -ne 0 ]; then
  echo "==> FAILED (exit $status, ${SECONDS} s, $children_cpu s of CPU)"
else
  echo "==> all tests passed (${SECONDS} s, $children_cpu s of CPU)"
fi
exit "$status"
