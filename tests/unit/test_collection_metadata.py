"""Collection-level promises: every module is in the action group, every role documents its
arguments, every playbook uses roles that exist, the sanity ignore files stay empty."""

import glob
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def _modules():
    return sorted(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(ROOT, 'plugins', 'modules', '*.py'))
                  if not os.path.basename(path).startswith('_'))


def _roles():
    return sorted(os.path.basename(os.path.dirname(path)) for path in glob.glob(os.path.join(ROOT, 'roles', '*', 'tasks')))


def test_action_group_lists_every_module():
    runtime = _load('meta/runtime.yml')
    assert sorted(runtime['action_groups']['egressip']) == _modules()


def test_every_role_has_an_argument_spec_with_role_prefixed_options():
    for role in _roles():
        specs = _load('roles/%s/meta/argument_specs.yml' % role)['argument_specs']
        assert 'main' in specs, role
        for option in specs['main'].get('options', {}):
            assert option.startswith(role + '_'), '%s: option %s is not prefixed with the role name' % (role, option)
            assert specs['main']['options'][option].get('description'), '%s: option %s has no description' % (role, option)


def test_playbooks_use_roles_of_this_collection_that_exist():
    roles = set(_roles())
    for path in glob.glob(os.path.join(ROOT, 'playbooks', '*.yml')):
        for play in _load(path):
            for entry in play.get('roles', []):
                name = entry['role'] if isinstance(entry, dict) else entry
                assert name.startswith('ocp.egressip.'), '%s: %s' % (path, name)
                assert name.split('.')[-1] in roles, '%s: role %s does not exist' % (path, name)


def test_sanity_ignore_files_are_empty():
    for path in glob.glob(os.path.join(ROOT, 'tests', 'sanity', 'ignore-*.txt')):
        assert os.path.getsize(path) == 0, '%s hides sanity failures' % path


def test_the_changelog_is_generated_from_changelog_yaml_and_names_the_first_release_and_its_modules():
    """CHANGELOG.rst is antsibull-changelog's rendering of changelogs/changelog.yaml: the first release has a summary and
    lists the modules it shipped; changes after it are fragments under changelogs/fragments/ until the next release."""
    changes = _load('changelogs/changelog.yaml')
    first = changes['releases']['0.1.0']
    assert first['changes']['release_summary'].startswith('First release of ``ocp.egressip``')
    shipped = sorted(module['name'] for module in first['modules'])
    assert len(shipped) == 19 and set(shipped) <= set(_modules())
    with open(os.path.join(ROOT, 'CHANGELOG.rst'), encoding='utf-8') as handle:
        rendered = handle.read()
    assert 'v0.1.0\n======' in rendered and first['changes']['release_summary'].split(':')[0] in rendered
    assert all('ocp.egressip.%s - ' % name in rendered for name in shipped)
