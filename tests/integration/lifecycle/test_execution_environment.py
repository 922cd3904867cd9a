"""The AAP execution environment: ansible-builder creates a build context that installs this
collection and its Python and system requirements (no image is built: no container engine here)."""

import os
import subprocess
import re
import tarfile

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
