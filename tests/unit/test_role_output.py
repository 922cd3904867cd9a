"""What a run prints about the roles stays readable: Ansible prints each role's argument validation as
`TASK [ocp.egressip.<role> : Validating arguments against arg spec '<entry point>' - <short_description>]`; the long
explanation belongs in `description` (ansible-doc -t role shows both)."""

import glob
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPECS = sorted(glob.glob(os.path.join(ROOT, 'roles', '*', 'meta', 'argument_specs.yml')))


@pytest.mark.parametrize('path', SPECS, ids=lambda path: path.split(os.sep)[-3])
def test_the_argument_validation_line_stays_under_100_characters(path):
    role = path.split(os.sep)[-3]
    with open(path) as handle:
        specs = yaml.safe_load(handle)['argument_specs']
    for entry, spec in specs.items():
        line = "TASK [ocp.egressip.%s : Validating arguments against arg spec '%s' - %s]" % (role, entry, spec['short_description'])
        assert len(line) < 100, line
        assert spec.get('description'), (role, entry)


def _tasks(node):
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        if 'name' in node and any(key not in ('name', 'hosts', 'vars') for key in node):
            yield node
        for key in ('block', 'rescue', 'always'):
            yield from _tasks(node.get(key))


@pytest.mark.parametrize('role', sorted(os.path.basename(os.path.dirname(os.path.dirname(path))) for path in SPECS))
def test_no_task_name_interpolates_a_variable_that_is_empty_by_default(role):
    """`Write verify.json and verify.md to ` was printed when no report directory was set."""
    defaults_path = os.path.join(ROOT, 'roles', role, 'defaults', 'main.yml')
    defaults = {}
    if os.path.exists(defaults_path):
        with open(defaults_path) as handle:
            defaults = yaml.safe_load(handle) or {}
    empty = set(name for name, value in defaults.items()
                if value in ('', None) or (isinstance(value, str) and ("default('')" in value or 'default("")' in value)))
    for path in glob.glob(os.path.join(ROOT, 'roles', role, 'tasks', '*.yml')):
        with open(path) as handle:
            for task in _tasks(yaml.safe_load(handle)):
                for name in empty:
                    assert '{{ %s }}' % name not in str(task['name']), (path, task['name'])


def test_the_shipped_inventory_keeps_the_playbooks_free_of_implicit_localhost_warnings(tmp_path):
    """The demo and the README's commands pass examples/inventory/localhost.yml: every playbook then targets a host of
    the inventory, and Ansible prints neither 'No inventory was parsed' nor 'provided hosts list is empty'."""
    import subprocess
    import sys
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.build'), ANSIBLE_NOCOLOR='1')
    playbooks = sorted(glob.glob(os.path.join(ROOT, 'playbooks', '*.yml')))
    proc = subprocess.run([ansible_playbook, '-i', os.path.join(ROOT, 'examples', 'inventory', 'localhost.yml'), '--list-hosts']
                          + playbooks, env=env, cwd=str(tmp_path), capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'implicit localhost' not in proc.stderr and 'hosts list is empty' not in proc.stderr, proc.stderr
    assert proc.stdout.count('playbook: ') == len(playbooks) == 10  # the nine and their preamble, fleet_hosts.yml
    assert proc.stdout.count('hosts (1):') == proc.stdout.count('  play #') > 0  # every play runs on the one host
    with open(os.path.join(ROOT, 'scripts', 'demo.sh'), encoding='utf-8') as handle:
        assert '-i examples/inventory/localhost.yml' in handle.read()
