#!/usr/bin/env bash
# Builds the collection tarball (dist/, scripts/build_collection.sh: with the docsite's RST pages) and the execution environment's build context
# (default: context/) with ansible-builder, without building an image (no container engine
# needed). Then, where podman exists: podman build -f context/Containerfile -t ocp-egressip-ee context
set -euo pipefail
cd "$(dirname "$0")/.."
context=${1:-context}
version=$(.venv/bin/python -c 'import yaml; print(yaml.safe_load(open("galaxy.yml"))["version"])')
tarball=dist/ocp-egressip-${version}.tar.gz
if ! grep -q "ocp-egressip-${version}.tar.gz" execution-environment.yml; then
  echo "execution-environment.yml does not name $tarball: update it to galaxy.yml's version ${version}" >&2
  exit 1
fi
rm -f "$tarball"
bash scripts/build_collection.sh dist >/dev/null
.venv/bin/ansible-builder create --file execution-environment.yml --context "$context" --output-filename Containerfile >/dev/null
echo "collection: $tarball"
echo "context:    $context/Containerfile"
