#!/usr/bin/env bash
# Runs ansible-test sanity offline on a copy of the collection laid out as
# ansible_collections/ocp/egressip outside the git checkout (ansible-test needs that layout, a real
# directory, and no enclosing git repository that ignores it:
# it resolves symlinks and asks git which files exist). Extra arguments go to ansible-test (for example --test pep8).
# Then, on the same copy, antsibull-docs lints the documentation of every module and role (the docsite's schema and
# markup, references to other plugins) and the docsite's extra docs (docs/docsite/extra-docs.yml and the RST pages
# scripts/docsite_rst.py generates from docs/*.md first: labels, toctree, rstcheck); SANITY_SKIP_DOCS_LINT=1 skips both. Either one failing fails the script.
# SANITY_VENV names another virtualenv whose ansible-test runs (scripts/matrix.sh --sanity: another ansible-core release).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# A copy of its own per run (parallel runs must not share one); SANITY_ROOT keeps it for inspection.
if [ -n "${SANITY_ROOT:-}" ]; then
  base=$SANITY_ROOT
  rm -rf "$base/ansible_collections/ocp/egressip"
else
  base=$(mktemp -d "${TMPDIR:-/tmp}/ocp-egressip-sanity.XXXXXX")
  trap 'rm -rf "$base"' EXIT
fi
dest=$base/ansible_collections/ocp/egressip
mkdir -p "$dest"
# Exactly the files git would ship: tracked plus untracked-but-not-ignored.
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -xf - -C "$dest"
cd "$dest"
venv=$(cd "$root" && cd "${SANITY_VENV:-.venv}" && pwd)
export PATH="$venv/bin:$PATH"
py=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
echo "==> ansible-test sanity (python $py) in $dest"
status=0
ansible-test sanity --venv --requirements --python "$py" --color no "$@" || status=$?
if [ "${SANITY_SKIP_DOCS_LINT:-0}" != 1 ]; then
  # the docsite's extra docs (docs/docsite/rst/, git-ignored so not in the copy) are generated from docs/*.md as the
  # tarball's are (scripts/build_collection.sh), so the lint checks the pages the docsite gets
  echo "==> docs/docsite/rst from docs/*.md (scripts/docsite_rst.py) in $dest"
  if "$venv/bin/python" scripts/docsite_rst.py .; then
    echo "==> antsibull-docs lint-collection-docs --plugin-docs in $dest"
    antsibull-docs lint-collection-docs --plugin-docs . || status=$?
  else
    status=1
  fi
fi
exit "$status"
