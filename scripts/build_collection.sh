#!/usr/bin/env bash
# Builds the collection tarball, dist/ocp-egressip-<version>.tar.gz (or in the directory given as first argument):
# first the docsite's RST pages from docs/*.md (scripts/docsite_rst.py: docs/docsite/rst/, git-ignored, shipped in the
# tarball for the collection's docsite), then ansible-galaxy collection build. The one way the tarball is built.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
.venv/bin/python scripts/docsite_rst.py >/dev/null
mkdir -p "$out"
.venv/bin/ansible-galaxy collection build --force --output-path "$out" . >/dev/null
version=$(.venv/bin/python -c 'import yaml; print(yaml.safe_load(open("galaxy.yml"))["version"])')
echo "$out/ocp-egressip-${version}.tar.gz"
