"""egressip against the twin: validation refusals, check mode, create and wait, idempotency, spec-only
updates, ownership and adoption, exclusive, absent, wait timeout with events, injected faults.

Tests run in file order and build on each other (one twin per module). Three workers get a
secondary NIC with an address and the egress-assignable label (_prepare.make_capable); the
fourth has neither.
"""

import pytest

from twin.fixture import kube_writes

import _prepare as prepare
from _prepare import NETWORK

TWIN_OPTIONS = {'workers': 4, 'random_seed': 5}
PAYMENTS = {'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201'], 'namespace_selector': {'matchLabels': {'team': 'payments'}}}


@pytest.fixture(scope='module', autouse=True)
def capable(twin):
    return prepare.make_capable(twin, prepare.workers(twin)[:3])


def args(*objects, **extra):
    base = {'objects': list(objects), 'network': dict(NETWORK), 'wait_timeout': 30, 'wait_sleep': 1}
    base.update(extra)
    return base


def ids(result):
    return [item['id'] for item in result['findings']]


def verbs(twin):
    """The requests to the cluster, the cluster lock's Lease left out (a direct call takes and releases it)."""
    return sorted('%s %s' % (request['verb'], request['resource']) for request in twin.kube_requests()['requests']
                  if request['resource'] != 'leases.coordination.k8s.io')


# --- refusals before any write -------------------------------------------------------------------


# The module refuses before its first write and its message names the field, the value and the fix; every address rule
# itself (broadcast, node address range, families) is tested in tests/unit/plugins/module_utils/test_egressip_validation.py.
@pytest.mark.parametrize('ip, finding_id, text', [
    ('10.30.0.200', 'egressip_outside_network', 'objects[0].egress_ips[1] 10.30.0.200 (EgressIP payments) is outside network.cidr 10.20.0.0/24'),
    ('10.20.0.1', 'egressip_reserved_address', 'is the gateway (network.gateway)'),
    ('10.20.0.200', 'egressip_duplicate', 'is also listed at objects[0].egress_ips[0]'),
    ('10.20.0.300', 'egressip_input_invalid', "objects[0].egress_ips[1] '10.20.0.300' is not an IP address"),
])
def test_bad_ip_is_refused_naming_field_value_and_fix(twin, run_module, ip, finding_id, text):
    twin.reset_kube_requests()
    result = run_module('egressip', args(dict(PAYMENTS, egress_ips=['10.20.0.200', ip])))
    assert result['_rc'] != 0 and result['failed']
    assert ids(result) == [finding_id], result['findings']
    assert text in result['msg'] and 'nothing was written' in result['msg'] and 'Fix: ' in result['msg']
    assert kube_writes(twin) == 0 and result['changed'] is False


def test_node_address_outside_the_range_is_refused(twin, run_module):
    result = run_module('egressip', args(dict(PAYMENTS, egress_ips=['10.20.0.200']), network={'cidr': '10.20.0.0/24'}))
    assert result['_rc'] == 0
    twin.reset_kube_requests()
    result = run_module('egressip', args(dict(PAYMENTS, name='clash', egress_ips=['10.20.0.12']), network={'cidr': '10.20.0.0/24'}))
    assert ids(result) == ['egressip_node_address'] and 'is an address of node ocp1-worker-1' in result['msg']
    assert kube_writes(twin) == 0
    # payments carries traffic (its IP is assigned): deleting it needs force
    assert run_module('egressip', {'objects': [{'name': 'payments'}], 'state': 'absent', 'force': True})['changed'] is True


def test_missing_selector_and_bad_name_are_refused_before_any_request(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip', args({'name': 'Pay_ments', 'egress_ips': ['10.20.0.200']}))
    assert ids(result) == ['egressip_input_invalid', 'egressip_selector_missing']
    assert "objects[0].name 'Pay_ments' is not a valid object name" in result['msg']
    assert 'objects[0].namespace_selector is missing' in result['msg']
    assert twin.kube_requests()['requests'] == []


def test_capacity_is_refused_or_accepted_as_a_warning(twin, run_module):
    three = dict(PAYMENTS, egress_ips=['10.20.0.200', '10.20.0.201', '10.20.0.202'])
    twin.reset_kube_requests()
    result = run_module('egressip', args(three))
    assert ids(result) == ['egress_nodes_capacity_insufficient']
    assert 'has 3 IP(s) but only 3 capable node(s)' in result['msg'] and 'at least 4 are needed' in result['msg']
    assert kube_writes(twin) == 0
    result = run_module('egressip', args(three, allow_insufficient_capacity=True), check=True)
    assert result['_rc'] == 0 and result['changed'] is True
    assert [(item['id'], item['severity']) for item in result['findings']] == [('egress_nodes_capacity_insufficient', 'warning')]
    assert kube_writes(twin) == 0


# --- check mode, create, idempotency ------------------------------------------------------------


def test_check_mode_writes_nothing_and_shows_the_diff(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip', args(PAYMENTS), check=True, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True
    assert result['diff']['before'] == {'payments': None}
    assert result['diff']['after']['payments'] == {
        'metadata': {'labels': {'egressip.ocp/managed-by': 'ocp.egressip'}},
        'spec': {'egressIPs': ['10.20.0.200', '10.20.0.201'], 'namespaceSelector': {'matchLabels': {'team': 'payments'}}}}
    assert kube_writes(twin) == 0
    dry_runs = [request for request in twin.kube_requests()['requests'] if request['dry_run']]
    assert [(request['verb'], request['code']) for request in dry_runs] == [('create', 201)]
    assert prepare.egressip(twin, 'payments') is None
    assert [item['candidates'] for item in result['placement']] == [['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']] * 2


def test_create_waits_until_every_ip_is_assigned(twin, run_module, capable):
    result = run_module('egressip', args(PAYMENTS), diff=True)
    assert result['_rc'] == 0, result['msg'] if 'msg' in result else result
    assert result['changed'] is True and result['egressips'][0]['action'] == 'create'
    assigned = dict((item['egressIP'], item['node']) for item in result['egressips'][0]['assignments'])
    assert sorted(assigned) == ['10.20.0.200', '10.20.0.201']
    assert len(set(assigned.values())) == 2 and set(assigned.values()) <= set(capable)
    assert prepare.assignments(twin, 'payments') == assigned
    obj = prepare.egressip(twin, 'payments')
    assert obj['metadata']['labels'] == {'egressip.ocp/managed-by': 'ocp.egressip'}
    for item in result['placement']:
        assert assigned[item['ip']] in item['candidates']


def test_second_run_changes_nothing_and_costs_two_lists(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip', args(PAYMENTS), diff=True)
    assert result['_rc'] == 0 and result['changed'] is False
    assert result['diff'] == {'before': {}, 'after': {}}
    assert verbs(twin) == ['list egressips.k8s.ovn.org', 'list nodes']


def test_ip_order_and_spelling_are_not_a_change(twin, run_module):
    result = run_module('egressip', args(dict(PAYMENTS, egress_ips=['10.20.0.201', '10.20.0.200'])))
    assert result['_rc'] == 0 and result['changed'] is False


# --- updates -------------------------------------------------------------------------------------


def test_update_is_a_spec_only_merge_patch_keeping_assignments(twin, run_module):
    before = prepare.assignments(twin, 'payments')
    twin.reset_kube_requests()
    changed = dict(PAYMENTS, egress_ips=['10.20.0.200', '10.20.0.210'], pod_selector={'matchLabels': {'app': 'gateway'}})
    result = run_module('egressip', args(changed), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True and result['egressips'][0]['action'] == 'update'
    patches = [request for request in twin.kube_requests()['requests'] if request['verb'] == 'patch']
    assert [(request['name'], request['subresource']) for request in patches] == [('payments', None)]
    assert result['diff']['before']['payments']['spec']['egressIPs'] == ['10.20.0.200', '10.20.0.201']
    assert result['diff']['after']['payments']['spec']['podSelector'] == {'matchLabels': {'app': 'gateway'}}
    after = prepare.assignments(twin, 'payments')
    assert after['10.20.0.200'] == before['10.20.0.200']  # no rebalancing of an IP that stays
    assert sorted(after) == ['10.20.0.200', '10.20.0.210']


def test_selector_keys_not_in_the_entry_are_removed(twin, run_module):
    result = run_module('egressip', args(dict(PAYMENTS, egress_ips=['10.20.0.200', '10.20.0.210'],
                                              namespace_selector={'matchExpressions': [{'key': 'team', 'operator': 'In', 'values': ['payments']}]})))
    assert result['_rc'] == 0 and result['changed'] is True
    spec = prepare.egressip(twin, 'payments')['spec']
    assert spec['namespaceSelector'] == {'matchExpressions': [{'key': 'team', 'operator': 'In', 'values': ['payments']}]}
    assert 'podSelector' not in spec
    assert run_module('egressip', args(dict(PAYMENTS, egress_ips=['10.20.0.200', '10.20.0.210'],
                                            namespace_selector={'matchExpressions': [{'key': 'team', 'operator': 'In',
                                                                                      'values': ['payments']}]})))['changed'] is False


def test_an_ip_moves_from_one_object_to_another_in_one_run(twin, run_module):
    result = run_module('egressip', args(dict(PAYMENTS, egress_ips=['10.20.0.200', '10.20.0.210']),
                                         {'name': 'billing', 'egress_ips': ['10.20.0.220'], 'namespace_selector': {'matchLabels': {'team': 'billing'}}}))
    assert result['_rc'] == 0
    twin.reset_kube_requests()
    result = run_module('egressip', args(dict(PAYMENTS, egress_ips=['10.20.0.200']),
                                         {'name': 'billing', 'egress_ips': ['10.20.0.220', '10.20.0.210'],
                                          'namespace_selector': {'matchLabels': {'team': 'billing'}}}))
    assert result['_rc'] == 0, result.get('msg')
    assert [request['name'] for request in twin.kube_requests()['requests'] if request['verb'] == 'patch'] == ['payments', 'billing']
    assert sorted(prepare.assignments(twin, 'billing')) == ['10.20.0.210', '10.20.0.220']


# --- ownership -----------------------------------------------------------------------------------


def test_objects_made_by_hand_are_not_touched_unless_adopted(twin, run_module):
    prepare.create_by_hand(twin, 'legacy', ['10.20.0.230'])
    twin.reset_kube_requests()
    entry = {'name': 'legacy', 'egress_ips': ['10.20.0.230', '10.20.0.231'], 'namespace_selector': {'matchLabels': {'team': 'legacy'}}}
    result = run_module('egressip', args(entry))
    assert ids(result) == ['egressip_not_owned'] and 'objects[0].name legacy' in result['msg']
    assert 'set adopt: true' in result['msg'] and kube_writes(twin) == 0
    result = run_module('egressip', args(entry, adopt=True), diff=True)
    assert result['_rc'] == 0 and result['egressips'][0]['action'] == 'adopt'
    assert result['diff']['before']['legacy']['metadata'] == {'labels': {}}
    assert prepare.egressip(twin, 'legacy')['metadata']['labels'] == {'egressip.ocp/managed-by': 'ocp.egressip'}


def test_ip_claimed_by_an_object_made_by_hand_is_refused(twin, run_module):
    prepare.create_by_hand(twin, 'manual', ['10.20.0.240'])
    twin.reset_kube_requests()
    result = run_module('egressip', args(dict(PAYMENTS, egress_ips=['10.20.0.200', '10.20.0.240'])))
    assert ids(result) == ['egressip_claimed'] and 'already in spec.egressIPs of EgressIP manual' in result['msg']
    assert kube_writes(twin) == 0


def test_exclusive_deletes_owned_objects_not_listed_only(twin, run_module):
    listed = dict(PAYMENTS, egress_ips=['10.20.0.200'])
    result = run_module('egressip', args(listed, exclusive=True, force=True), check=True, diff=True)
    assert sorted(result['diff']['before']) == ['billing', 'legacy'] and result['diff']['after'] == {'billing': None, 'legacy': None}
    assert prepare.egressip(twin, 'billing') is not None
    result = run_module('egressip', args(listed, exclusive=True, force=True))
    assert result['_rc'] == 0 and [(item['name'], item['action']) for item in result['egressips']] == [
        ('payments', 'none'), ('billing', 'delete'), ('legacy', 'delete')]
    assert prepare.egressip(twin, 'billing') is None and prepare.egressip(twin, 'legacy') is None
    assert prepare.egressip(twin, 'manual') is not None  # not owned: never deleted this way


def test_absent_deletes_owned_objects_and_refuses_others(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip', {'objects': [{'name': 'manual'}], 'state': 'absent'})
    assert ids(result) == ['egressip_not_owned'] and kube_writes(twin) == 0
    # payments' IP is assigned: without force the delete is refused before any write, naming what would stop carrying traffic
    result = run_module('egressip', {'objects': [{'name': 'payments'}, {'name': 'never-existed'}], 'state': 'absent'})
    assert result['_rc'] != 0 and ids(result) == ['egressip_delete_assigned'] and kube_writes(twin) == 0
    assert [item['egressip'] for item in result['stops_carrying']] == ['payments']
    absent = {'objects': [{'name': 'payments'}, {'name': 'never-existed'}], 'state': 'absent', 'force': True}
    result = run_module('egressip', absent, check=True)
    assert result['changed'] is True and kube_writes(twin) == 0 and prepare.egressip(twin, 'payments') is not None
    result = run_module('egressip', absent)
    assert result['changed'] is True and prepare.egressip(twin, 'payments') is None
    assert run_module('egressip', {'objects': [{'name': 'payments'}], 'state': 'absent'})['changed'] is False
    prepare.delete_by_hand(twin, 'manual')


# --- wait timeout, faults ------------------------------------------------------------------------


def test_wait_timeout_names_each_unassigned_ip_with_the_events(twin, run_module):
    four = {'name': 'wide', 'egress_ips': ['10.20.0.200', '10.20.0.201', '10.20.0.202', '10.20.0.203'],
            'namespace_selector': {'matchLabels': {'team': 'wide'}}}
    result = run_module('egressip', args(four, allow_insufficient_capacity=True, wait_timeout=4))
    assert result['_rc'] != 0 and result['changed'] is True
    assert ids(result) == ['egress_nodes_capacity_insufficient', 'egressip_unassigned']
    [gap] = result['unassigned']
    assert gap['problem'] == 'unassigned' and gap['egressip'] == 'wide'
    # The first pass places three IPs (UnassignedRequest); the next one places none (NoMatchingNodeFound).
    assert 'UnassignedRequest' in [event['reason'] for event in gap['events']]
    assert 'EgressIP wide: %s is not assigned to any node' % gap['ip'] in result['msg']
    assert 'UnassignedRequest (x1): Not all egress IPs for EgressIP: wide could be assigned, please tag more nodes' in result['msg']
    assert len(result['egressips'][0]['assignments']) == 3
    counts = twin.kube_requests()['counts']
    assert counts['list'] >= 3  # egressips, nodes, events (and the polls)
    assert run_module('egressip', {'objects': [{'name': 'wide'}], 'state': 'absent', 'force': True})['changed'] is True


def test_server_error_fails_with_the_api_message_and_a_rerun_converges(twin, run_module):
    twin.inject_kube_fault(verb='create', path='egressips', code=500, count=1)
    result = run_module('egressip', args(PAYMENTS))
    assert result['_rc'] != 0 and 'HTTP 500' in result['msg'] and 'egressips.k8s.ovn.org payments' in result['msg']
    assert 'run again to finish' in result['msg']
    twin.clear_kube_faults()
    result = run_module('egressip', args(PAYMENTS))
    assert result['_rc'] == 0 and result['changed'] is True
    assert sorted(prepare.assignments(twin, 'payments')) == ['10.20.0.200', '10.20.0.201']
    assert run_module('egressip', args(PAYMENTS))['changed'] is False
