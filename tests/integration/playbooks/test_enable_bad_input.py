"""playbooks/enable.yml with one bad input at a time (issue 13 section 1, docs/reliability.md "Bad input"):
each run must stop in preflight, name the public variable and the fix, and write nothing, neither in
Kubernetes nor in vCenter. One twin for the whole table; each case is a real run (not --check)."""

import copy
import os

import pytest
import yaml

from twin.fixture import kube_writes, vcsim_writes

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    TWIN_VARS = yaml.safe_load(handle)

pytestmark = pytest.mark.slow


def _parent(variables, path):
    """What the dotted path (list indexes as digits) ends in: the dict or list holding its last key, and that key."""
    keys = [int(key) if key.isdigit() else key for key in path.split('.')]
    target = variables
    for key in keys[:-1]:
        target = target[key]
    return target, keys[-1]


def _set(path, value):
    """A mutation of the variables file: set the dotted path to value."""
    def mutate(variables):
        target, key = _parent(variables, path)
        target[key] = value
    return mutate


def _rename(path, new_key):
    """A mutation of the variables file: the key the dotted path ends in renamed to new_key."""
    def mutate(variables):
        target, key = _parent(variables, path)
        target[new_key] = target.pop(key)
    return mutate


# (id, mutation, texts the failure message must contain)
CASES = [
    ('unknown_variable', _rename('egressip_objects', 'egressip_objcts'),
     ['egressip_objcts', 'did you mean egressip_objects']),
    ('unknown_network_key', _rename('egressip_network.route_metric', 'route_metrc'),
     ['egressip_network.route_metrc', 'did you mean route_metric']),
    ('unknown_object_key', lambda v: v['egressip_objects'][0].update(pod_selectr={'matchLabels': {'app': 'api'}}),
     ['egressip_objects[0].pod_selectr', 'did you mean pod_selector']),
    ('route_metric_above_32_bits', _set('egressip_network.route_metric', 2 ** 40),
     ['egressip_network.route_metric', '4294967295']),
    ('route_metric_not_a_number', _set('egressip_network.route_metric', 'high'),
     ['egressip_network.route_metric', 'integer']),
    ('network_not_a_dict', _set('egressip_network', ['10.20.0.0/24']),
     ['egressip_network', 'dictionary']),
    ('portgroup_name_too_long', _set('egressip_vsphere.portgroup.name', 'p' * 81),
     ['egressip_vsphere.portgroup.name', '80 characters']),
    ('selector_operator_unknown', _set('egressip_nodes.selector', {'matchExpressions': [
        {'key': 'node-role.kubernetes.io/worker', 'operator': 'Equals', 'values': ['']}]}),
     ['egressip_nodes.selector', 'In, NotIn, Exists, DoesNotExist']),
    ('selector_empty', _set('egressip_nodes.selector', {}),
     ['egressip_nodes.selector', 'every node']),
    ('range_without_dash', _set('egressip_network.node_address_range', '10.20.0.10'),
     ['egressip_network.node_address_range', 'first-last']),
    ('range_too_small', _set('egressip_network.node_address_range', '10.20.0.10-10.20.0.11'),
     ['egressip_network.node_address_range', 'node_address_range_too_small']),
    ('ipv6_not_ipv6', _set('egressip_network.ipv6', {'cidr': '10.30.0.0/24', 'gateway': '10.30.0.1', 'node_address_range': '10.30.0.10-10.30.0.99'}),
     ['egressip_network.ipv6.cidr', 'IPv6']),
    ('vlan_out_of_range', _set('egressip_vsphere.portgroup.vlan_id', 4095),
     ['egressip_vsphere.portgroup.vlan_id', '0 to 4094']),
    ('selector_matches_no_node', _set('egressip_nodes.selector', {'node-role.kubernetes.io/egres': ''}),
     ['egressip_nodes.selector', 'matches none of the 6 nodes']),
]

INTERNAL_NAMES = ('preflight_network', 'preflight_objects', '_AnsibleTagged', 'AnsibleUnsafe', 'Traceback')


@pytest.mark.parametrize('case_id,mutate,expected', CASES, ids=[case[0] for case in CASES])
def test_bad_input_stops_in_preflight_with_zero_writes(twin, run_playbook, case_id, mutate, expected):
    variables = copy.deepcopy(TWIN_VARS)
    mutate(variables)
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run = run_playbook('playbooks/enable.yml', extra_vars=variables)
    assert run.rc != 0, run
    assert 'Preflight found' in run.stdout, (case_id, run)
    for text in expected:
        assert text in run.stdout, (case_id, text, run)
    for name in INTERNAL_NAMES:
        assert name not in run.stdout, (case_id, name, run)
    assert kube_writes(twin) == 0, (case_id, twin.kube_requests())
    assert not vcsim_writes(twin), case_id
