"""Writes the collection docsite's extra docs, docs/docsite/rst/<page>.rst, from docs/<page>.md.

The Markdown in docs/ is the only source: the RST is generated at build time (scripts/build_collection.sh,
scripts/sanity.sh) and git-ignored. pandoc converts (-f gfm -t rst); the Lua filter scripts/docsite/md2rst.lua
gives every page and section its label and turns links between pages into :ref: roles (see there).

Fails (exit 1, nothing half-written is kept) when pandoc is missing, when a docs/*.md page is not in
docs/docsite/extra-docs.yml or extra-docs.yml names a page that does not exist, or when a :ref: of the output
names no label (a link to a section that was renamed).
Usage: .venv/bin/python scripts/docsite_rst.py [COLLECTION_ROOT] (default: this checkout)
"""

import glob
import os
import re
import shutil
import subprocess
import sys

import yaml

PREFIX = 'ansible_collections.ocp.egressip.docsite.'
FILTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'docsite', 'md2rst.lua')
LABEL = re.compile(r'^\.\. _([^:]+):\s*$', re.MULTILINE)
REF = re.compile(r':ref:`(?:[^`<]*<([^`>]+)>|([^`<]+))`')
# a reference pandoc made from a Markdown link the filter did not turn into :ref: (`text <x.md>`__)
MD_LINK = re.compile(r'<[^<>`\s]*\.md(?:#[^<>`\s]*)?>`_')


class DocsiteError(Exception):
    pass


def pages(root):
    return sorted(os.path.splitext(os.path.basename(path))[0] for path in glob.glob(os.path.join(root, 'docs', '*.md')))


def toctree_refs(root):
    with open(os.path.join(root, 'docs', 'docsite', 'extra-docs.yml'), encoding='utf-8') as handle:
        index = yaml.safe_load(handle)
    refs = []
    for section in index['sections']:
        for entry in section['toctree']:
            refs.append(entry['ref'] if isinstance(entry, dict) else entry)
    return refs


def convert(root, page, all_pages):
    command = [
        'pandoc', '--from', 'gfm', '--to', 'rst', '--wrap', 'preserve', '--columns', '100000', '--lua-filter', FILTER,
        '--metadata', 'docsite_page=' + page, '--metadata', 'docsite_pages=' + ','.join(all_pages),
        '--metadata', 'docsite_prefix=' + PREFIX, os.path.join(root, 'docs', page + '.md'),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or proc.stderr.strip():
        raise DocsiteError('pandoc failed on docs/%s.md: %s' % (page, proc.stderr.strip() or proc.returncode))
    # simple tables pad their last column; trailing blanks mean nothing in RST
    text = '\n'.join(line.rstrip() for line in proc.stdout.splitlines()) + '\n'
    if not text.startswith('.. _%s%s:\n' % (PREFIX, page)):
        raise DocsiteError('docs/%s.md does not start with a level-1 heading (the page title)' % page)
    return text + '\n.. Generated from docs/%s.md by scripts/docsite_rst.py: edit the Markdown, not this file.\n' % page


def generate(root):
    if shutil.which('pandoc') is None:
        raise DocsiteError('pandoc is not installed (Debian package pandoc; scripts/bootstrap.sh installs it)')
    all_pages = pages(root)
    refs = toctree_refs(root)
    unlisted = sorted(set(all_pages) - set(refs))
    unknown = sorted(set(refs) - set(all_pages))
    if unlisted or unknown:
        raise DocsiteError('docs/docsite/extra-docs.yml must list every docs/*.md page once: not listed %s, no such page %s'
                           % (unlisted, unknown))
    if len(refs) != len(set(refs)):
        raise DocsiteError('docs/docsite/extra-docs.yml lists a page twice: %s' % refs)
    rst = {page: convert(root, page, all_pages) for page in all_pages}
    labels = {label for text in rst.values() for label in LABEL.findall(text)}
    problems = []
    for page, text in rst.items():
        for match in REF.finditer(text):
            target = (match.group(1) or match.group(2)).strip()
            if target not in labels:
                problems.append('docs/%s.md links to %s, which is no page or section' % (page, target))
        problems.extend('docs/%s.md keeps a link to a Markdown file: %s' % (page, link) for link in MD_LINK.findall(text))
    if problems:
        raise DocsiteError('\n'.join(problems))
    out = os.path.join(root, 'docs', 'docsite', 'rst')
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for page, text in rst.items():
        with open(os.path.join(out, page + '.rst'), 'w', encoding='utf-8') as handle:
            handle.write(text)
    return [os.path.join(out, page + '.rst') for page in all_pages]


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    try:
        written = generate(root)
    except DocsiteError as exc:
        print('docsite_rst: %s' % exc, file=sys.stderr)
        return 1
    print('docsite_rst: %d pages in %s' % (len(written), os.path.relpath(os.path.dirname(written[0]), root)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
