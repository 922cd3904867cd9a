"""Address plan (the network's own rules: test_network.py): overlaps, stable allocations, lowest free, adoption, IPv6."""

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.plan import address_plan as plan
from ansible_collections.ocp.egressip.plugins.module_utils.plan.address_plan import AddressUse
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import parse_family


def network(cidr='10.20.0.0/24', gateway='10.20.0.1', node_range='10.20.0.10-10.20.0.99', prefix=''):
    result, findings = parse_family({'cidr': cidr, 'gateway': gateway, 'node_address_range': node_range}, prefix)
    assert findings == [], findings
    return result


def ids(findings):
    return [item['id'] for item in findings]


def by_node(allocations):
    return dict((item['node'], (item['address'], item['source'])) for item in allocations)


# --- overlap with host subnets ----------------------------------------------------------------

def test_overlap_with_primary_network():
    findings = plan.check_host_subnets(network('192.168.10.0/24', '192.168.10.1', '192.168.10.100-192.168.10.120'),
                                       [('192.168.10.0/24', 'node worker-0 primary address')], [])
    assert ids(findings) == ['node_network_overlaps_host_subnet']
    assert 'the primary machine network 192.168.10.0/24 (node worker-0 primary address)' in findings[0]['message']


def test_overlap_with_other_host_subnet_but_not_itself_nor_single_addresses():
    net = network()
    host = [('10.20.0.11/24', 'node worker-0'), ('10.20.0.200/32', 'node worker-0'),
            ('10.0.0.0/8', 'node worker-1'), ('10.0.0.5/8', 'node worker-2'), ('192.168.10.11/24', 'node worker-0')]
    findings = plan.check_host_subnets(net, [('192.168.10.11/24', 'node worker-0')], host)
    assert ids(findings) == ['node_network_overlaps_host_subnet']
    assert 'host subnet 10.0.0.0/8 (node worker-1)' in findings[0]['message']


# --- allocation ---------------------------------------------------------------------------------

def test_new_nodes_take_lowest_free_in_name_order():
    allocations, findings = plan.plan_addresses(network(), ['w-2', 'w-0', 'w-1'])
    assert findings == []
    assert [item['node'] for item in allocations] == ['w-2', 'w-0', 'w-1']
    assert by_node(allocations) == {'w-0': ('10.20.0.10/24', 'allocated'), 'w-1': ('10.20.0.11/24', 'allocated'),
                                    'w-2': ('10.20.0.12/24', 'allocated')}


def test_existing_allocations_never_move_and_removed_nodes_keep_theirs():
    existing = {'w-0': '10.20.0.10', 'w-1': '10.20.0.11', 'w-2': '10.20.0.12'}
    # w-1 left the list (scaled down, not released): 10.20.0.11 stays reserved; w-3 is new
    allocations, findings = plan.plan_addresses(network(), ['w-0', 'w-2', 'w-3'], existing=existing)
    assert findings == []
    assert by_node(allocations) == {'w-0': ('10.20.0.10/24', 'existing'), 'w-2': ('10.20.0.12/24', 'existing'),
                                    'w-3': ('10.20.0.13/24', 'allocated')}


def test_released_address_is_reused_lowest_first():
    existing = {'w-0': '10.20.0.10', 'w-2': '10.20.0.12'}   # w-1 released with state: absent
    allocations, _findings = plan.plan_addresses(network(), ['w-0', 'w-2', 'w-3', 'w-4'], existing=existing)
    assert by_node(allocations)['w-3'] == ('10.20.0.11/24', 'allocated')
    assert by_node(allocations)['w-4'] == ('10.20.0.13/24', 'allocated')


def test_allocation_is_stable_across_reordering_and_additions():
    first, _findings = plan.plan_addresses(network(), ['a', 'b', 'c'])
    existing = dict((item['node'], item['ip']) for item in first)
    second, _findings = plan.plan_addresses(network(), ['c', 'new', 'a', 'b'], existing=existing)
    for item in first:
        assert by_node(second)[item['node']][0] == item['address']


def test_addresses_in_use_are_skipped():
    uses = [AddressUse('10.20.0.10/24', 'node', 'manual-node'), AddressUse('10.20.0.11', 'egressip', 'payments')]
    allocations, findings = plan.plan_addresses(network(), ['w-0'], in_use=uses)
    assert findings == []
    assert by_node(allocations)['w-0'] == ('10.20.0.12/24', 'allocated')


def test_existing_allocation_held_by_the_node_itself_is_fine():
    uses = [AddressUse('10.20.0.10/24', 'node', 'w-0')]
    allocations, findings = plan.plan_addresses(network(), ['w-0'], existing={'w-0': '10.20.0.10'}, in_use=uses)
    assert findings == []
    assert by_node(allocations)['w-0'] == ('10.20.0.10/24', 'existing')


@pytest.mark.parametrize('node, known, text, remedy', [
    ('w-0', dict(existing={'w-0': '10.20.0.10'}, in_use=[AddressUse('10.20.0.10/24', 'node', 'w-9')]),
     'address 10.20.0.10 of node w-0 in 10.20.0.0/24 is already used by node w-9', 'never moves'),
    ('w-0', dict(requested={'w-0': '10.20.0.57'}, in_use=[AddressUse('10.20.0.57', 'egressip', 'payments')]),
     'already used by EgressIP payments', 'give node w-0 another address'),
    ('w-1', dict(existing={'w-0': '10.20.0.10'}, requested={'w-1': '10.20.0.10'}),
     'the policy of node w-0', 'give node w-1 another address'),
], ids=['existing_allocation_used_by_another_node', 'requested_address_claimed_by_egressip', 'requested_address_of_another_nodes_allocation'])
def test_address_used_by_someone_else_is_refused(node, known, text, remedy):
    _allocations, findings = plan.plan_addresses(network(), [node], **known)
    assert ids(findings) == ['node_address_in_use']
    assert text in findings[0]['message']
    assert remedy in findings[0]['remedy']


@pytest.mark.parametrize('address, finding_id, text', [
    ('10.20.0.1', 'node_address_in_use', 'is the gateway of 10.20.0.0/24'),
    ('10.30.0.5', 'node_network_input_invalid', 'is not inside cidr 10.20.0.0/24'),
    ('nope', 'node_network_input_invalid', 'is not an IP address'),
])
def test_requested_address_refusals(address, finding_id, text):
    _allocations, findings = plan.plan_addresses(network(), ['w-0'], requested={'w-0': address})
    assert ids(findings) == [finding_id]
    assert text in findings[0]['message']


def test_requested_address_outside_range_but_inside_cidr_is_honoured():
    allocations, findings = plan.plan_addresses(network(), ['w-0', 'w-1'], requested={'w-0': '10.20.0.150'})
    assert findings == []
    assert by_node(allocations) == {'w-0': ('10.20.0.150/24', 'requested'), 'w-1': ('10.20.0.10/24', 'allocated')}


def test_existing_allocation_never_moves_to_a_requested_one():
    _allocations, findings = plan.plan_addresses(network(), ['w-0'], existing={'w-0': '10.20.0.10'},
                                                 requested={'w-0': '10.20.0.20'})
    assert ids(findings) == ['node_address_allocation_fixed']
    assert 'node w-0 already holds 10.20.0.10 from its policy; address 10.20.0.20 was requested' in findings[0]['message']


def test_existing_allocation_outside_a_changed_cidr_is_refused():
    _allocations, findings = plan.plan_addresses(network('10.30.0.0/24', '10.30.0.1', '10.30.0.10-10.30.0.20'),
                                                 ['w-0'], existing={'w-0': '10.20.0.10'})
    assert ids(findings) == ['node_address_allocation_fixed']
    assert 'outside cidr 10.30.0.0/24' in findings[0]['message']


def test_range_too_small():
    net = network(node_range='10.20.0.10-10.20.0.11')
    allocations, findings = plan.plan_addresses(net, ['a', 'b', 'c'], in_use=[AddressUse('10.20.0.11', 'node', 'x')])
    assert ids(findings) == ['node_address_range_too_small']
    assert 'node_address_range 10.20.0.10-10.20.0.11 has 1 free address(es); 3 of the 3 node(s) need a new one' in findings[0]['message']
    assert len(allocations) == 1


def test_current_address_is_adopted_without_disruption():
    uses = [AddressUse('10.20.0.57/24', 'node', 'w-1')]
    allocations, findings = plan.plan_addresses(network(), ['w-0', 'w-1'], current={'w-1': ['10.20.0.57/24']}, in_use=uses)
    assert findings == []
    assert by_node(allocations) == {'w-0': ('10.20.0.10/24', 'allocated'), 'w-1': ('10.20.0.57/24', 'current')}


def test_current_address_outside_range_or_shared_is_not_adopted():
    uses = [AddressUse('10.20.0.57', 'node', 'w-1'), AddressUse('10.20.0.57', 'node', 'w-2'),
            AddressUse('10.20.0.150', 'node', 'w-3')]
    allocations, _findings = plan.plan_addresses(network(), ['w-1', 'w-2', 'w-3'], in_use=uses,
                                                 current={'w-1': ['10.20.0.57/24'], 'w-2': ['10.20.0.57/24'], 'w-3': ['10.20.0.150/24']})
    assert set(source for _address, source in by_node(allocations).values()) == {'allocated'}


def test_current_address_requested_for_another_node_is_not_adopted():
    allocations, _findings = plan.plan_addresses(network(), ['w-0', 'w-1'], requested={'w-0': '10.20.0.57'},
                                                 current={'w-1': ['10.20.0.57/24']}, in_use=[AddressUse('10.20.0.57', 'node', 'w-1')])
    assert by_node(allocations)['w-1'] == ('10.20.0.10/24', 'allocated')


# --- IPv6 and dual stack ---------------------------------------------------------------------------

def test_ipv6_network_and_allocation():
    net = network('fd00:20::/64', 'fd00:20::1', 'fd00:20::10-fd00:20::ff')
    assert net.version == 6
    allocations, findings = plan.plan_addresses(net, ['w-0', 'w-1'], existing={'w-1': 'fd00:20:0:0::10'},
                                                in_use=[AddressUse('fd00:20::11/64', 'node', 'x')])
    assert findings == []
    assert by_node(allocations) == {'w-0': ('fd00:20::12/64', 'allocated'), 'w-1': ('fd00:20::10/64', 'existing')}


def test_dual_stack_is_two_independent_plans():
    v4, _findings = plan.plan_addresses(network(), ['w-0', 'w-1'])
    v6, _findings = plan.plan_addresses(network('fd00:20::/64', 'fd00:20::1', 'fd00:20::10-fd00:20::ff', 'ipv6.'), ['w-0', 'w-1'])
    assert [item['address'] for item in v4 + v6] == ['10.20.0.10/24', '10.20.0.11/24', 'fd00:20::10/64', 'fd00:20::11/64']


def test_addresses_by_family():
    assert plan.addresses_by_family(['10.20.0.10/24', 'fd00::10/64']) == {4: ['10.20.0.10/24'], 6: ['fd00::10/64']}
