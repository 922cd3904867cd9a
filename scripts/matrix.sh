#!/usr/bin/env bash
# The unit tests on every ansible-core release the support matrix names, each on a Python that release supports
# (docs/support-matrix.md). One virtualenv per release under .cache/matrix/, made fresh when its requirements change.
# A release whose Python is not on the machine is reported as SKIPPED (not as passed) and makes the run fail with
# MATRIX_STRICT=1. Usage: bash scripts/matrix.sh [--sanity] [2.16 2.19 ...]   (default: every release below)
# --sanity also runs ansible-test sanity (scripts/sanity.sh) with the releases of SANITY_RELEASES (default: the oldest
# and the newest; the release of the integration tests is the one `bash scripts/test.sh` already checks).
# MATRIX_JOBS (default 2) is the number of pytest workers per release; MATRIX_UNIT=0 leaves the unit tests out (with
# --sanity: sanity only, as scripts/test.sh runs it beside pytest).
# MATRIX_SANITY_TESTS (for example "validate-modules import") limits --sanity to those tests. scripts/test.sh runs
# this script (so CI does) with --sanity on every release but 2.19, which its main run covers.
set -euo pipefail
cd "$(dirname "$0")/.."

# release:python. The oldest Python each release supports as a controller that this machine is likely to have:
# 2.16-2.18 run on 3.10-3.12/3.13, 2.19 needs 3.11+, 2.20 and 2.21 need 3.12+.
MATRIX=(2.16:3.11 2.17:3.11 2.18:3.11 2.19:3.11 2.20:3.12 2.21:3.12)
sanity=0
if [ "${1:-}" = --sanity ]; then
  sanity=1
  shift
fi
wanted=("$@")
sanity_releases=" ${SANITY_RELEASES:-2.16 2.21} "

find_python() {
  local version=$1 candidate
  for candidate in "python$version" "/usr/bin/python$version" "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/"$version"*/bin/"python$version"; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import venv' >/dev/null 2>&1; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# ansible-test bootstraps pip in its sanity virtualenvs with a downloaded get-pip.py: the offline stand-in instead
# (as scripts/bootstrap.sh does for .venv), for the pip version this release's ansible-test asks for.
offline_get_pip() {
  local pip_version cache
  pip_version=$("$1/bin/python" -c 'from ansible_test._internal.python_requirements import get_venv_packages
from ansible_test._internal.host_configs import NativePythonConfig
import sys
print(get_venv_packages(NativePythonConfig(version="%d.%d" % sys.version_info[:2]))["pip"])' 2>/dev/null) || return 0
  cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
  mkdir -p "$(dirname "$cache")"
  cmp -s scripts/get_pip_offline.py "$cache" 2>/dev/null || cp scripts/get_pip_offline.py "$cache"
}

# The test requirements without ansible-core (installed per release) and without the tools only sanity and the
# EE test use (ansible-builder, antsibull-docs). They are installed once per Python into a directory of their own
# (pip --target) that each release's virtualenv adds to its path with a .pth file, after its own site-packages: the
# release's own dependencies (Jinja2, PyYAML, cryptography ...) win. Without byte-compiling (--no-compile), a release
# then costs one small install (ansible-core and its dependencies) instead of the whole set.
export PIP_ROOT_USER_ACTION=ignore
requirements=$(grep -v -E '^(ansible-core|ansible-builder|antsibull-docs)==' requirements/test.txt)
pip_install() {
  "$@" -q --disable-pip-version-check --no-compile 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
  return "${PIPESTATUS[0]}"
}

declare -a summary=()
status=0
for entry in "${MATRIX[@]}"; do
  release=${entry%%:*}
  python_version=${entry##*:}
  if [ ${#wanted[@]} -gt 0 ] && [[ ! " ${wanted[*]} " == *" $release "* ]]; then
    continue
  fi
  if ! python=$(find_python "$python_version"); then
    summary+=("ansible-core $release: SKIPPED (no Python $python_version on this machine)")
    [ "${MATRIX_STRICT:-0}" = 1 ] && status=1
    continue
  fi
  deps=.cache/matrix/deps-python$python_version
  deps_stamp=$(printf '%s\n%s\n' "$python" "$requirements")
  if [ ! -f "$deps/.stamp" ] || [ "$(cat "$deps/.stamp")" != "$deps_stamp" ]; then
    echo "==> test requirements for $("$python" --version)"
    rm -rf "$deps"
    pip_install "$python" -m pip install --target "$deps" -r <(printf '%s\n' "$requirements")
    printf '%s' "$deps_stamp" > "$deps/.stamp"
  fi
  venv=.cache/matrix/ansible-core-$release
  stamp="$venv/.stamp"
  wanted_stamp=$(printf '%s\n%s\n%s\n' "$python" "$release" "$deps_stamp")
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted_stamp" ]; then
    echo "==> ansible-core $release: virtualenv on $("$python" --version)"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    pip_install "$venv/bin/python" -m pip install "ansible-core==$release.*"
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    printf '%s\n' "$PWD/$deps" > "$site/ocp-egressip-matrix-deps.pth"
    # bytecode once (scripts/bootstrap.sh says why: PYTHONDONTWRITEBYTECODE=1 machines never write it on import)
    "$venv/bin/python" -m compileall -q -j 0 "$site" >/dev/null || true
    printf '%s' "$wanted_stamp" > "$stamp"
  fi
  offline_get_pip "$venv"
  installed=$("$venv/bin/python" -c 'from ansible.release import __version__; print(__version__)')
  if [ "${MATRIX_UNIT:-1}" = 1 ]; then
    echo "==> ansible-core $installed on $("$venv/bin/python" --version): unit tests"
    if "$venv/bin/python" -m pytest -q -p no:cacheprovider -n "${MATRIX_JOBS:-2}" tests/unit; then
      summary+=("ansible-core $installed ($("$venv/bin/python" --version)): passed")
    else
      summary+=("ansible-core $installed ($("$venv/bin/python" --version)): FAILED")
      status=1
    fi
  fi
  if [ "$sanity" = 1 ] && [[ "$sanity_releases" == *" $release "* ]]; then
    echo "==> ansible-core $installed: ansible-test sanity"
    skip=()
    # MATRIX_SANITY_TESTS (for example "validate-modules ansible-doc"): only these tests, each as --test.
    for test in ${MATRIX_SANITY_TESTS:-}; do
      skip+=(--test "$test")
    done
    # ansible-test 2.16 still asks every Python file, tests included, for the Python 2 boilerplate (__future__ imports,
    # __metaclass__); 2.17 dropped those two tests for content that does not run on Python 2, as this collection does not.
    [ "$release" = 2.16 ] && [ -z "${MATRIX_SANITY_TESTS:-}" ] && skip+=(--skip-test future-import-boilerplate --skip-test metaclass-boilerplate)
    if SANITY_VENV="$venv" SANITY_SKIP_DOCS_LINT=1 bash scripts/sanity.sh "${skip[@]}"; then
      summary+=("ansible-core $installed: sanity passed")
    else
      summary+=("ansible-core $installed: sanity FAILED")
      status=1
    fi
  fi
done
echo
echo "==> matrix"
printf '  %s\n' "${summary[@]}"
exit "$status"
