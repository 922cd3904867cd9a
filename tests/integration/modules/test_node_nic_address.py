"""node_nic_address against the twin: refusals, check mode, the path NIC -> policy -> host-cidrs,
rerun and request cost, a MAC the node does not have, allocation stability as nodes come and go,
release guarded by hosted egress IPs, injected faults, dual stack in check mode.

Tests run in file order and build on each other (one twin per module). Workers 0-2 get a
secondary NIC at the start; worker 3 and 4 get theirs later in the file.
"""

import pytest

from twin.fixture import kube_counts, kube_writes

import _prepare as prepare

TWIN_OPTIONS = {'workers': 5}
W = ['ocp1-worker-%d' % i for i in range(5)]
NETWORK = {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99'}
NNCP = prepare.NNCP


@pytest.fixture(scope='module')
def macs(twin):
    return dict((node, prepare.add_nic(twin, node)) for node in W[:3])


def nics(macs, *nodes):
    return [{'node': node, 'mac': macs[node]} for node in nodes]


NETWORK_KEYS = ('cidr', 'gateway', 'node_address_range', 'route_metric', 'ipv6')


def args(nodes, **extra):
    """The module's arguments: the secondary network as one `network` option (egressip_network whole)."""
    network = dict(NETWORK, **dict((key, value) for key, value in extra.items() if key in NETWORK_KEYS))
    base = dict(network=network, nodes=nodes, wait_timeout=60, wait_sleep=1)
    base.update((key, value) for key, value in extra.items() if key not in NETWORK_KEYS)
    return base


def ids(result):
    return [item['id'] for item in result['findings']]


def allocations(result):
    return dict((item['node'], item['address']) for item in result['allocations'])


def policy(twin, name):
    items = twin.custom_objects().list_cluster_custom_object(**NNCP)['items']
    return next((item for item in items if item['metadata']['name'] == name), None)


def refused(twin, run_module, arguments, finding_id, *texts):
    twin.reset_kube_requests()
    result = run_module('node_nic_address', arguments)
    assert result['_rc'] != 0 and result['failed'], result
    assert finding_id in ids(result), result['findings']
    for text in texts:
        assert text in result['msg'], result['msg']
    assert 'nothing was written' in result['msg'] and 'Fix: ' in result['msg']
    assert kube_writes(twin) == 0 and result['changed'] is False
    return result


# --- refusals before any write -----------------------------------------------------------------------

@pytest.mark.parametrize('network, finding_id, text', [
    ({'gateway': '10.30.0.1'}, 'node_gateway_outside_cidr', 'network.gateway 10.30.0.1 is not inside network.cidr 10.20.0.0/24'),
    ({'node_address_range': '10.20.1.10-10.20.1.20'}, 'node_address_range_outside_cidr',
     'network.node_address_range 10.20.1.10-10.20.1.20 is not inside network.cidr'),
    ({'node_address_range': '10.20.0.1-10.20.0.20'}, 'node_address_range_reserved', '10.20.0.1 (the gateway)'),
    ({'node_address_range': '10.20.0.200-10.20.0.255'}, 'node_address_range_reserved', '10.20.0.255 (the broadcast address)'),
    ({'node_address_range': '10.20.0.10-10.20.0.11'}, 'node_address_range_too_small', 'has 2 free address(es); 3 of the 3 node(s) need a new one'),
    ({'cidr': '192.168.10.0/24', 'gateway': '192.168.10.1', 'node_address_range': '192.168.10.100-192.168.10.120'},
     'node_network_overlaps_host_subnet', 'cidr 192.168.10.0/24 overlaps the primary machine network 192.168.10.0/24'),
    ({'cidr': '10.20.0.5/24'}, 'node_network_input_invalid', "cidr '10.20.0.5/24' has host bits set"),
    ({'route_metric': 48}, 'node_route_metric_too_low', 'route_metric 48 is not above the metric 48 of the primary IPv4 default route'),
])
def test_bad_network_is_refused_naming_field_value_and_fix(twin, run_module, macs, network, finding_id, text):
    refused(twin, run_module, args(nics(macs, *W[:3]), **network), finding_id, text)


@pytest.mark.parametrize('entries, text', [
    ([{'node': W[0], 'mac': 'not-a-mac'}], "nodes[0].mac 'not-a-mac' is not a MAC address"),
    ([{'node': W[0], 'mac': '00:50:56:00:00:01'}, {'node': W[0], 'mac': '00:50:56:00:00:02'}], "nodes[1].node 'ocp1-worker-0' repeats nodes[0]"),
    ([{'node': W[0], 'mac': '00:50:56:00:00:01'}, {'node': W[1], 'mac': '00:50:56:00:00:01'}], 'is also the MAC of nodes[0]'),
    ([{'node': W[0]}], "nodes[0].mac None is empty"),
    ([{'node': 'ocp1-worker-9', 'mac': '00:50:56:00:00:09'}], "nodes[0].node 'ocp1-worker-9' is not a Node of the cluster"),
])
def test_bad_node_list_is_refused(twin, run_module, entries, text):
    refused(twin, run_module, args(entries), 'node_network_input_invalid', text)


# --- create, rerun, check mode, diff ------------------------------------------------------------------

def test_check_mode_writes_nothing_and_shows_the_diff(twin, run_module, macs):
    twin.reset_kube_requests()
    result = run_module('node_nic_address', args(nics(macs, *W[:3])), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True and kube_writes(twin) == 0
    assert sorted(result['created']) == ['egressip-' + node for node in W[:3]]
    dry_runs = [r for r in twin.kube_requests()['requests'] if r['verb'] == 'create']
    assert len(dry_runs) == 3 and all(r['dry_run'] for r in dry_runs)  # the server validated each policy
    after = result['diff']['after']['egressip-ocp1-worker-0']
    interface = after['spec']['desiredState']['interfaces'][0]
    assert interface['identifier'] == 'mac-address' and interface['mac-address'] == macs[W[0]].upper()
    assert interface['ipv4']['address'] == [{'ip': '10.20.0.10', 'prefix-length': 24}]
    assert after['spec']['desiredState']['routes']['config'] == [
        {'destination': '0.0.0.0/0', 'next-hop-address': '10.20.0.1', 'next-hop-interface': 'ens224', 'metric': 200, 'table-id': 254}]
    assert result['diff']['before'] == {}
    assert policy(twin, 'egressip-ocp1-worker-0') is None


def test_nic_to_policy_to_host_cidrs(twin, run_module, macs):
    result = run_module('node_nic_address', args(nics(macs, *W[:3])))
    assert result['_rc'] == 0, result
    assert result['changed'] is True
    assert allocations(result) == {W[0]: '10.20.0.10/24', W[1]: '10.20.0.11/24', W[2]: '10.20.0.12/24'}
    assert all(item['status'] == 'available' and item['source'] == 'allocated' for item in result['allocations'])
    assert all(item['interface'] == 'ens224' for item in result['allocations'])
    created = policy(twin, 'egressip-ocp1-worker-1')
    assert created['metadata']['labels'] == {'egressip.ocp/managed-by': 'ocp.egressip'}
    assert created['metadata']['annotations']['egressip.ocp/addresses'] == '10.20.0.11/24'
    assert created['spec']['nodeSelector'] == {'kubernetes.io/hostname': W[1]}
    twin.wait_for(lambda: all(allocations(result)[node] in prepare.host_cidrs(twin, node) for node in W[:3]),
                  timeout=30, what='host-cidrs to show the secondary addresses')


def test_second_run_changes_nothing_at_constant_cost(twin, run_module, macs):
    twin.reset_kube_requests()
    result = run_module('node_nic_address', args(nics(macs, *W[:3])), diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is False and result['diff'] == {'before': {}, 'after': {}}
    assert all(item['source'] == 'existing' and item['status'] == 'available' for item in result['allocations'])
    assert kube_writes(twin) == 0
    # one list per kind: nodes, policies, enactments, node network states, egress IPs; nothing per node
    assert kube_counts(twin) == {'get': 0, 'list': 5, 'create': 0, 'update': 0, 'patch': 0, 'delete': 0}  # and the cluster lock's Lease


def test_list_order_and_mac_case_are_not_a_change(twin, run_module, macs):
    entries = [{'node': node, 'mac': macs[node].upper().replace(':', '-'), 'uuid': 'ignored'} for node in reversed(W[:3])]
    result = run_module('node_nic_address', args(entries))
    assert result['_rc'] == 0 and result['changed'] is False, result


# --- refusals that need the cluster state --------------------------------------------------------------

def test_address_in_use_is_refused(twin, run_module, macs):
    prepare.create_by_hand(twin, 'claims', ['10.20.0.57'])
    try:
        refused(twin, run_module, args([{'node': W[3], 'mac': '00:50:56:00:00:33', 'address': '10.20.0.57'}]),
                'node_address_in_use', 'address 10.20.0.57 of node ocp1-worker-3 in 10.20.0.0/24 is already used by EgressIP claims')
        refused(twin, run_module, args([{'node': W[3], 'mac': '00:50:56:00:00:33', 'address': '10.20.0.11'}]),
                'node_address_in_use', 'is already used by the policy of node ocp1-worker-1')
    finally:
        prepare.delete_by_hand(twin, 'claims')


def test_existing_allocation_never_moves(twin, run_module, macs):
    refused(twin, run_module, args([{'node': W[0], 'mac': macs[W[0]], 'address': '10.20.0.50'}]),
            'node_address_allocation_fixed', 'node ocp1-worker-0 already holds 10.20.0.10 from its policy; address 10.20.0.50 was requested')


def test_policy_not_created_by_the_collection_is_not_touched(twin, run_module, macs):
    body = {'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy', 'metadata': {'name': 'egressip-ocp1-worker-3'},
            'spec': {'nodeSelector': {'kubernetes.io/hostname': 'nowhere'}, 'desiredState': {'interfaces': []}}}
    twin.custom_objects().create_cluster_custom_object(body=body, **NNCP)
    try:
        refused(twin, run_module, args([{'node': W[3], 'mac': '00:50:56:00:00:33'}]), 'node_object_not_owned',
                'NodeNetworkConfigurationPolicy egressip-ocp1-worker-3 exists without the label egressip.ocp/managed-by=ocp.egressip')
    finally:
        twin.custom_objects().delete_cluster_custom_object(name='egressip-ocp1-worker-3', **NNCP)


# --- a MAC the node does not have ------------------------------------------------------------------------

def test_a_mac_no_nic_of_the_node_has_is_refused_naming_the_node_and_its_macs(twin, run_module):
    """The route needs the NIC's kernel name (nmstate < 2.2.43): a MAC NodeNetworkState never lists stops before any write."""
    twin.reset_kube_requests()
    result = run_module('node_nic_address', args([{'node': W[3], 'mac': '00:50:56:de:ad:01'}], state_wait_timeout=5))
    assert result['_rc'] != 0 and result['changed'] is False
    assert ids(result) == ['node_nic_not_in_state']
    assert 'node ocp1-worker-3 lists no interface with MAC 00:50:56:de:ad:01 after waiting 5 s (it lists ens192 ' in result['msg']
    assert 'nothing was written' in result['msg']
    assert kube_writes(twin) == 0
    # it waited, reading NodeNetworkStates only
    reads = [r for r in twin.kube_requests()['requests'] if r['resource'] == 'nodenetworkstates.nmstate.io']
    assert len(reads) >= 3


def test_without_wait_a_nic_not_listed_yet_is_refused_at_once(twin, run_module):
    result = run_module('node_nic_address', args([{'node': W[3], 'mac': '00:50:56:de:ad:01'}], wait=False))
    assert result['_rc'] != 0 and ids(result) == ['node_nic_not_in_state'] and 'after waiting' not in result['msg']


# --- stability when nodes come and go ---------------------------------------------------------------------

def test_nodes_left_out_keep_their_reservation(twin, run_module, macs):
    macs[W[3]] = prepare.add_nic(twin, W[3])
    result = run_module('node_nic_address', args(nics(macs, W[0], W[3])))
    assert result['_rc'] == 0, result
    # worker-1 and worker-2 were left out, not released: their addresses stay reserved
    assert allocations(result) == {W[0]: '10.20.0.10/24', W[3]: '10.20.0.13/24'}
    assert policy(twin, 'egressip-ocp1-worker-1') is not None and policy(twin, 'egressip-ocp1-worker-2') is not None


def test_release_removes_the_address_then_the_policy(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('node_nic_address', {'nodes': [{'node': W[1]}], 'state': 'absent'}, check=True)
    assert result['_rc'] == 0 and result['changed'] is True and kube_writes(twin) == 0
    result = run_module('node_nic_address', {'nodes': [{'node': W[1]}], 'state': 'absent', 'wait_sleep': 1})
    assert result['_rc'] == 0, result
    assert result['released'] == [{'node': W[1], 'policy': 'egressip-ocp1-worker-1', 'addresses': ['10.20.0.11/24']}]
    assert policy(twin, 'egressip-ocp1-worker-1') is None
    # the address was removed from the node before the policy went (nmstate never rolls back on delete)
    twin.wait_for(lambda: '10.20.0.11/24' not in prepare.host_cidrs(twin, W[1]), timeout=30, what='10.20.0.11 to leave worker-1')
    again = run_module('node_nic_address', {'nodes': [{'node': W[1]}], 'state': 'absent'})
    assert again['_rc'] == 0 and again['changed'] is False


def test_new_node_takes_the_lowest_free_address_and_others_stay(twin, run_module, macs):
    macs[W[4]] = prepare.add_nic(twin, W[4])
    result = run_module('node_nic_address', args(nics(macs, W[0], W[2], W[3], W[4])))
    assert result['_rc'] == 0, result
    assert allocations(result) == {W[0]: '10.20.0.10/24', W[2]: '10.20.0.12/24', W[3]: '10.20.0.13/24', W[4]: '10.20.0.11/24'}
    sources = dict((item['node'], item['source']) for item in result['allocations'])
    assert sources == {W[0]: 'existing', W[2]: 'existing', W[3]: 'existing', W[4]: 'allocated'}
    assert result['created'] == ['egressip-ocp1-worker-4'] and result['updated'] == []


# --- release guarded by hosted egress IPs -------------------------------------------------------------------

def test_release_refused_while_the_node_hosts_egress_ips(twin, run_module):
    prepare.label(twin, W[2])
    prepare.create_by_hand(twin, 'payments', ['10.20.0.200'])
    try:
        twin.wait_for(lambda: prepare.assignments(twin, 'payments').get('10.20.0.200') == W[2], timeout=30,
                      what='10.20.0.200 to be assigned to worker-2')
        refused(twin, run_module, {'nodes': [{'node': W[2]}], 'state': 'absent'}, 'node_hosts_egress_ips',
                'releasing the secondary address of node ocp1-worker-2 would strand egress IP(s) 10.20.0.200 (EgressIP payments)')
        forced = run_module('node_nic_address', {'nodes': [{'node': W[2]}], 'state': 'absent', 'force': True}, check=True)
        assert forced['_rc'] == 0 and forced['deleted'] == ['egressip-ocp1-worker-2']
    finally:
        prepare.delete_by_hand(twin, 'payments')
        prepare.label(twin, W[2], present=False)


# --- faults ---------------------------------------------------------------------------------------------------

def test_injected_write_failure_then_rerun_converges(twin, run_module, macs):
    changed = args(nics(macs, W[0], W[2], W[3], W[4]), route_metric=300)
    twin.inject_kube_fault(verb='patch', path='nodenetworkconfigurationpolicies/egressip-ocp1-worker-2', code=500, count=1)
    try:
        result = run_module('node_nic_address', changed)
    finally:
        twin.clear_kube_faults()
    assert result['_rc'] != 0
    assert 'patch nodenetworkconfigurationpolicies.nmstate.io egressip-ocp1-worker-2' in result['msg'] and 'HTTP 500' in result['msg']
    assert '3 write(s) succeeded before; run again to finish' in result['msg']
    result = run_module('node_nic_address', changed)
    assert result['_rc'] == 0 and result['updated'] == ['egressip-ocp1-worker-2'], result
    result = run_module('node_nic_address', changed)
    assert result['_rc'] == 0 and result['changed'] is False


# --- dual stack (the twin models IPv4 host addresses only: check mode, the server validates) -------------------

def test_dual_stack_in_check_mode(twin, run_module, macs):
    ipv6 = {'cidr': 'fd00:20::/64', 'gateway': 'fd00:20::1', 'node_address_range': 'fd00:20::10-fd00:20::ff'}
    twin.reset_kube_requests()
    result = run_module('node_nic_address', args(nics(macs, W[0]), route_metric=300, ipv6=dict(ipv6, route_metric=310)),
                        check=True, diff=True)
    assert result['_rc'] == 0, result
    assert kube_writes(twin) == 0 and result['updated'] == ['egressip-ocp1-worker-0']
    assert result['allocations'][0]['address'] == '10.20.0.10/24' and result['allocations'][0]['ipv6_address'] == 'fd00:20::10/64'
    after = result['diff']['after']['egressip-ocp1-worker-0']['spec']['desiredState']
    assert after['interfaces'][0]['ipv6'] == {'enabled': True, 'dhcp': False, 'autoconf': False,
                                              'address': [{'ip': 'fd00:20::10', 'prefix-length': 64}]}
    assert [(route['destination'], route['metric']) for route in after['routes']['config']] == [('0.0.0.0/0', 300), ('::/0', 310)]
    refused(twin, run_module, args(nics(macs, W[0]), ipv6=dict(ipv6, cidr='10.99.0.0/24')), 'node_network_input_invalid')


def test_the_deprecated_flat_options_still_work_and_cannot_be_mixed_with_network(twin, run_module, macs):
    flat = dict(NETWORK, nodes=nics(macs, W[0]), route_metric=300, wait_timeout=60, wait_sleep=1)
    result = run_module('node_nic_address', flat, check=True)
    assert result['_rc'] == 0 and result['allocations'][0]['address'] == '10.20.0.10/24', result
    assert any('deprecated' in str(item) and 'network' in str(item) for item in result.get('deprecations') or []), result
    twin.reset_kube_requests()
    mixed = run_module('node_nic_address', dict(flat, network=NETWORK), check=True)
    assert mixed['_rc'] != 0 and 'mutually exclusive' in mixed['msg'] and 'network' in mixed['msg'], mixed
    assert kube_counts(twin)['list'] == 0 and kube_writes(twin) == 0


# --- replace_hand_made: hand-made policies that only duplicate the collection's ------------------------------

NNS = dict(group='nmstate.io', version='v1beta1', plural='nodenetworkstates')
NNCE = dict(group='nmstate.io', version='v1beta1', plural='nodenetworkconfigurationenactments')
ALL = [W[0], W[1], W[2], W[3], W[4]]


def hand_made_policy(twin, name, node, interface, address, routes=(), **extra_state):
    """A policy as an administrator writes it with `oc apply` (no label of the collection)."""
    interface = dict(interface, type='ethernet', state='up',
                     ipv4={'enabled': True, 'dhcp': False, 'address': [{'ip': address, 'prefix-length': 24}]})
    state = dict({'interfaces': [interface], 'routes': {'config': list(routes)}}, **extra_state)
    body = {'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy', 'metadata': {'name': name},
            'spec': {'nodeSelector': {'kubernetes.io/hostname': node}, 'desiredState': state}}
    twin.custom_objects().create_cluster_custom_object(body=body, **NNCP)


def enactment_available(twin, node, name):
    items = twin.custom_objects().list_cluster_custom_object(**NNCE)['items']
    enactment = next((item for item in items if item['metadata']['name'] == '%s.%s' % (node, name)), None)
    return enactment is not None and any(c['type'] == 'Available' and c['status'] == 'True'
                                         for c in (enactment.get('status') or {}).get('conditions') or [])


def nic_state(twin, node, mac):
    """What the node's NodeNetworkState reports for the NIC: kernel name, state and addresses."""
    state = twin.custom_objects().get_cluster_custom_object(name=node, **NNS)
    for interface in state['status']['currentState']['interfaces']:
        if (interface.get('mac-address') or '').lower() == mac.lower():
            return (interface['name'], interface.get('state'), (interface.get('ipv4') or {}).get('address'))
    return None


@pytest.fixture(scope='module')
def hand_made(twin, macs):
    """worker-0: an exact duplicate by kernel name (with its route); worker-1 (released above): the only source of its address,
    by MAC; worker-2: the same address plus a DNS resolver, which must stay."""
    route = {'destination': '0.0.0.0/0', 'next-hop-address': '10.20.0.1', 'next-hop-interface': 'ens224', 'metric': 300}
    hand_made_policy(twin, 'w0-by-hand', W[0], {'name': 'ens224'}, '10.20.0.10', routes=[route])
    hand_made_policy(twin, 'w1-by-hand', W[1], {'name': 'egress', 'identifier': 'mac-address', 'mac-address': macs[W[1]].upper()},
                     '10.20.0.14')
    hand_made_policy(twin, 'w2-and-more', W[2], {'name': 'ens224'}, '10.20.0.12',
                     **{'dns-resolver': {'config': {'server': ['10.20.0.53']}}})
    for node, name in ((W[0], 'w0-by-hand'), (W[1], 'w1-by-hand'), (W[2], 'w2-and-more')):
        twin.wait_for(lambda node=node, name=name: enactment_available(twin, node, name), timeout=30, what='%s Available' % name)
    twin.wait_for(lambda: '10.20.0.14/24' in prepare.host_cidrs(twin, W[1]), timeout=30, what='10.20.0.14 on worker-1')
    yield ['w0-by-hand', 'w1-by-hand', 'w2-and-more']
    for name in ('w0-by-hand', 'w1-by-hand', 'w2-and-more'):
        if policy(twin, name) is not None:
            twin.custom_objects().delete_cluster_custom_object(name=name, **NNCP)


def warnings(result):
    """The warning texts (ansible-core 2.19 returns each as a WarningSummary with the text in event.msg)."""
    return [item if isinstance(item, str) else (item.get('event') or {}).get('msg', '') for item in result.get('warnings') or []]


REPLACED = [{'name': 'w0-by-hand', 'node': W[0]}, {'name': 'w1-by-hand', 'node': W[1]}]


def replace_args(macs, **extra):
    return args(nics(macs, *ALL), route_metric=300, replace_hand_made=True, **extra)


def test_replace_hand_made_needs_wait(twin, run_module, macs, hand_made):
    refused(twin, run_module, replace_args(macs, wait=False), 'node_network_input_invalid',
            'replace_hand_made: true needs wait: true', 'Fix: set wait: true')


def test_replace_hand_made_in_check_mode_writes_nothing(twin, run_module, macs, hand_made):
    twin.reset_kube_requests()
    result = run_module('node_nic_address', replace_args(macs), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True and kube_writes(twin) == 0
    assert result['replaced_policies'] == REPLACED and result['deleted'] == ['w0-by-hand', 'w1-by-hand']
    assert [(item['name'], item['node']) for item in result['kept_hand_made_policies']] == [('w2-and-more', W[2])]
    assert 'dns-resolver' in result['kept_hand_made_policies'][0]['reason']
    assert any('w2-and-more' in text and 'is kept' in text for text in warnings(result)), result.get('warnings')
    deletes = [r for r in twin.kube_requests()['requests'] if r['verb'] == 'delete']
    assert len(deletes) == 2 and all(r['dry_run'] for r in deletes)
    assert result['created'] == ['egressip-ocp1-worker-1']
    before, after = result['diff']['before'], result['diff']['after']
    assert sorted(before) == ['w0-by-hand', 'w1-by-hand'] and 'w0-by-hand' not in after and 'w1-by-hand' not in after
    assert before['w0-by-hand']['spec']['desiredState']['interfaces'][0]['name'] == 'ens224'
    assert list(after) == ['egressip-ocp1-worker-1']
    assert all(policy(twin, name) is not None for name in hand_made)


def test_replace_hand_made_deletes_the_duplicates_once_ours_is_available(twin, run_module, macs, hand_made):
    cidrs = dict((node, sorted(prepare.host_cidrs(twin, node))) for node in ALL)
    nics_before = dict((node, nic_state(twin, node, macs[node])) for node in ALL)
    result = run_module('node_nic_address', replace_args(macs))
    assert result['_rc'] == 0, result
    # worker-1 keeps the address the hand-made policy gave it; its policy was created and waited for, then the duplicate deleted
    assert allocations(result)[W[1]] == '10.20.0.14/24'
    assert [item['source'] for item in result['allocations'] if item['node'] == W[1]] == ['current']
    assert all(item['status'] == 'available' for item in result['allocations'])
    assert result['created'] == ['egressip-ocp1-worker-1'] and result['replaced_policies'] == REPLACED
    assert policy(twin, 'w0-by-hand') is None and policy(twin, 'w1-by-hand') is None
    assert policy(twin, 'w2-and-more') is not None
    assert [item['name'] for item in result['kept_hand_made_policies']] == ['w2-and-more']
    # the deletion reached the nodes (their enactments are gone) and changed nothing there: nmstate never rolls back
    twin.wait_for(lambda: not enactment_available(twin, W[0], 'w0-by-hand') and not enactment_available(twin, W[1], 'w1-by-hand'),
                  timeout=30, what='the enactments of the deleted policies to go')
    assert dict((node, sorted(prepare.host_cidrs(twin, node))) for node in ALL) == cidrs
    assert dict((node, nic_state(twin, node, macs[node])) for node in ALL) == nics_before
    assert nics_before[W[1]][2] == [{'ip': '10.20.0.14', 'prefix-length': 24}]


def test_replace_hand_made_rerun_changes_nothing(twin, run_module, macs, hand_made):
    twin.reset_kube_requests()
    result = run_module('node_nic_address', replace_args(macs), diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is False and kube_writes(twin) == 0
    assert result['replaced_policies'] == [] and result['deleted'] == [] and result['diff'] == {'before': {}, 'after': {}}
    assert [item['name'] for item in result['kept_hand_made_policies']] == ['w2-and-more']
