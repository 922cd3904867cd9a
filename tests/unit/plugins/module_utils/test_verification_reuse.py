"""A verification made by preflight on its own read of a converged cluster (checks/verification_io.py), and when
egressip_verify may return it as its own (checks/verify_options.py): only with the same options, validated the same
way, in the same mode. The read it is made on gives verify the same lists its own read would (checks/verify_io.py)."""

import json

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.checks import verification_io as verification
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_io
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_options
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from test_k8s import client_with  # pylint: disable=wrong-import-order

NETWORK = {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1'}
OPTIONS = {'objects': [{'name': 'egressip-a', 'egress_ips': ['10.20.0.200']}], 'network': NETWORK,
           'wire': {'echo_target': '10.0.0.5:8080'}, 'remediate': False, 'remediation_hold_down': 0,
           'remediation_min_egress_nodes': 0, 'wait_timeout': 120, 'poll_interval': 1.0}


ROWS = {'nodes': [{'name': 'w0', 'path': 'ok'}], 'egress_ips': [{'egressip': 'egressip-a', 'ip': '10.20.0.200'}]}


def output(**result):
    """A verification as verification_io.run returns it: the report's rows are the result's own."""
    result = dict(ROWS, **(result or {'summary': {'ok': True}, 'findings': []}))
    result['report'] = {'kind': 'verify', 'nodes': result['nodes'], 'egress_ips': result['egress_ips'], 'summary': result['summary']}
    return result


def made(options=None, check_mode=False, **result):
    params, problems = verify_options.validated(dict(options or OPTIONS))
    assert not problems
    return verify_options.packed(output(**result), verify_options.made_with(params, check_mode))


def test_a_handed_over_verification_carries_the_report_s_rows_once_and_gets_them_back():
    precomputed = made()
    assert 'nodes' not in precomputed['report'] and 'egress_ips' not in precomputed['report'] and precomputed['nodes'] == ROWS['nodes']
    assert verify_options.reusable(json.loads(json.dumps(precomputed)), OPTIONS, False) == output()


def test_validation_fills_the_module_defaults_and_names_a_bad_value():
    params, problems = verify_options.validated({'objects': [{'name': 'a'}], 'wait_timeout': '30'})
    assert not problems and params['wait_timeout'] == 30 and params['poll_interval'] == 1.0 and params['remediate'] is False
    assert params['wire'] is None and params['network'] is None
    _params, problems = verify_options.validated({'wait_timeout': 'soon'})
    assert problems and 'wait_timeout' in problems[0]
    _params, problems = verify_options.validated({'datacenter': 'dc1'})
    assert problems and 'datacenter' in problems[0] and 'portgroup' in problems[0]


def test_a_verification_made_with_the_same_options_is_returned_without_its_record():
    precomputed = made(summary={'ok': True, 'egress_ips': 1}, findings=[])
    # the task's options as the role passes them (types as templates give them), with the module's other options beside
    task = dict(OPTIONS, wait_timeout='120', precomputed=precomputed, fail_on_error=False, vcenter_facts=None)
    assert verify_options.reusable(precomputed, task, False) == output(summary={'ok': True, 'egress_ips': 1}, findings=[])
    # the record survives the trip through JSON (the module's result) and is still recognised
    assert verify_options.reusable(json.loads(json.dumps(precomputed)), task, False) is not None


@pytest.mark.parametrize('change', [
    {'objects': [{'name': 'egressip-b'}]},
    {'network': dict(NETWORK, gateway='10.20.0.254')},
    {'wire': None},
    {'wait_timeout': 60},
    {'remediate': True},
])
def test_other_options_make_it_unusable(change):
    options = dict(OPTIONS, **change)
    options = dict((key, value) for key, value in options.items() if value is not None)
    assert verify_options.reusable(made(), options, False) is None


def test_another_mode_no_record_or_options_with_a_problem_make_it_unusable():
    assert verify_options.reusable(made(), OPTIONS, True) is None
    assert verify_options.reusable(made(check_mode=True), OPTIONS, True) is not None
    assert verify_options.reusable({'summary': {'ok': True}}, OPTIONS, False) is None
    assert verify_options.reusable(dict(made(), report=None), OPTIONS, False) is None
    assert verify_options.reusable(None, OPTIONS, False) is None and verify_options.reusable({}, OPTIONS, False) is None
    assert verify_options.reusable(made(), dict(OPTIONS, wait_timeout='soon'), False) is None


class _Module(object):
    check_mode = False
    _diff = False

    def __init__(self):
        self.k8s = None   # no request may be made: every test below refuses before reading

    def require(self, name, reason=None):
        raise AssertionError('no library is needed: %s %s' % (name, reason))


@pytest.mark.parametrize('options, read', [
    (dict(OPTIONS, remediate=True), {'nodes': [], 'egressips': []}),        # a remediation writes under the lock: the module's
    (dict(OPTIONS, wait_timeout=0), {'nodes': [], 'egressips': []}),        # a problem the module names
    (dict(OPTIONS, network={'cidr': '10.20.0.1/24'}), {'nodes': [], 'egressips': []}),   # host bits: the module refuses them
    (OPTIONS, {'nodes': [], 'egressips': None}),                            # the EgressIP CRD absent: the module's error
    (OPTIONS, {'nodes': [], 'unreadable': {'egressips.k8s.ovn.org': 'HTTP 403'}}),   # not readable: the module's error
])
def test_preflight_leaves_to_the_module_what_the_module_reports_or_writes(options, read):
    assert verification.on_converged_read(_Module(), options, None, read) is None


def test_the_read_of_a_preflight_gives_verify_its_lists_and_its_notes():
    nns = [{'metadata': {'name': 'w0'}}]
    nodes, egressips, by_node, notes = verify_io.cluster_of({'nodes': ['n'], 'egressips': ['e'], 'nns': nns})
    assert (nodes, egressips, by_node, notes) == (['n'], ['e'], {'w0': nns[0]}, [])
    _nodes, _egressips, by_node, notes = verify_io.cluster_of({'nodes': [], 'egressips': [], 'unreadable': {}})
    assert by_node is None and notes == ['NodeNetworkStates were not read (HTTP 403): the base address on each NIC was checked in '
                                         'host-cidrs only']
    assert verify_io.cluster_of({'nodes': [], 'egressips': [], 'nns': None})[3][0].startswith('NodeNetworkStates were not read (HTTP 404)')


def test_forwarding_from_a_preflight_read_lists_only_the_profiles():
    operator = {'metadata': {'name': 'cluster'}, 'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': 'Global'}}}}}
    tuneds = [{'metadata': {'name': 'egress', 'namespace': 'openshift-cluster-node-tuning-operator'}},
              {'metadata': {'name': 'elsewhere', 'namespace': 'team-a'}}]   # not the operator's namespace: TuneD ignores it
    k8s, pool = client_with((200, json.dumps({'items': [{'metadata': {'name': 'w0'}}]})))
    facts = verify_io.read_forwarding(k8s, [], {'tuneds': tuneds, 'network_operator': operator})
    assert [item['metadata']['name'] for item in facts['tuneds']] == ['egress'] and list(facts['profiles']) == ['w0']
    assert facts['global'] is True
    assert len(pool.requests) == 1 and pool.requests[0]['url'].split('?')[0].endswith(
        '/apis/tuned.openshift.io/v1/namespaces/openshift-cluster-node-tuning-operator/profiles')


@pytest.mark.parametrize('read, status', [({'tuneds': [], 'network_operator': None}, 404), ({'network_operator': {}}, 403)])
def test_a_kind_preflight_could_not_read_is_noted_as_verify_s_own_read_of_it(read, status):
    k8s, _pool = client_with((200, json.dumps({'items': []})))
    notes = []
    assert verify_io.read_forwarding(k8s, notes, read) is None
    assert notes == ['Node Tuning Operator Profiles were not read (HTTP %d): IP forwarding on the secondary NICs was not checked' % status]
    with pytest.raises(ModuleFailure):
        verify_io._forwarding_of(read)
