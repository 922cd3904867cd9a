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
  # --no-compile: pip's install-time compilation is per package and slow; the step below compiles everything at once
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-compile -r requirements/test.txt
  rm -f .venv/.bytecode-stamp
  cp requirements/test.txt "$stamp"
fi
# Bytecode for every installed package, once per install. A machine with PYTHONDONTWRITEBYTECODE=1 in its environment (CI's
# and this project's dev machines have it) never writes the caches on first import, so without this every ansible-playbook,
# module and twin process compiles ansible-core, pyVmomi, urllib3 and the rest from source again (about 0.4 s per
# ansible-playbook start and 0.3-0.5 s per vCenter-using module run). Python reads existing bytecode whatever that variable says.
if [ ! -f .venv/.bytecode-stamp ]; then
  say "Compiling the installed packages' bytecode (.venv)"
  .venv/bin/python -m compileall -q -j 0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null || true
  touch .venv/.bytecode-stamp
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
