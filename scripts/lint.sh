#!/usr/bin/env bash
# yamllint (.yamllint) on the repository's YAML and ansible-lint's production profile (.ansible-lint) on the shipped
# content (roles, playbooks, meta), both offline, from a virtualenv of their own (.cache/lint, made again when the pins
# below change) so that their dependencies never meet the collection's.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=("ansible-lint==26.10.1" "yamllint==1.38.0" "$(grep -E '^ansible-core==' requirements/test.txt)")
venv=.cache/lint
if [ ! -f "$venv/.stamp" ] || [ "$(cat "$venv/.stamp")" != "${pins[*]}" ]; then
  echo "==> lint tools: ${pins[*]}"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-compile "${pins[@]}"
  printf '%s' "${pins[*]}" > "$venv/.stamp"
fi
# ansible-lint resolves the collection's FQCNs through .build/ansible_collections/ocp/egressip (made by bootstrap.sh);
# only made here when missing, never replaced, since tests may be running beside this script.
if [ ! -e .build/ansible_collections/ocp/egressip ]; then
  mkdir -p .build/ansible_collections/ocp
  ln -s "$PWD" .build/ansible_collections/ocp/egressip
fi
status=0
echo "==> yamllint"
"$venv/bin/yamllint" --strict . || status=$?
echo "==> ansible-lint (profile production)"
ANSIBLE_COLLECTIONS_PATH="$PWD/.build" PATH="$PWD/$venv/bin:$PATH" "$venv/bin/ansible-lint" --offline --nocolor -q || status=$?
exit "$status"
