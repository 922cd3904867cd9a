"""Migrate discovery of hand-made IPv6 setups (issue 18, pure): dual stack (one subnet per family on the same NIC),
IPv6 only, two IPv6 subnets competing, /128 and link-local addresses ignored, the ipv6 hints, hand-made policies with
autoconf or DHCPv6, and IPv6 forwarding from a hand-made Tuned. The IPv4-only discovery is test_migrate_plan.py's."""

import json

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate as _migrate
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_facts as _migrate_facts
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_forwarding as _migrate_forwarding
from ansible_collections.ocp.egressip.plugins.module_utils.reports import migrate as _migrate_report

import _hand_made_snapshots as hm  # pylint: disable=wrong-import-order

IPV6 = {'ocp1-worker-0': 'fd00:30::11', 'ocp1-worker-1': 'fd00:30::12', 'ocp1-worker-2': 'fd00:30::13'}
GATEWAY6 = 'fd00:30::1'
METRIC6 = 160
FORWARDING_BOTH = hm.FORWARDING_ONLY + 'net.ipv6.conf.ens224.forwarding=1\n'
HOST_CIDRS = 'k8s.ovn.org/host-cidrs'


def ids(result):
    return [item['id'] for item in result['findings']]


def by_id(result, finding_id):
    return [item for item in result['findings'] if item['id'] == finding_id]


def _cidrs(node):
    return json.loads(node['metadata']['annotations'][HOST_CIDRS])


def _set_cidrs(node, cidrs):
    node['metadata']['annotations'][HOST_CIDRS] = json.dumps(sorted(cidrs))


def _state(snap, name):
    return next(item for item in snap['nns'] if item['metadata']['name'] == name)


def _secondary_interface(snap, name):
    return next(item for item in _state(snap, name)['status']['currentState']['interfaces'] if item['name'] == 'ens224')


def _dual_stack_cluster(snap):
    """The cluster itself dual stack, as the twin's --dual-stack seed: br-ex holds fd00:10::<host>/64 with a default route
    of metric 48, the Network config lists fd01::/48 and fd02::/112."""
    for index, node in enumerate(snap['nodes']):
        primary6 = 'fd00:10::%d/64' % (11 + index)
        annotations = node['metadata']['annotations']
        annotations['k8s.ovn.org/node-primary-ifaddr'] = json.dumps(dict(json.loads(annotations['k8s.ovn.org/node-primary-ifaddr']),
                                                                         ipv6=primary6))
        _set_cidrs(node, _cidrs(node) + [primary6])
        node['status']['addresses'].append({'type': 'InternalIP', 'address': primary6.split('/')[0]})
        state = _state(snap, node['metadata']['name'])['status']['currentState']
        state['routes']['running'].append({'destination': '::/0', 'next-hop-interface': 'br-ex', 'next-hop-address': 'fd00:10::1',
                                           'metric': 48, 'table-id': 254})
    status = snap['network_config']['status']
    status['clusterNetwork'].append({'cidr': 'fd01::/48', 'hostPrefix': 64})
    status['serviceNetwork'].append('fd02::/112')
    return snap


def _add_ipv6(snap, name, address, prefix=64, route=True, policy=True, link_local=True):
    """One egress node's NIC holds `address` too (host-cidrs, NodeNetworkState with its link-local address, the policy)."""
    node = hm.node_by_name(snap, name)
    _set_cidrs(node, _cidrs(node) + ['%s/%d' % (address, prefix)])
    interface = _secondary_interface(snap, name)
    addresses = [{'ip': address, 'prefix-length': prefix}]
    if link_local:
        addresses.append({'ip': 'fe80::250:56ff:feaa:%d' % int(name[-1]), 'prefix-length': 64})
    held = (interface.get('ipv6') or {}).get('address') or []
    interface['ipv6'] = {'enabled': True, 'autoconf': False, 'dhcp': False, 'address': held + addresses}
    if route:
        routes = _state(snap, name)['status']['currentState']['routes']
        entry = {'destination': '::/0', 'next-hop-interface': 'ens224', 'next-hop-address': GATEWAY6, 'metric': METRIC6}
        routes['config'].append(entry)
        routes['running'].append(entry)
    if policy:
        item = next(item for item in snap['nncps'] if item['metadata']['name'] == '%s-egress' % name)
        item['spec']['desiredState']['interfaces'][0]['ipv6'] = {'enabled': True, 'dhcp': False, 'autoconf': False,
                                                                 'address': [{'ip': address, 'prefix-length': prefix}]}
        item['spec']['desiredState']['routes']['config'].append(
            {'destination': '::/0', 'next-hop-address': GATEWAY6, 'next-hop-interface': 'ens224', 'metric': METRIC6})


def dual_stack():
    """hm.hand_made() on a dual-stack cluster whose egress NICs also hold fd00:30::11-13/64, routed via fd00:30::1 (metric
    160); reports has an IPv6 egress IP too; the hand-made Tuned forwards both families."""
    snap = _dual_stack_cluster(hm.hand_made())
    for name, address in IPV6.items():
        _add_ipv6(snap, name, address)
    snap['egressips'][1]['spec']['egressIPs'].append('fd00:30::210')
    snap['egressips'][1]['status']['items'].append({'node': 'ocp1-worker-2', 'egressIP': 'fd00:30::210'})
    snap['tuneds'][1] = hm.tuned(data=FORWARDING_BOTH)
    return snap


def ipv6_only():
    """dual_stack() with the IPv4 part of the egress network gone: the NICs hold only their IPv6 addresses."""
    snap = dual_stack()
    for name in hm.EGRESS_NODES:
        node = hm.node_by_name(snap, name)
        _set_cidrs(node, [entry for entry in _cidrs(node) if not entry.startswith('10.30.0.')])
        interface = _secondary_interface(snap, name)
        interface['ipv4'] = {'enabled': False}
        routes = _state(snap, name)['status']['currentState']['routes']
        for key in ('config', 'running'):
            routes[key] = [route for route in routes[key] if route['destination'] != '0.0.0.0/0' or route['next-hop-interface'] != 'ens224']
        item = next(item for item in snap['nncps'] if item['metadata']['name'] == '%s-egress' % name)
        item['spec']['desiredState']['interfaces'][0]['ipv4'] = {'enabled': False}
        item['spec']['desiredState']['routes']['config'] = [
            route for route in item['spec']['desiredState']['routes']['config'] if route['destination'] == '::/0']
    snap['egressips'] = [item for item in snap['egressips'] if item['metadata']['name'] == 'egressip-legacy']
    snap['egressips'].append(hm.egressip('payments6', ['fd00:30::200'], {'matchLabels': {'team': 'payments'}},
                                         [('fd00:30::200', 'ocp1-worker-0')]))
    snap['tuneds'][1] = hm.tuned(data='[main]\nsummary=by hand\ninclude=openshift-node\n\n[sysctl]\nnet.ipv6.conf.ens224.forwarding=1\n')
    return snap


def adopted(snap):
    """What enable with the discovered dual-stack variables adds to `snap` (as hm.adopted() for IPv4)."""
    result = hm.adopted()
    for key in ('nodes', 'nns', 'egressips', 'network_config'):
        result[key] = snap[key]
    for item in result['nodes']:
        if item['metadata']['name'] in hm.EGRESS_NODES:
            item['metadata']['labels'][hm.ASSIGNABLE] = ''
            item['metadata']['annotations'][hm.LABEL_RECORD] = 'ocp.egressip'
    for item in result['egressips']:
        if item['metadata']['name'] != 'egressip-legacy':
            item['metadata']['labels'] = {'egressip.ocp/managed-by': 'ocp.egressip'}
    result['nncps'] = list(snap['nncps']) + [item for item in result['nncps'] if item['metadata']['name'].startswith('egressip-')]
    for item in result['nncps'][-3:]:
        name = item['metadata']['annotations']['egressip.ocp/node']
        item['spec']['desiredState']['interfaces'][0]['ipv6'] = {'enabled': True, 'dhcp': False, 'autoconf': False,
                                                                 'address': [{'ip': IPV6[name], 'prefix-length': 64}]}
    managed = next(item for item in result['tuneds'] if item['metadata']['name'] == 'egressip-forwarding')
    managed['spec']['profile'][0]['data'] += 'net.ipv6.conf.ens224.forwarding=1\n'
    result['tuneds'] = [snap['tuneds'][0], snap['tuneds'][1], managed]
    return result


# --- discovery ----------------------------------------------------------------------------------------

def test_ipv4_only_discovery_has_no_ipv6_part():
    result = _migrate.discover(hm.hand_made(), {}, True)
    assert 'ipv6' not in result['variables']['egressip_network']
    assert all('ipv6_address' not in row for row in result['nodes'])
    assert 'migrate_ipv6_dynamic' not in ids(result)


def test_ipv4_only_network_on_a_dual_stack_cluster_stays_ipv4():
    # br-ex's IPv6 address is primary, and the NIC holds only a link-local IPv6 address: no IPv6 part
    snap = _dual_stack_cluster(hm.hand_made())
    for name in hm.EGRESS_NODES:
        _secondary_interface(snap, name)['ipv6'] = {'enabled': True, 'address': [{'ip': 'fe80::1:%d' % int(name[-1]), 'prefix-length': 64}]}
    result = _migrate.discover(snap, {}, True)
    assert result['summary']['complete'], result['findings']
    assert result['variables']['egressip_network'] == _migrate.discover(hm.hand_made(), {}, True)['variables']['egressip_network']


def test_dual_stack_setup_is_described_with_both_families():
    result = _migrate.discover(dual_stack(), {}, True)
    assert result['summary']['ok'] and result['summary']['complete'], [item for item in result['findings'] if item['severity'] == 'error']
    assert result['variables']['egressip_network'] == {
        'cidr': '10.30.0.0/24', 'gateway': '10.30.0.1', 'node_address_range': '10.30.0.11-10.30.0.13', 'route_metric': 150,
        'ip_forwarding': 'per_interface',
        'ipv6': {'cidr': 'fd00:30::/64', 'gateway': GATEWAY6, 'node_address_range': 'fd00:30::11-fd00:30::13', 'route_metric': METRIC6}}
    objects = dict((entry['name'], entry) for entry in result['variables']['egressip_objects'])
    assert objects['reports']['egress_ips'] == ['10.30.0.210', 'fd00:30::210'], 'an object may mix families'
    rows = dict((row['node'], row) for row in result['nodes'])
    assert (rows['ocp1-worker-1']['address'], rows['ocp1-worker-1']['ipv6_address']) == ('10.30.0.12/24', 'fd00:30::12/64')
    assert rows['ocp1-worker-0']['forwarding'] == 'Tuned egress-forwarding/egress-forwarding'
    plan = ' '.join(result['adoption_plan'])
    assert 'creates NMState policy egressip-ocp1-worker-0 for ocp1-worker-0 (same address 10.30.0.11/24, fd00:30::11/64)' in plan
    assert 'migrate_ipv6_dynamic' not in ids(result) and 'migrate_network_ambiguous' not in ids(result)
    text = _migrate_report.render_markdown(result)
    assert 'fd00:30::/64' in text and 'fd00:30::12/64' in text


def test_dual_stack_variables_stay_the_same_after_adoption():
    snap = dual_stack()
    before = _migrate.discover(snap, {}, True)
    after = _migrate.discover(adopted(snap), {}, True)
    assert after['variables'] == before['variables']
    assert after['overrides'] == before['overrides']
    assert after['adoption_plan'] == []


def test_missing_ipv6_route_is_added_with_the_ipv4_metric_and_kept_after_adoption():
    snap = dual_stack()
    for name in hm.EGRESS_NODES:
        routes = _state(snap, name)['status']['currentState']['routes']
        for key in ('config', 'running'):
            routes[key] = [route for route in routes[key] if route['next-hop-address'] != GATEWAY6]
        item = next(item for item in snap['nncps'] if item['metadata']['name'] == '%s-egress' % name)
        item['spec']['desiredState']['routes']['config'] = item['spec']['desiredState']['routes']['config'][:1]
    result = _migrate.discover(snap, {'ipv6': {'gateway': GATEWAY6}}, True)
    assert result['variables']['egressip_network']['ipv6']['route_metric'] == 150
    assert 'adds a default route through %s with metric 150 on the secondary NIC of every egress node' % GATEWAY6 in result['adoption_plan']


def test_ipv6_only_setup_is_described_as_an_ipv6_network():
    result = _migrate.discover(ipv6_only(), {}, True)
    assert result['summary']['complete'], result['findings']
    assert result['variables']['egressip_network'] == {
        'cidr': 'fd00:30::/64', 'gateway': GATEWAY6, 'node_address_range': 'fd00:30::11-fd00:30::13', 'route_metric': METRIC6,
        'ip_forwarding': 'per_interface'}
    assert [entry['name'] for entry in result['variables']['egressip_objects']] == ['payments6']
    assert dict((row['node'], row['address']) for row in result['nodes'])['ocp1-worker-2'] == 'fd00:30::13/64'
    assert all('ipv6_address' not in row for row in result['nodes'])
    assert by_id(result, 'migrate_forwarding_by_hand'), 'the hand-made IPv6 forwarding is taken over'


def test_ipv4_storage_subnet_on_another_nic_does_not_hide_the_ipv6_only_egress_network():
    snap = ipv6_only()
    worker3 = hm.node_by_name(snap, 'ocp1-worker-3')
    _set_cidrs(worker3, _cidrs(worker3) + ['172.16.5.3/24'])
    families, findings = _migrate_facts.choose_families(snap['nodes'], dict((item['metadata']['name'], item) for item in snap['nns']),
                                                        snap['egressips'], {})
    assert (families, findings) == ({6: 'fd00:30::/64'}, [])


def test_two_ipv6_subnets_on_the_nic_are_ambiguous_and_name_the_ipv6_hint():
    snap = dual_stack()
    snap['egressips'][1]['spec']['egressIPs'].remove('fd00:30::210')
    for name in hm.EGRESS_NODES:
        _add_ipv6(snap, name, 'fd00:31::%s' % name[-1], route=False, policy=False, link_local=False)
    result = _migrate.discover(snap, {}, True)
    [finding] = by_id(result, 'migrate_network_ambiguous')
    assert 'fd00:30::/64' in finding['message'] and 'fd00:31::/64' in finding['message']
    assert finding['objects'] == [{'kind': 'option', 'name': 'migrate_hints.ipv6.cidr'}]
    assert 'migrate_hints.ipv6.cidr' in finding['remedy']
    assert result['variables'] is None
    # the IPv6 egress IP tells which one, and so does the hint
    assert _migrate.discover(dual_stack_with_second_subnet(), {}, True)['variables']['egressip_network']['ipv6']['cidr'] == 'fd00:30::/64'
    hinted = _migrate.discover(snap, {'ipv6': {'cidr': 'fd00:30::/64'}}, True)
    assert hinted['variables']['egressip_network']['ipv6']['cidr'] == 'fd00:30::/64'


def dual_stack_with_second_subnet():
    snap = dual_stack()
    for name in hm.EGRESS_NODES:
        _add_ipv6(snap, name, 'fd00:31::%s' % name[-1], route=False, policy=False, link_local=False)
    return snap


def test_two_ipv6_only_subnets_with_no_egress_ip_are_ambiguous():
    snap = ipv6_only()
    snap['egressips'] = snap['egressips'][:1]
    worker3 = hm.node_by_name(snap, 'ocp1-worker-3')
    _set_cidrs(worker3, _cidrs(worker3) + ['fd00:99::3/64'])
    cidr, findings = _migrate_facts.choose_cidr(snap['nodes'], snap['egressips'], None)
    assert cidr is None and findings[0]['id'] == 'migrate_network_ambiguous'
    assert findings[0]['objects'] == [{'kind': 'option', 'name': 'migrate_hints.ipv6.cidr'}]


@pytest.mark.parametrize('entries', [
    ['fd00:30::11/128'],                              # a /128 host address is no subnet (OVN-K ignores it)
    ['fe80::250:56ff:feaa:0/64'],                     # link-local never counts
])
def test_host_addresses_and_link_local_are_not_subnets(entries):
    snap = hm.hand_made()
    for name in hm.EGRESS_NODES:
        node = hm.node_by_name(snap, name)
        _set_cidrs(node, _cidrs(node) + entries)
        interface = _secondary_interface(snap, name)
        interface['ipv6'] = {'enabled': True, 'address': [{'ip': entry.split('/')[0], 'prefix-length': int(entry.split('/')[1])}
                                                          for entry in entries]}
    state = dict((item['metadata']['name'], item) for item in snap['nns'])
    assert _migrate_facts.secondary_subnets(snap['nodes'])[6] == {}
    assert _migrate_facts.choose_families(snap['nodes'], state, snap['egressips'], {}) == ({4: '10.30.0.0/24'}, [])


def test_ipv6_only_network_by_the_cidr_hint_leaves_the_ipv4_subnet_out():
    result = _migrate.discover(dual_stack(), {'cidr': 'fd00:30::/64'}, True)
    network = result['variables']['egressip_network']
    assert (network['cidr'], network['gateway'], 'ipv6' in network) == ('fd00:30::/64', GATEWAY6, False)
    assert [entry['name'] for entry in result['variables']['egressip_objects']] == []
    assert 'reports' in ' '.join(item['message'] for item in by_id(result, 'migrate_egressip_not_adoptable'))


def test_ipv6_hints_win_over_discovery():
    hints = {'ipv6': {'gateway': 'fd00:30::fe', 'node_address_range': 'fd00:30::10-fd00:30::99'}}
    result = _migrate.discover(dual_stack(), hints, True)
    network = result['variables']['egressip_network']
    assert (network['ipv6']['gateway'], network['ipv6']['node_address_range']) == ('fd00:30::fe', 'fd00:30::10-fd00:30::99')
    assert (network['gateway'], network['node_address_range']) == ('10.30.0.1', '10.30.0.11-10.30.0.13'), 'IPv4 is still discovered'


def test_conflicting_cidr_hints_are_refused():
    families, findings = _migrate_facts.choose_families([], {}, [], {'cidr': 'fd00:30::/64', 'ipv6': {'cidr': 'fd00:31::/64'}})
    assert families == {} and findings[0]['id'] == 'migrate_network_ambiguous'
    assert 'migrate_hints.ipv6.cidr' in findings[0]['remedy']


def test_unknown_ipv6_gateway_names_the_ipv6_hint():
    snap = dual_stack()
    for name in hm.EGRESS_NODES:
        routes = _state(snap, name)['status']['currentState']['routes']
        for key in ('config', 'running'):  # a default route from router advertisements: via a link-local next hop
            routes[key] = [dict(route, **{'next-hop-address': 'fe80::1'}) if route['next-hop-address'] == GATEWAY6 else route
                           for route in routes[key]]
        item = next(item for item in snap['nncps'] if item['metadata']['name'] == '%s-egress' % name)
        item['spec']['desiredState']['routes']['config'] = item['spec']['desiredState']['routes']['config'][:1]
    result = _migrate.discover(snap, {}, True)
    [finding] = by_id(result, 'migrate_gateway_unknown')
    assert finding['objects'] == [{'kind': 'option', 'name': 'migrate_hints.ipv6.gateway'}]
    assert 'link-local' in finding['message'] and not result['summary']['complete']


def test_ipv6_address_ranges_avoid_the_egress_ip():
    snap = dual_stack()
    snap['egressips'][1]['spec']['egressIPs'][-1] = 'fd00:30::12'
    snap['egressips'][1]['status']['items'][-1]['egressIP'] = 'fd00:30::12'
    result = _migrate.discover(snap, {}, True)
    [finding] = by_id(result, 'migrate_address_range_conflict')
    assert finding['objects'] == [{'kind': 'option', 'name': 'migrate_hints.ipv6.node_address_range'}]
    assert 'fd00:30::12' in finding['message']


def test_node_missing_its_ipv6_address_is_incomplete_and_widens_the_ipv6_range():
    snap = dual_stack()
    node = hm.node_by_name(snap, 'ocp1-worker-2')
    _set_cidrs(node, [entry for entry in _cidrs(node) if not entry.startswith('fd00:30::')])
    result = _migrate.discover(snap, {}, True)
    assert 'ocp1-worker-2 (NIC %s, no IPv6 address)' % hm.egress_mac('ocp1-worker-2') in by_id(result, 'migrate_node_incomplete')[0]['message']
    assert result['variables']['egressip_network']['ipv6']['node_address_range'] == 'fd00:30::11-fd00:30::13'
    assert 'migrate_address_range_extended' in ids(result)


# --- hand-made policies and forwarding ----------------------------------------------------------------

def test_hand_made_policy_with_autoconf_is_named_and_planned():
    snap = dual_stack()
    item = next(item for item in snap['nncps'] if item['metadata']['name'] == 'ocp1-worker-1-egress')
    item['spec']['desiredState']['interfaces'][0]['ipv6'] = {'enabled': True, 'autoconf': True, 'dhcp': False}
    result = _migrate.discover(snap, {}, True)
    [finding] = by_id(result, 'migrate_ipv6_dynamic')
    assert finding['severity'] == 'warning' and finding['objects'] == [{'kind': 'Node', 'name': 'ocp1-worker-1'}]
    assert 'ocp1-worker-1-egress turns ipv6 autoconf on' in finding['message']
    assert 'no policy sets its IPv6 base address fd00:30::12/64 statically' in finding['message']
    assert ('turns IPv6 autoconf and DHCPv6 off on the secondary NIC of ocp1-worker-1 (base address fd00:30::12/64 kept, set statically)'
            in result['adoption_plan'])
    after = _migrate.discover(adopted(snap), {}, True)
    assert after['adoption_plan'] == [] and by_id(after, 'migrate_ipv6_dynamic'), 'the hand-made policy still says autoconf'


def test_ipv6_forwarding_missing_by_hand_is_planned():
    snap = dual_stack()
    snap['tuneds'][1] = hm.tuned()  # IPv4 forwarding only
    result = _migrate.discover(snap, {}, True)
    rows = dict((row['node'], row) for row in result['nodes'])
    # Linux forwards IPv6 by the node-wide switch, which ovnkube-node turns on: the collection's Tuned still writes the IPv6 key
    assert rows['ocp1-worker-0']['forwarding'] == ('IPv4 Tuned egress-forwarding/egress-forwarding; '
                                                   'IPv6 ovnkube-node (net.ipv6.conf.all.forwarding)')
    assert any(item.startswith('sets IP forwarding on the secondary NIC of ocp1-worker-0') for item in result['adoption_plan'])


def test_ipv6_forwarding_turned_off_node_wide_by_hand_is_named():
    snap = dual_stack()
    snap['tuneds'][1] = hm.tuned(data=hm.FORWARDING_ONLY + 'net.ipv6.conf.all.forwarding=0\n')
    result = _migrate.discover(snap, {}, True)
    rows = dict((row['node'], row) for row in result['nodes'])
    assert rows['ocp1-worker-1']['forwarding'] == ('IPv4 Tuned egress-forwarding/egress-forwarding; '
                                                   'IPv6 off (net.ipv6.conf.all.forwarding=0 in Tuned egress-forwarding/egress-forwarding)')
    # a forwarding-only profile: the collection's Tuned replaces it on these nodes, so the 0 goes and IPv6 is forwarded again
    assert result['variables']['egressip_network']['ip_forwarding'] == 'per_interface'
    assert by_id(result, 'migrate_forwarding_by_hand')


def test_forwarding_per_family():
    sysctls = {'net.ipv6.conf.ens224.forwarding': '1', 'net.ipv4.ip_forward': '0'}
    assert _migrate_forwarding.forwards(sysctls, 'ens224', 6) and not _migrate_forwarding.forwards(sysctls, 'ens224', 4)
    assert _migrate_forwarding.forwards({'net.ipv6.conf.all.forwarding': '1'}, 'ens224', 6)
    assert not _migrate_forwarding.forwards({'net.ipv4.ip_forward': '1'}, 'ens224', 6), 'no IPv6 equivalent of ip_forward'


def test_an_unparsable_cidr_hint_reaches_preflight_instead_of_failing_the_discovery():
    families, findings = _migrate_facts.choose_families(hm.hand_made()['nodes'], {}, [], {'cidr': '10.30.0.0/33'})
    assert (families, findings) == ({4: '10.30.0.0/33'}, [])
