#!/usr/bin/env bash
# The main job against the twin: start a fresh twin, enable EgressIP on the secondary network
# (vSphere port group and NICs, node addresses, forwarding, labels, EgressIP objects), verify,
# run a failover drill, and print the report. Works on a fresh Debian 12 machine as root.
# KEEP_TWIN=1 leaves the twin running afterwards (then: source .twin/env).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh

say() { printf '\n==> %s\n' "$*"; }
export ANSIBLE_COLLECTIONS_PATH="$PWD/.build" ANSIBLE_STDOUT_CALLBACK=default ANSIBLE_NOCOLOR=1
# An inventory with the controller in it: no "only implicit localhost" warnings in the output.
playbook() { .venv/bin/ansible-playbook -i examples/inventory/localhost.yml "$@"; }

say "Starting the twin (vCenter simulator + simulated OpenShift cluster)"
.venv/bin/python tests/twin/ctl.py stop >/dev/null 2>&1 || true
.venv/bin/python tests/twin/ctl.py start
# shellcheck disable=SC1091
source .twin/env
if [ "${KEEP_TWIN:-0}" != 1 ]; then
  trap '.venv/bin/python tests/twin/ctl.py stop >/dev/null 2>&1 || true' EXIT
fi

vars=examples/twin-cluster.yml
reports=reports
mkdir -p "$reports"

say "Enable: ocp.egressip.enable with $vars"
playbook playbooks/enable.yml -e "@$vars"

say "Enable again: a second run changes nothing"
playbook playbooks/enable.yml -e "@$vars"

say "Verify: every egress IP assigned, on a capable node, on a working secondary path"
playbook playbooks/verify.yml -e "@$vars" -e "egressip_report_dir=$PWD/$reports"

say "Failover drill: take each egress node out in turn, measure reassignment, compare with the prediction"
playbook playbooks/failover_drill.yml -e "@$vars" -e "egressip_report_dir=$PWD/$reports"

say "Report ($reports/failover_drill.md)"
cat "$reports/failover_drill.md"

say "The same reports for a browser, a mail or a support case (one self-contained file each, no script)"
for name in verify failover_drill; do
  if [ -f "$reports/$name.html" ]; then
    echo "  $PWD/$reports/$name.html"
  fi
done
