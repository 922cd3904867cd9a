"""Which hand-made NMState policies only duplicate the collection's policy of a node (node_nic_address replace_hand_made)."""

import copy

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import HOSTNAME_LABEL, MANAGED_BY_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.plan import hand_made as hm

NODE = 'worker-0'
MAC = '00:50:56:aa:bb:01'
ADDRESSES = {4: '10.20.0.10/24'}
ROUTE = {'destination': '0.0.0.0/0', 'next-hop-address': '10.20.0.1', 'next-hop-interface': 'ens224', 'metric': 150}


def by_name(**extra):
    interface = {'name': 'ens224', 'type': 'ethernet', 'state': 'up',
                 'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': '10.20.0.10', 'prefix-length': 24}]}}
    interface.update(extra)
    return interface


def by_mac(**extra):
    return by_name(**dict({'name': 'egress', 'identifier': 'mac-address', 'mac-address': MAC.upper()}, **extra))


def hand_made(interfaces=None, routes=(ROUTE,), selector=None, name='worker-0-egress', **state):
    desired = dict({'interfaces': [by_name()] if interfaces is None else interfaces, 'routes': {'config': list(routes)}}, **state)
    return {'metadata': {'name': name},
            'spec': {'nodeSelector': {HOSTNAME_LABEL: NODE} if selector is None else selector, 'desiredState': desired}}


def blockers(policy, addresses=None):
    return hm.replace_blockers(policy, NODE, MAC, 'ens224', addresses or ADDRESSES)


# --- matching the NIC --------------------------------------------------------------------------------

@pytest.mark.parametrize('interface, expected', [
    (by_name(), True),
    (by_mac(), True),
    (by_mac(**{'mac-address': MAC.replace(':', '-')}), True),  # any case and separator
    (by_mac(**{'mac-address': '00:50:56:aa:bb:02'}), False),  # another NIC, even named ens224 below
    (by_mac(name='ens224', **{'mac-address': '00:50:56:aa:bb:02'}), False),
    (by_name(name='ens256'), False),
    ('ens224', False),
])
def test_names_nic_by_mac_or_kernel_name(interface, expected):
    assert hm.names_nic(interface, MAC, 'ens224') is expected


def test_policy_nic_interface_needs_the_selector_to_match_the_node():
    labels = {HOSTNAME_LABEL: NODE, 'node-role.kubernetes.io/worker': ''}
    assert hm.policy_nic_interface(hand_made(), labels, MAC, 'ens224')['name'] == 'ens224'
    assert hm.policy_nic_interface(hand_made(selector={}), labels, MAC, 'ens224') is not None  # no selector: every node
    assert hm.policy_nic_interface(hand_made(selector={HOSTNAME_LABEL: 'worker-1'}), labels, MAC, 'ens224') is None
    assert hm.policy_nic_interface(hand_made(), labels, MAC, None) is None  # kernel name unknown: only MAC matches
    assert hm.policy_nic_interface(hand_made(interfaces=[by_mac()]), labels, MAC, None)['name'] == 'egress'


# --- what may be deleted ---------------------------------------------------------------------------------

@pytest.mark.parametrize('policy', [
    hand_made(),
    hand_made(interfaces=[by_mac()], routes=[dict(ROUTE, **{'next-hop-interface': 'egress'})]),
    hand_made(routes=()),
    hand_made(interfaces=[by_name(ipv6={'enabled': False})]),
    hand_made(interfaces=[by_name(ipv4={'enabled': True, 'address': [{'ip': '10.20.0.10', 'prefix-length': 24}]})]),
    hand_made(routes=[ROUTE, {'destination': '10.50.0.0/16', 'next-hop-address': '10.20.0.1', 'next-hop-interface': 'ens224'}]),
])
def test_exact_duplicates_are_replaceable(policy):
    assert blockers(policy) == []


@pytest.mark.parametrize('policy, reason', [
    (dict(hand_made(), metadata={'name': 'x', 'labels': {MANAGED_BY_LABEL: 'someone'}}), 'carries the label egressip.ocp/managed-by=someone'),
    (hand_made(selector={'node-role.kubernetes.io/worker': ''}), 'selects more than this node'),
    (hand_made(selector={HOSTNAME_LABEL: NODE, 'extra': 'x'}), 'selects more than this node'),
    (hand_made(**{'dns-resolver': {'config': {'server': ['10.20.0.53']}}}), 'its desiredState also configures dns-resolver'),
    (hand_made(**{'route-rules': {'config': []}}), 'route-rules'),
    (hand_made(interfaces=[by_name(), by_name(name='ens256')]), 'it also configures the interface(s) ens256'),
    (hand_made(interfaces=[by_name(name='ens256')]), 'it does not configure the secondary NIC'),
    (hand_made(interfaces=[by_name(mtu=9000)]), 'it also sets mtu on the NIC'),
    (hand_made(interfaces=[by_name(state='down')]), 'it sets the NIC down'),
    (hand_made(interfaces=[by_name(type='bond')]), 'type bond'),
    (hand_made(interfaces=[by_name(ipv4={'enabled': True, 'dhcp': True})]), 'it turns ipv4 dhcp on'),
    (hand_made(interfaces=[by_name(ipv4={'enabled': True, 'address': [{'ip': '10.20.0.11', 'prefix-length': 24}]})]),
     'its ipv4 address(es) 10.20.0.11/24 differ from the collection\'s 10.20.0.10/24'),
    (hand_made(interfaces=[by_name(ipv4={'enabled': True, 'address': [{'ip': '10.20.0.10', 'prefix-length': 24},
                                                                      {'ip': '10.20.0.99', 'prefix-length': 24}]})]),
     'address(es) 10.20.0.10/24, 10.20.0.99/24 differ'),
    (hand_made(interfaces=[by_name(ipv4={'enabled': False})]), 'it does not give the NIC the ipv4 address 10.20.0.10/24'),
    (hand_made(interfaces=[by_name(ipv6={'enabled': True, 'autoconf': True})]), 'it enables ipv6, which the collection\'s policy leaves off'),
    (hand_made(interfaces=[by_name(ipv4={'enabled': True, 'address': [{'ip': '10.20.0.10', 'prefix-length': 24}],
                                         'auto-dns': False})]), 'it also sets ipv4.auto-dns'),
    (hand_made(routes=[dict(ROUTE, **{'next-hop-interface': 'br-ex'})]), 'route(s) not through the NIC: 0.0.0.0/0 via br-ex'),
    (dict(hand_made(), spec=dict(hand_made()['spec'], capture={'nic': 'interfaces.name=="ens224"'})), 'it also sets spec.capture'),
])
def test_anything_more_is_kept_with_the_reason(policy, reason):
    found = blockers(policy)
    assert any(reason in text for text in found), found


def test_dual_stack_addresses_compare_by_value():
    interface = by_name(ipv6={'enabled': True, 'dhcp': False, 'autoconf': False,
                              'address': [{'ip': 'fd00:20:0:0::10', 'prefix-length': 64}]})
    assert blockers(hand_made(interfaces=[interface]), {4: '10.20.0.10/24', 6: 'fd00:20::10/64'}) == []
    assert blockers(hand_made(), {4: '10.20.0.10/24', 6: 'fd00:20::10/64'}) == [
        'it does not give the NIC the ipv6 address fd00:20::10/64']


# --- the plan over a snapshot ---------------------------------------------------------------------------

def snapshot(policies):
    nodes = [{'metadata': {'name': name, 'labels': {HOSTNAME_LABEL: name, 'node-role.kubernetes.io/worker': ''}}}
             for name in ('worker-0', 'worker-1')]
    return {'nodes': nodes, 'nncps': policies}


ALLOCATIONS = [{'node': 'worker-0', 'mac': MAC, 'policy': 'egressip-worker-0', 'address': '10.20.0.10/24', 'ipv6_address': None,
                'interface': 'ens224'},
               {'node': 'worker-1', 'mac': '00:50:56:aa:bb:02', 'policy': 'egressip-worker-1', 'address': '10.20.0.11/24',
                'ipv6_address': None, 'interface': 'ens224'}]


def test_plan_deletes_duplicates_keeps_the_rest_and_ignores_what_does_not_touch_the_nic():
    ours = nn.desired_policy('worker-0', 'worker-0', MAC, ADDRESSES, {4: '10.20.0.1'}, 200, 'ens224', 'ens224')
    shared = hand_made(selector={'node-role.kubernetes.io/worker': ''}, name='all-workers-ens224', routes=())
    other_nic = hand_made(interfaces=[by_name(name='ens256')], name='worker-0-storage', routes=())
    plan = hm.plan_hand_made_replacement(ALLOCATIONS, snapshot([ours, shared, hand_made(), other_nic]))
    assert plan['delete'] == [{'name': 'worker-0-egress', 'node': 'worker-0'}]
    assert [(item['name'], item['node']) for item in plan['keep']] == [('all-workers-ens224', 'worker-0'), ('all-workers-ens224', 'worker-1')]
    assert 'selects more than this node' in plan['keep'][0]['reason']
    assert "10.20.0.10/24 differ from the collection's 10.20.0.11/24" in plan['keep'][1]['reason']
    assert plan['before'] == {'worker-0-egress': {'metadata': {}, 'spec': copy.deepcopy(hand_made()['spec'])}}


def test_plan_never_touches_policies_of_the_collection():
    ours = nn.desired_policy('worker-0', 'worker-0', MAC, ADDRESSES, {4: '10.20.0.1'}, 200, 'ens224', 'ens224')
    other = copy.deepcopy(ours)
    other['metadata']['name'] = 'egressip-renamed'
    assert hm.plan_hand_made_replacement(ALLOCATIONS[:1], snapshot([ours, other])) == {'delete': [], 'keep': [], 'before': {}}
