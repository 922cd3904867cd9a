"""meta/runtime.yml's action groups for module_defaults: every module of a connection group takes each of the group's
options, and every module that takes them is in the group (derived from the modules' documented options, which
validate-modules holds equal to their argument specs, through ansible-doc --json)."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import k8s_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_argument_spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, 'plugins', 'modules')) if name.endswith('.py') and name != '__init__.py')
K8S = sorted(k8s_argument_spec())
VSPHERE = sorted(vsphere_argument_spec())


@pytest.fixture(scope='module')
def groups():
    with open(os.path.join(ROOT, 'meta', 'runtime.yml')) as handle:
        return yaml.safe_load(handle)['action_groups']


@pytest.fixture(scope='module')
def options():
    """{module: {option: its documentation}} of every module of the collection."""
    ansible_doc = os.path.join(os.path.dirname(sys.executable), 'ansible-doc')
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.build'), ANSIBLE_NOCOLOR='1')
    output = subprocess.run([ansible_doc, '--json', '-t', 'module'] + ['ocp.egressip.%s' % name for name in MODULES],
                            env=env, check=True, capture_output=True, text=True).stdout
    return dict((name.split('.')[-1], doc['doc'].get('options') or {}) for name, doc in json.loads(output).items())


def takes(option_docs, names, nested=None):
    """True when the module takes every one of names (flat, or as suboptions of the dict option nested)."""
    if nested is not None:
        if option_docs.get(nested, {}).get('type') != 'dict':
            return False
        option_docs = option_docs[nested].get('suboptions') or {}
    return all(name in option_docs for name in names)


# group -> (the options its modules share, the dict option they are nested in)
CONNECTION_GROUPS = {
    'k8s': (K8S, None),
    'vsphere': (VSPHERE, None),
    'nested_vsphere': (VSPHERE, 'vsphere'),
    'nested_kubernetes': (K8S, 'kubernetes'),
}


@pytest.mark.parametrize('group', sorted(CONNECTION_GROUPS))
def test_every_module_of_a_connection_group_takes_its_options_and_no_module_is_left_out(group, groups, options):
    names, nested = CONNECTION_GROUPS[group]
    assert len(names) >= 5
    members = sorted(groups[group])
    for module in members:
        missing = [name for name in names if not takes(options[module], [name], nested)]
        assert not missing, '%s in group %s lacks %s' % (module, group, missing)
    assert members == sorted(module for module in MODULES if takes(options[module], names, nested))


def test_the_egressip_group_holds_every_module_and_the_connection_groups_split_it(groups, options):
    assert sorted(groups['egressip']) == MODULES == sorted(options)
    # a module without connection options (egressip_report) is in no connection group
    connected = set().union(*(groups[group] for group in CONNECTION_GROUPS))
    unconnected = sorted(set(MODULES) - connected)
    assert 'egressip_report' in unconnected
    assert not [module for module in unconnected if set(options[module]) & set(K8S + VSPHERE + ['kubernetes'])]
    # a flat Kubernetes option breaks the vCenter-first modules, which is why egressip is not for connection options
    assert not any(takes(options[module], ['kubeconfig']) for module in groups['vsphere'])
    # egressip_render's vsphere option is egressip_vsphere (datacenter, port group), not the vCenter connection
    assert 'egressip_render' not in groups['nested_vsphere'] and 'vsphere' in options['egressip_render']
