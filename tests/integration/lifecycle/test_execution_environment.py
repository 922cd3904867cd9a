"""The AAP execution environment: ansible-builder creates a build context that installs this
collection and its Python and system requirements (no image is built: no container engine here)."""

import os
import re
import subprocess
import sys
import tarfile

import pytest
import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _read(path):
    with open(path, encoding='utf-8') as handle:
        return handle.read()


def _create_context(tmp_path):
    context = tmp_path / 'context'
    proc = subprocess.run(['bash', 'scripts/ee_context.sh', str(context)], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return context


def test_context_installs_the_collection_and_its_requirements(tmp_path):
    context = _create_context(tmp_path)
    version = yaml.safe_load(_read(os.path.join(REPO_ROOT, 'galaxy.yml')))['version']
    containerfile = _read(context / 'Containerfile')
    assert 'ansible-galaxy collection install' in containerfile
    assert 'install-from-bindep' in containerfile
    galaxy = yaml.safe_load(_read(context / '_build' / 'requirements.yml'))
    assert galaxy['collections'] == [{'name': 'collections/ocp-egressip-%s.tar.gz' % version, 'type': 'file'}]
    assert (context / '_build' / 'collections' / ('ocp-egressip-%s.tar.gz' % version)).is_file()
    python_requirements = _read(context / '_build' / 'requirements.txt')
    for package in ('pyvmomi', 'kubernetes', 'jmespath', 'netaddr'):
        assert package in python_requirements
    # nothing only the tests need reaches the image: no system package, no test-only Python package, no second ansible-core
    assert not [line for line in _read(context / '_build' / 'bindep.txt').splitlines() if line.strip() and not line.startswith('#')]
    assert 'jsonschema' not in python_requirements and 'pytest' not in python_requirements
    definition = yaml.safe_load(_read(os.path.join(REPO_ROOT, 'execution-environment.yml')))
    assert 'ansible_core' not in definition['dependencies'] and 'ansible_runner' not in definition['dependencies']
    # the base image is one build, not a floating tag, and the generated Containerfile starts from it
    base = definition['images']['base_image']['name']
    image, _sep, tag = base.rpartition(':')
    assert '@sha256:' in base or (image and re.match(r'^[0-9.]+-[0-9]+$', tag)), base
    assert base in containerfile


def test_collection_tarball_ships_the_collection_and_not_the_twin(tmp_path):
    _create_context(tmp_path)
    version = yaml.safe_load(_read(os.path.join(REPO_ROOT, 'galaxy.yml')))['version']
    with tarfile.open(os.path.join(REPO_ROOT, 'dist', 'ocp-egressip-%s.tar.gz' % version)) as archive:
        names = archive.getnames()
    assert 'meta/runtime.yml' in names
    assert any(name.startswith('plugins/modules/') for name in names)
    assert any(name.startswith('roles/') for name in names)
    for private in ('.venv', '.twin', '.build', '.pytest_cache', 'tests/twin', 'dist', 'context'):
        assert not any(name == private or name.startswith(private + '/') for name in names), private


def test_the_tarball_ships_the_licence_and_every_file_the_readme_and_docs_link_to(tmp_path):
    """Galaxy shows the README and docs of the built collection: a link to a file it does not ship is a dead link."""
    _create_context(tmp_path)
    version = yaml.safe_load(_read(os.path.join(REPO_ROOT, 'galaxy.yml')))['version']
    with tarfile.open(os.path.join(REPO_ROOT, 'dist', 'ocp-egressip-%s.tar.gz' % version)) as archive:
        names = set(archive.getnames())
        licence = archive.extractfile('COPYING').read().decode()
    assert 'GNU GENERAL PUBLIC LICENSE' in licence and 'Version 3, 29 June 2007' in licence
    dead = []
    for page in ['README.md'] + ['docs/' + name for name in sorted(os.listdir(os.path.join(REPO_ROOT, 'docs'))) if name.endswith('.md')]:
        if page not in names:
            dead.append((page, 'not shipped'))
            continue
        for target in re.findall(r'\]\(([^)#\s]+)(?:#[^)]*)?\)', _read(os.path.join(REPO_ROOT, page))):
            if '://' in target or target.startswith('mailto:'):
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(page), target))
            if path not in names and not any(name.startswith(path + '/') for name in names):
                dead.append((page, target))
    assert dead == []


# --- the docsite: docs/*.md -> docs/docsite/rst/*.rst (scripts/docsite_rst.py), shipped in the tarball -----------------
# Here, not in a file of their own: these tests and the ones above write docs/docsite/rst/ of the checkout, and tests of
# one file run on one xdist worker (--dist loadfile), one after the other.

DOCSITE_PREFIX = 'ansible_collections.ocp.egressip.docsite.'
RST_LABEL = re.compile(r'^\.\. _([^:]+):\s*$', re.MULTILINE)
RST_REF = re.compile(r':ref:`(?:[^`<]*<([^`>]+)>|([^`<]+))`')


def _markdown_pages():
    return sorted(name[:-3] for name in os.listdir(os.path.join(REPO_ROOT, 'docs')) if name.endswith('.md'))


def _toctree_refs(index):
    return [entry['ref'] if isinstance(entry, dict) else entry for section in index['sections'] for entry in section['toctree']]


def _build_tarball(tmp_path):
    proc = subprocess.run(['bash', 'scripts/build_collection.sh', str(tmp_path / 'dist')], cwd=REPO_ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = proc.stdout.strip().splitlines()[-1]
    assert path.startswith(str(tmp_path / 'dist')) and os.path.isfile(path), proc.stdout
    return path


@pytest.fixture(scope='module')
def docsite(tmp_path_factory):
    """extra-docs.yml and {page: RST text} as the built tarball ships them (one build for the tests below)."""
    with tarfile.open(_build_tarball(tmp_path_factory.mktemp('docsite'))) as archive:
        names = archive.getnames()
        assert 'docs/docsite/extra-docs.yml' in names
        index = yaml.safe_load(archive.extractfile('docs/docsite/extra-docs.yml').read().decode())
        rst = {name[len('docs/docsite/rst/'):-len('.rst')]: archive.extractfile(name).read().decode()
               for name in names if name.startswith('docs/docsite/rst/') and name.endswith('.rst')}
    return index, rst


def test_the_tarball_ships_one_docsite_page_per_markdown_page_and_every_page_is_in_the_toctree(docsite):
    index, rst = docsite
    pages = _markdown_pages()
    assert sorted(rst) == pages
    refs = _toctree_refs(index)
    # a new docs/*.md page cannot be forgotten: it must be in extra-docs.yml (the generator fails too)
    assert sorted(refs) == pages and len(refs) == len(set(refs))
    for section in index['sections']:
        assert section['title'] and section['toctree']
    labels = {}
    for page, text in rst.items():
        # antsibull-docs' requirement: every label starts with the collection's prefix; the page label comes first
        assert text.startswith('.. _%s%s:\n' % (DOCSITE_PREFIX, page)), page
        for label in RST_LABEL.findall(text):
            assert label.startswith(DOCSITE_PREFIX), (page, label)
            assert label not in labels, (page, label, labels.get(label))
            labels[label] = page
    for ref in refs:
        assert labels.get(DOCSITE_PREFIX + ref) == ref
    for page, text in rst.items():
        # no link to a Markdown file survives, and every :ref: names a page or section label of the docsite
        assert not re.search(r'<[^<>`\s]*\.md(#[^<>`\s]*)?>`_', text), page
        assert not re.search(r'\]\([^)\s]*\.md', text), page
        for match in RST_REF.finditer(text):
            target = (match.group(1) or match.group(2)).strip()
            assert target in labels, (page, target)


def test_links_between_markdown_pages_become_references_to_the_page_or_section(docsite):
    _index, rst = docsite
    markdown = _read(os.path.join(REPO_ROOT, 'docs', 'support-matrix.md'))
    assert '](limitations.md#what-is-not-known-or-not-tested)' in markdown and '](runbook.md#platform_not_vsphere)' in markdown
    text = rst['support-matrix']
    assert ':ref:`%slimitations.what-is-not-known-or-not-tested`' % DOCSITE_PREFIX in text
    assert '<%srunbook.platform_not_vsphere>`' % DOCSITE_PREFIX in text
    assert '.. _%srunbook.platform_not_vsphere:\n\nplatform_not_vsphere\n---' % DOCSITE_PREFIX in rst['runbook']
    # a file outside docs/ is not part of the docsite: its path stays, as literal text from the collection root
    assert '](../extensions/aap/credential_types/vcenter.yml)' in _read(os.path.join(REPO_ROOT, 'docs', 'aap.md'))
    assert '``extensions/aap/credential_types/vcenter.yml``' in rst['aap'] and 'vcenter.yml>`' not in rst['aap']
    # placeholders that a Markdown parser reads as HTML tags are shown, not dropped
    assert 'cannot host egress IPs of 10.20.0.0/24: <reasons>' in rst['runbook']


def test_sphinx_builds_the_docsite_pages_without_a_warning_and_resolves_every_reference(docsite, tmp_path):
    """Sphinx, nitpicky, warnings as errors, on the pages the tarball ships, under the toctree of extra-docs.yml: every
    page parses (docutils' warnings and errors), every :ref: resolves, every page is in a toctree."""
    index, rst = docsite
    source = tmp_path / 'site'
    (source / 'docsite').mkdir(parents=True)
    for page, text in rst.items():
        (source / 'docsite' / (page + '.rst')).write_text(text, encoding='utf-8')
    (source / 'conf.py').write_text("project = 'ocp.egressip'\n", encoding='utf-8')
    root = ['ocp.egressip', '============', '']
    for section in index['sections']:
        root += ['.. toctree::', '   :caption: %s' % section['title'], '']
        root += ['   docsite/%s' % ref for ref in _toctree_refs({'sections': [section]})] + ['']
    (source / 'index.rst').write_text('\n'.join(root), encoding='utf-8')
    proc = subprocess.run([sys.executable, '-m', 'sphinx', '-b', 'html', '-n', '-W', '--keep-going', '-q',
                           str(source), str(tmp_path / 'html')], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stdout + proc.stderr
    html = (tmp_path / 'html' / 'docsite' / 'support-matrix.html').read_text(encoding='utf-8')
    assert 'href="limitations.html#' in html and 'href="runbook.html#' in html and '.md"' not in html


def _docsite_fixture(tmp_path, pages, toctree):
    root = tmp_path / 'collection'
    (root / 'docs' / 'docsite').mkdir(parents=True)
    for name, text in pages.items():
        (root / 'docs' / (name + '.md')).write_text(text, encoding='utf-8')
    (root / 'docs' / 'docsite' / 'extra-docs.yml').write_text(
        yaml.safe_dump({'sections': [{'title': 'Guides', 'toctree': toctree}]}), encoding='utf-8')
    return root


def _run_generator(root):
    return subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'scripts', 'docsite_rst.py'), str(root)],
                          capture_output=True, text=True, check=False)


def test_the_generator_refuses_a_page_missing_from_extra_docs_and_a_link_to_a_missing_section(tmp_path):
    pages = {'one': '# One\n\n## A part\n\nSee [two](two.md#gone) and [the part](#a-part).\n', 'two': '# Two\n\nText.\n'}
    proc = _run_generator(_docsite_fixture(tmp_path / 'a', pages, ['one']))
    assert proc.returncode == 1 and "not listed ['two']" in proc.stderr, proc.stderr
    root = _docsite_fixture(tmp_path / 'b', pages, ['one', 'two'])
    proc = _run_generator(root)
    assert proc.returncode == 1 and 'docs/one.md links to %stwo.gone, which is no page or section' % DOCSITE_PREFIX in proc.stderr
    assert 'a-part' not in proc.stderr and not (root / 'docs' / 'docsite' / 'rst').exists()
    (root / 'docs' / 'one.md').write_text(pages['one'].replace('two.md#gone', 'two.md'), encoding='utf-8')
    proc = _run_generator(root)
    assert proc.returncode == 0, proc.stderr
    one = (root / 'docs' / 'docsite' / 'rst' / 'one.rst').read_text(encoding='utf-8')
    assert one.startswith('.. _%sone:\n' % DOCSITE_PREFIX)
