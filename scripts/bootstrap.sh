#!/usr/bin/env bash
# Installs what the tests, the twin and the demo need on a fresh Debian 12 machine (as root),
# and creates the virtualenv .venv with the pinned Python packages. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*"; }

# pandoc: the docsite's RST pages are converted from docs/*.md (scripts/docsite_rst.py)
# prometheus: its promtool checks and unit-tests the guard's alert rules (tests/unit/plugins/module_utils/test_guard_alerts.py)
# chromium: the HTML reports are opened headless in the tests as a person would (tests/conftest.py browser)
apt_packages=(golang-go golang-github-vmware-govmomi-dev openssl make git python3-venv shellcheck pandoc prometheus chromium)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# kubectl for the twin's self-tests (tests/twin/selftest/test_kube_lease.py, test_kube_api_clients.py); Debian's package is kubernetes-client.
# Any kubectl already on PATH (for example the kubectl package of Google's repository) is kept: both ship /usr/bin/kubectl.
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if [ ${#missing[@]} -gt 0 ]; then
  say "Installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "Need root to install Debian packages (${missing[*]}); run as root or install them first." >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  say "Creating the virtualenv .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.requirements-stamp
if [ ! -f "$stamp" ] || ! cmp -s requirements/test.txt "$stamp"; then
  say "Installing pinned Python packages (requirements/test.txt) into .venv"
  # --no-compile: modules are compiled when first imported, not all at install (most of kubernetes' generated models never are)
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-compile -r requirements/test.txt
  cp requirements/test.txt "$stamp"
fi

# ansible-test bootstraps pip in its sanity virtualenvs with a downloaded get-pip.py; give it
# the offline stand-in instead (see scripts/get_pip_offline.py).
pip_version=$(.venv/bin/python - <<'PY'
from ansible_test._internal.python_requirements import get_venv_packages
from ansible_test._internal.host_configs import NativePythonConfig
print(get_venv_packages(NativePythonConfig(version='3.11'))['pip'])
PY
)
cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
mkdir -p "$(dirname "$cache")"
cmp -s scripts/get_pip_offline.py "$cache" 2>/dev/null || cp scripts/get_pip_offline.py "$cache"

# ansible and ansible-test want the collection at ansible_collections/ocp/egressip.
mkdir -p .build/ansible_collections/ocp
ln -sfn "$PWD" .build/ansible_collections/ocp/egressip
say "Bootstrap done (.venv, .build/ansible_collections/ocp/egressip)"
