"""Desired NNCP and Tuned objects, progress, kernel names by MAC, capability and label plans."""

import json

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import LABEL_RECORD_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import networks_from
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egress_labels as el
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.plan import nic_addresses as na
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips

MAC = '00:50:56:aa:bb:01'


def policy(addresses=None, mac=MAC, node='worker-0'):
    return nn.desired_policy(node, node, mac, addresses or {4: '10.20.0.10/24'}, {4: '10.20.0.1', 6: 'fd00:20::1'}, 200, 'egressip0',
                             'ens224')


def nns(interfaces, routes=None):
    return {'metadata': {'name': 'worker-0'},
            'status': {'currentState': {'interfaces': interfaces, 'routes': {'running': routes or [], 'config': []}}}}


def iface(name, mac, state='up', addresses=()):
    entry = {'name': name, 'type': 'ethernet', 'state': state, 'mac-address': mac.upper(), 'ipv6': {'enabled': False}}
    entry['ipv4'] = {'enabled': bool(addresses), 'address': [{'ip': a.split('/')[0], 'prefix-length': int(a.split('/')[1])} for a in addresses]}
    return entry


# --- policy --------------------------------------------------------------------------------------

def test_desired_policy_matches_nic_by_mac_with_static_address_and_gateway_route():
    result = policy()
    assert result['apiVersion'] == 'nmstate.io/v1'
    assert result['metadata']['name'] == 'egressip-worker-0'
    assert result['metadata']['labels'] == {'egressip.ocp/managed-by': 'ocp.egressip'}
    assert result['metadata']['annotations'] == {'egressip.ocp/node': 'worker-0', 'egressip.ocp/addresses': '10.20.0.10/24'}
    assert result['spec']['nodeSelector'] == {'kubernetes.io/hostname': 'worker-0'}
    interface = result['spec']['desiredState']['interfaces'][0]
    assert interface == {'name': 'egressip0', 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address',
                         'mac-address': '00:50:56:AA:BB:01',
                         'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': '10.20.0.10', 'prefix-length': 24}]},
                         'ipv6': {'enabled': False}}
    # the route names the kernel interface, never the profile name: nmstate < 2.2.43 would roll the whole policy back
    assert result['spec']['desiredState']['routes'] == {'config': [
        {'destination': '0.0.0.0/0', 'next-hop-address': '10.20.0.1', 'next-hop-interface': 'ens224', 'metric': 200, 'table-id': 254}]}
    # no DNS, and nothing touches br-ex or the primary default route
    assert 'dns-resolver' not in result['spec']['desiredState']
    assert [i['name'] for i in result['spec']['desiredState']['interfaces']] == ['egressip0']


def test_desired_policy_dual_stack():
    result = policy({4: '10.20.0.10/24', 6: 'fd00:20::10/64'})
    interface = result['spec']['desiredState']['interfaces'][0]
    assert interface['ipv6'] == {'enabled': True, 'dhcp': False, 'autoconf': False, 'address': [{'ip': 'fd00:20::10', 'prefix-length': 64}]}
    assert [r['destination'] for r in result['spec']['desiredState']['routes']['config']] == ['0.0.0.0/0', '::/0']
    assert result['metadata']['annotations']['egressip.ocp/addresses'] == '10.20.0.10/24,fd00:20::10/64'


def test_policy_allocation_reads_back_what_was_recorded():
    assert nn.policy_allocation(policy({4: '10.20.0.10/24', 6: 'fd00:20::10/64'})) == {
        'node': 'worker-0', 'addresses': {4: '10.20.0.10/24', 6: 'fd00:20::10/64'}, 'mac': MAC, 'name': 'egressip-worker-0'}
    foreign = policy()
    foreign['metadata']['labels'] = {}
    assert nn.policy_allocation(foreign) is None


def test_long_node_names_get_a_short_stable_policy_name():
    node = 'n' * 250
    name = nn.policy_name(node)
    assert len(name) <= 253 and name == nn.policy_name(node) and name != nn.policy_name('m' * 250)


def test_owned_patch_is_empty_when_in_sync_and_keeps_foreign_fields():
    current = policy()
    current['metadata']['labels']['team'] = 'net'
    current['metadata']['resourceVersion'] = '7'
    current['spec']['maxUnavailable'] = 1
    current['status'] = {'conditions': []}
    assert nn.owned_patch(current, policy()) == {}


def test_owned_patch_changes_only_what_differs():
    current = policy(mac='00:50:56:aa:bb:99')
    current['spec']['desiredState']['dns-resolver'] = {'config': {'server': ['1.1.1.1']}}
    patch = nn.owned_patch(current, policy())
    assert set(patch) == {'spec'}
    assert patch['spec']['desiredState']['interfaces'][0]['mac-address'] == '00:50:56:AA:BB:01'
    assert patch['spec']['desiredState']['dns-resolver'] is None   # the policy is ours: exactly what we want
    assert 'routes' not in patch['spec']['desiredState']


def test_owned_patch_for_a_new_object_is_the_whole_owned_part():
    patch = nn.owned_patch(None, policy())
    assert patch['metadata']['labels'] == {'egressip.ocp/managed-by': 'ocp.egressip'}
    assert patch['spec']['nodeSelector'] == {'kubernetes.io/hostname': 'worker-0'}


def test_merge_patch():
    assert nn.merge_patch({'a': 1, 'b': {'c': 1, 'd': 2}, 'l': [1]}, {'a': 1, 'b': {'c': 2}, 'l': [1, 2], 'n': None}) == {
        'b': {'c': 2, 'd': None}, 'l': [1, 2], 'n': None}


# --- progress ------------------------------------------------------------------------------------

def conditions(**statuses):
    return [{'type': kind, 'status': status, 'message': '%s message' % kind} for kind, status in statuses.items()]


def test_progress_from_the_enactment_of_the_current_generation():
    current = dict(policy(), status={'conditions': conditions(Available='True')})
    current['metadata']['generation'] = 2
    done = {'status': {'policyGeneration': 2, 'conditions': conditions(Available='True', Failing='False')}}
    failing = {'status': {'policyGeneration': 2, 'conditions': conditions(Available='False', Failing='True')}}
    stale = {'status': {'policyGeneration': 1, 'conditions': conditions(Available='True')}}
    assert nn.policy_progress(current, done)[0] == nn.AVAILABLE
    assert nn.policy_progress(current, failing) == (nn.DEGRADED, 'Failing message')
    assert nn.policy_progress(current, stale)[0] == nn.PROGRESSING
    assert nn.policy_progress(current, None)[0] == nn.PROGRESSING


def test_progress_aborted_is_degraded():
    current = policy()
    aborted = {'status': {'conditions': conditions(Aborted='True', Available='False', Failing='False')}}
    assert nn.policy_progress(current, aborted) == (nn.DEGRADED, 'Aborted message')


# --- NodeNetworkState --------------------------------------------------------------------------------

def test_interface_by_mac_is_case_insensitive_and_gives_the_kernel_name():
    state = nns([iface('ens192', '00:50:56:00:00:01'), iface('ens224', MAC, addresses=['10.20.0.10/24'])])
    found = nn.interface_by_mac(state, MAC.upper())
    assert found['name'] == 'ens224'
    assert nn.interface_addresses(found) == ['10.20.0.10/24']
    assert nn.interface_by_mac(state, '00:50:56:ff:ff:ff') is None


def test_route_metric_must_be_above_the_primary_default_route():
    state = nns([], routes=[{'destination': '0.0.0.0/0', 'next-hop-interface': 'br-ex', 'metric': 48, 'table-id': 254},
                            {'destination': '0.0.0.0/0', 'next-hop-interface': 'ens224', 'metric': 20, 'table-id': 254}])
    assert nn.route_metric_findings({'worker-0': state}, 200, {'worker-0': 'ens224'}) == []
    findings = nn.route_metric_findings({'worker-0': state}, 48, {'worker-0': 'ens224'})
    assert [f['id'] for f in findings] == ['node_route_metric_too_low']
    assert 'route_metric 48 is not above the metric 48 of the primary IPv4 default route of node worker-0' in findings[0]['message']
    assert 'set route_metric to 49 or more' in findings[0]['remedy']


def test_each_family_has_its_own_route_metric():
    result = nn.desired_policy('worker-0', 'worker-0', MAC, {4: '10.20.0.10/24', 6: 'fd00:20::10/64'}, {4: '10.20.0.1', 6: 'fd00:20::1'},
                               {4: 200, 6: 310}, 'egressip0', 'ens224')
    assert [(r['destination'], r['metric']) for r in result['spec']['desiredState']['routes']['config']] == [('0.0.0.0/0', 200), ('::/0', 310)]
    state = nns([], routes=[{'destination': '0.0.0.0/0', 'next-hop-interface': 'br-ex', 'metric': 48, 'table-id': 254},
                            {'destination': '::/0', 'next-hop-interface': 'br-ex', 'metric': 300, 'table-id': 254}])
    findings = nn.route_metric_findings({'worker-0': state}, {4: 200, 6: 300}, {'worker-0': 'ens224'}, versions=(4, 6))
    assert [f['message'] for f in findings] == [
        'ipv6.route_metric 300 is not above the metric 300 of the primary IPv6 default route of node worker-0.']
    assert 'set ipv6.route_metric to 301 or more' in findings[0]['remedy']
    assert nn.route_metric_findings({'worker-0': state}, {4: 200, 6: 301}, {'worker-0': 'ens224'}, versions=(4, 6)) == []


# --- Tuned -------------------------------------------------------------------------------------------

def test_desired_tuned_groups_nodes_by_interface_and_parent_profile():
    targets = [{'node': 'w-0', 'hostname': 'w-0', 'interface': 'ens224', 'parent': 'openshift-node'},
               {'node': 'w-1', 'hostname': 'w-1', 'interface': 'ens224', 'parent': 'openshift-node'},
               {'node': 'w-2', 'hostname': 'w-2', 'interface': 'ens256', 'parent': 'openshift-node'},
               {'node': 'm-0', 'hostname': 'm-0', 'interface': 'ens224', 'parent': 'openshift-control-plane'}]
    tuned = fw.desired_tuned(targets, 20)
    assert tuned['metadata']['namespace'] == 'openshift-cluster-node-tuning-operator'
    assert tuned['metadata']['labels'] == {'egressip.ocp/managed-by': 'ocp.egressip'}
    names = [p['name'] for p in tuned['spec']['profile']]
    assert names == ['egressip-forwarding-control-plane-ens224', 'egressip-forwarding-node-ens224', 'egressip-forwarding-node-ens256']
    data = tuned['spec']['profile'][1]['data']
    assert 'include=openshift-node' in data and 'net.ipv4.conf.ens224.forwarding=1' in data and 'ipv6' not in data
    assert tuned['spec']['recommend'][1] == {'profile': 'egressip-forwarding-node-ens224', 'priority': 20, 'match': [
        {'label': 'kubernetes.io/hostname', 'value': 'w-0'}, {'label': 'kubernetes.io/hostname', 'value': 'w-1'}]}
    assert fw.forwarded_interfaces(tuned) == {'w-0': {'ens224'}, 'w-1': {'ens224'}, 'w-2': {'ens256'}, 'm-0': {'ens224'}}
    assert fw.desired_tuned([], 20) is None


def test_tuned_ipv6_and_vlan_names():
    tuned = fw.desired_tuned([{'node': 'w', 'hostname': 'w', 'interface': 'ens224.120', 'parent': 'openshift-node'}], 20, ipv6=True)
    data = tuned['spec']['profile'][0]['data']
    assert 'net.ipv4.conf.ens224/120.forwarding=1' in data and 'net.ipv6.conf.ens224/120.forwarding=1' in data
    assert fw.forwarded_interfaces(tuned) == {'w': {'ens224.120'}}


def test_parent_profile_by_role():
    assert fw.parent_profile({'metadata': {'labels': {'node-role.kubernetes.io/master': ''}}}) == 'openshift-control-plane'
    assert fw.parent_profile({'metadata': {'labels': {'node-role.kubernetes.io/worker': ''}}}) == 'openshift-node'


def test_cluster_ip_forwarding():
    operator = {'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': 'Global'}}}}}
    assert fw.cluster_ip_forwarding(operator) == 'Global'
    assert fw.cluster_ip_forwarding({'spec': {}}) == ''


# --- capability and labels ---------------------------------------------------------------------------

@pytest.mark.parametrize('selector, labels, expected', [
    ({'node-role.kubernetes.io/worker': ''}, {'node-role.kubernetes.io/worker': ''}, True),
    ({'node-role.kubernetes.io/worker': ''}, {'node-role.kubernetes.io/master': ''}, False),
    ({'matchLabels': {'a': 'b'}, 'matchExpressions': [{'key': 'c', 'operator': 'NotIn', 'values': ['x']}]}, {'a': 'b', 'c': 'y'}, True),
    ({'matchExpressions': [{'key': 'c', 'operator': 'Exists'}]}, {'a': 'b'}, False),
    ({'matchExpressions': [{'key': 'c', 'operator': 'In', 'values': ['x']}]}, {'c': 'x'}, True),
    ({'matchExpressions': [{'key': 'c', 'operator': 'DoesNotExist'}]}, {}, True),
    ({}, {'anything': 'x'}, True),
])
def test_selector_matches(selector, labels, expected):
    assert selector_matches(selector, labels) is expected


CIDRS = ['10.20.0.0/24']


def test_capable_node():
    state = nns([iface('ens224', MAC, addresses=['10.20.0.10/24'])])
    assert el.node_capability(['10.20.0.10/24', '192.168.10.11/24'], state, CIDRS) == []
    assert el.node_capability(['10.20.0.10/24', '192.168.10.11/24'], state, CIDRS, mac=MAC) == []


@pytest.mark.parametrize('host_cidrs, interfaces, mac, reason', [
    (['192.168.10.11/24'], [iface('ens224', MAC, addresses=['10.20.0.10/24'])], None, 'host-cidrs has no address in 10.20.0.0/24'),
    (['10.20.0.200/32', '192.168.10.11/24'], [iface('ens224', MAC, addresses=['10.20.0.10/24'])], None, 'host-cidrs has no address'),
    (['10.20.0.10/24'], [iface('ens224', MAC, state='down', addresses=['10.20.0.10/24'])], None, 'interface ens224 is down'),
    (['10.20.0.10/24'], [iface('ens192', '00:50:56:00:00:01')], MAC, 'no interface with MAC 00:50:56:aa:bb:01'),
    (['10.20.0.10/24'], [iface('ens224', MAC)], MAC, 'interface ens224 has no address in 10.20.0.0/24'),
    (['10.20.0.10/24'], [iface('ens192', '00:50:56:00:00:01')], None, 'no interface holds an address in 10.20.0.0/24'),
])
def test_not_capable_reasons(host_cidrs, interfaces, mac, reason):
    reasons = el.node_capability(host_cidrs, nns(interfaces), CIDRS, mac=mac)
    assert any(reason in text for text in reasons), reasons


def test_no_node_network_state():
    assert 'no NodeNetworkState' in el.node_capability(['10.20.0.10/24'], None, CIDRS)[0]


def eip(name, items, owned=True):
    labels = {MANAGED_BY_LABEL: MANAGED_BY_VALUE} if owned else {}
    return {'metadata': {'name': name, 'labels': labels}, 'status': {'items': [{'node': node, 'egressIP': ip} for node, ip in items]}}


def test_plan_labels_adds_capable_and_removes_the_rest():
    add, remove, findings = el.plan_labels(labelled=['w-0', 'gone'], capable=['w-0', 'w-1'], matching=['w-0', 'w-1', 'w-2'], egressips=[],
                                           recorded=['w-0', 'gone'])
    assert (add, remove, findings) == (['w-1'], ['gone'], [])


def test_plan_labels_not_exclusive_keeps_labels_outside_the_selector():
    add, remove, _findings = el.plan_labels(labelled=['other', 'w-2'], capable=['w-0'], matching=['w-0', 'w-2'], egressips=[], exclusive=False,
                                            recorded=['other', 'w-2'])
    assert (add, remove) == (['w-0'], ['w-2'])


def test_removal_refused_without_capable_replacement():
    eips = [eip('payments', [('w-0', '10.20.0.200'), ('w-1', '10.20.0.201')])]
    _add, remove, findings = el.plan_labels(labelled=['w-0', 'w-1'], capable=['w-1'], matching=['w-0', 'w-1'], egressips=eips,
                                            recorded=['w-0', 'w-1'], networks=['10.20.0.0/24'])
    assert remove == ['w-0']
    assert [f['id'] for f in findings] == ['node_hosts_egress_ips']
    assert ('removing k8s.ovn.org/egress-assignable from node w-0 would strand egress IP 10.20.0.200 of EgressIP payments: '
            '0 capable replacement node(s) for 1 IP(s) of that object.') == findings[0]['message']


def test_removal_allowed_with_a_capable_replacement_or_force():
    eips = [eip('payments', [('w-0', '10.20.0.200'), ('w-1', '10.20.0.201')])]
    _add, remove, findings = el.plan_labels(labelled=['w-0', 'w-1'], capable=['w-1', 'w-2'], matching=['w-0', 'w-1', 'w-2'], egressips=eips,
                                            recorded=['w-0', 'w-1'])
    assert (remove, findings) == (['w-0'], [])
    _add, remove, findings = el.plan_labels(labelled=['w-0', 'w-1'], capable=['w-1'], matching=['w-0', 'w-1'], egressips=eips, force=True,
                                            recorded=['w-0', 'w-1'])
    assert (remove, findings) == (['w-0'], [])


def test_hosted_egress_ips():
    assert hosted_egress_ips([eip('a', [('w-0', '1.1.1.1')]), eip('b', [('w-0', '2.2.2.2'), ('w-1', '3.3.3.3')])]) == {
        'w-0': [('a', '1.1.1.1'), ('b', '2.2.2.2')], 'w-1': [('b', '3.3.3.3')]}


# --- plans over a snapshot ----------------------------------------------------------------------------

def node(name, host_cidrs=(), labels=None, primary='192.168.10.11/24'):
    annotations = {'k8s.ovn.org/node-primary-ifaddr': json.dumps({'ipv4': primary}),
                   'k8s.ovn.org/host-cidrs': json.dumps([primary] + list(host_cidrs))}
    base = {'kubernetes.io/hostname': name, 'node-role.kubernetes.io/worker': ''}
    base.update(labels or {})
    return {'metadata': {'name': name, 'labels': base, 'annotations': annotations}}


def state(name, mac=MAC, addresses=(), up='up'):
    return {'metadata': {'name': name}, 'status': {'currentState': {
        'interfaces': [iface('ens224', mac, state=up, addresses=addresses)],
        'routes': {'running': [{'destination': '0.0.0.0/0', 'next-hop-interface': 'br-ex', 'metric': 48, 'table-id': 254}]}}}}


def snapshot(**kinds):
    base = {'nodes': [], 'nncps': [], 'nnces': [], 'nns': [], 'egressips': []}
    base.update(kinds)
    return base


def v4():
    families, findings = networks_from({'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99'})
    assert findings == []
    return families


def test_nic_entries_ignore_extra_keys_and_refuse_non_mappings():
    entries, findings = na.nic_entries([{'node': ' w-0 ', 'mac': MAC, 'uuid': 'x', 'action': 'add'}, 'w-1'])
    assert entries == [{'node': 'w-0', 'mac': MAC, 'address': None, 'ipv6_address': None}]
    assert [f['message'] for f in findings] == ["nodes[1] 'w-1' is not a mapping."]


def test_plan_nic_addresses_creates_then_is_a_no_op():
    nodes = [node('w-0', primary='192.168.10.14/24'), node('w-1', primary='192.168.10.15/24')]
    entries = [{'node': 'w-0', 'mac': MAC}, {'node': 'w-1', 'mac': '00:50:56:aa:bb:02'}]
    states = [state('w-0'), state('w-1', mac='00:50:56:aa:bb:02')]
    plan = na.plan_nic_addresses(entries, v4(), 200, 'egressip0', snapshot(nodes=nodes, nns=states))
    assert plan['findings'] == [] and plan['patch'] == []
    assert [p['metadata']['name'] for p in plan['create']] == ['egressip-w-0', 'egressip-w-1']
    assert [a['address'] for a in plan['allocations']] == ['10.20.0.10/24', '10.20.0.11/24']
    assert [a['interface'] for a in plan['allocations']] == ['ens224', 'ens224']
    assert plan['pending'] == []
    assert [[r['next-hop-interface'] for r in p['spec']['desiredState']['routes']['config']] for p in plan['create']] == [['ens224']] * 2
    created = [dict(p, status={}) for p in plan['create']]
    again = na.plan_nic_addresses(entries, v4(), 200, 'egressip0', snapshot(nodes=nodes, nns=states, nncps=created))
    assert (again['create'], again['patch'], again['after']) == ([], [], {})
    assert [a['source'] for a in again['allocations']] == ['existing', 'existing']


def test_plan_nic_addresses_refuses_foreign_policy_and_reports_orphans():
    foreign = {'metadata': {'name': 'egressip-w-0'}, 'spec': {}}
    orphan = policy(node='gone')
    plan = na.plan_nic_addresses([{'node': 'w-0', 'mac': MAC}], v4(), 200, 'egressip0',
                                 snapshot(nodes=[node('w-0')], nns=[state('w-0')], nncps=[foreign, orphan]))
    assert sorted(f['id'] for f in plan['findings']) == ['node_object_not_owned', 'node_policy_orphaned']
    assert 'keeps 10.20.0.10/24 reserved for node gone' in [f for f in plan['findings'] if f['id'] == 'node_policy_orphaned'][0]['message']
    # the orphan's address stays reserved
    assert plan['allocations'][0]['address'] == '10.20.0.11/24'


def test_plan_nic_release_cleans_up_first_unless_the_nic_is_gone_and_guards_egress_ips():
    current = [policy(node='w-0'), policy({4: '10.20.0.11/24'}, mac='00:50:56:aa:bb:02', node='w-1')]
    eips = [{'metadata': {'name': 'pay'}, 'status': {'items': [{'node': 'w-1', 'egressIP': '10.20.0.200'},
                                                               {'node': 'w-0', 'egressIP': '192.168.10.200'}]}}]
    snap = snapshot(nodes=[node('w-0'), node('w-1')], nns=[state('w-0')], nncps=current, egressips=eips)
    plan = na.plan_nic_release({'w-0', 'w-1'}, snap, force=False)
    # w-0 hosts only a primary-network egress IP: not stranded; w-1 hosts one in the released subnet
    assert [(item['node'], item['cleanup']) for item in plan['release']] == [('w-0', True)]
    assert [f['id'] for f in plan['findings']] == ['node_hosts_egress_ips']
    forced = na.plan_nic_release({'w-1'}, snap, force=True)
    assert [(item['node'], item['cleanup']) for item in forced['release']] == [('w-1', False)]  # no NIC with that MAC: delete only


def test_plan_nic_addresses_reports_a_nic_the_node_state_does_not_list_yet():
    nodes = [node('w-0', primary='192.168.10.14/24'), node('w-1', primary='192.168.10.15/24')]
    entries = [{'node': 'w-0', 'mac': MAC}, {'node': 'w-1', 'mac': '00:50:56:aa:bb:02'}]
    plan = na.plan_nic_addresses(entries, v4(), 200, 'egressip0', snapshot(nodes=nodes, nns=[state('w-0')]))
    assert [(item['node'], item['mac'], item['state_found']) for item in plan['pending']] == [('w-1', '00:50:56:aa:bb:02', False)]
    routes = [p['spec']['desiredState']['routes']['config'][0]['next-hop-interface'] for p in plan['create']]
    assert routes == ['ens224', '<kernel name of 00:50:56:aa:bb:02>']
    found = na.pending_findings(plan['pending'], 90)
    assert [f['id'] for f in found] == ['node_nic_not_in_state'] and found[0]['severity'] == 'error'
    assert 'node w-1 lists no interface with MAC 00:50:56:aa:bb:02 after waiting 90 s (the node has no NodeNetworkState)' in found[0]['message']
    listed = na.plan_nic_addresses([{'node': 'w-0', 'mac': '00:50:56:aa:bb:09'}], v4(), 200, 'egressip0',
                                   snapshot(nodes=nodes, nns=[state('w-0')]))
    message = na.pending_findings(listed['pending'], 0)[0]['message']
    assert 'lists no interface with MAC 00:50:56:aa:bb:09 (it lists ' in message and 'ens224 00:50:56:aa:bb:01' in message


def test_policy_progress_retrying_enactment_is_not_final():
    current = dict(policy(), status={'conditions': [{'type': 'Degraded', 'status': 'True'}]})
    current['metadata']['generation'] = 2
    retrying = {'status': {'policyGeneration': 2, 'conditions': [
        {'type': 'Failing', 'status': 'True', 'reason': 'Retrying', 'message': 'failed to reconcile ... Retrying 2/5'},
        {'type': 'Progressing', 'status': 'True', 'reason': 'Retrying'}, {'type': 'Available', 'status': 'False'}]}}
    assert nn.policy_progress(current, retrying) == (nn.PROGRESSING, 'retrying: failed to reconcile ... Retrying 2/5')
    failed = {'status': {'policyGeneration': 2, 'conditions': [
        {'type': 'Failing', 'status': 'True', 'reason': 'FailedToConfigure', 'message': 'NmstateError: ...'},
        {'type': 'Progressing', 'status': 'False'}]}}
    assert nn.policy_progress(current, failed) == (nn.DEGRADED, 'NmstateError: ...')
    ignored = dict(policy(), status={'conditions': [{'type': 'Available', 'status': 'False'},
                                                    {'type': 'Ignored', 'status': 'True', 'message': 'Policy does not match any node'}]})
    assert nn.policy_progress(ignored, None) == (nn.PROGRESSING, 'the policy matches no node yet (Policy does not match any node)')


def test_cleanup_state_disables_ip_and_drops_the_routes():
    allocation = nn.policy_allocation(policy({4: '10.20.0.10/24', 6: 'fd00:20::10/64'}))
    cleanup = na.cleanup_state(allocation, 'egressip0', 'ens224')
    assert cleanup['interfaces'][0]['ipv4'] == {'enabled': False} and cleanup['interfaces'][0]['state'] == 'up'
    assert cleanup['routes']['config'] == [{'destination': '0.0.0.0/0', 'next-hop-interface': 'ens224', 'state': 'absent'},
                                           {'destination': '::/0', 'next-hop-interface': 'ens224', 'state': 'absent'}]


def test_forwarding_targets_and_mode():
    nodes = [node('w-0'), node('m-0', labels={'node-role.kubernetes.io/master': ''})]
    entries = [{'node': 'w-0', 'mac': MAC}, {'node': 'm-0', 'mac': '00:50:56:aa:bb:02'}, {'node': 'w-9', 'mac': MAC}]
    targets, findings = fw.forwarding_targets(entries, snapshot(nodes=nodes, nns=[state('w-0')]))
    assert targets == [{'node': 'w-0', 'hostname': 'w-0', 'interface': 'ens224', 'parent': 'openshift-node'}]
    assert sorted(f['id'] for f in findings) == ['node_network_input_invalid', 'node_network_state_missing']
    tuned = fw.desired_tuned(targets, 20)
    assert fw.forwarding_mode('', targets, None) == 'off'
    assert fw.forwarding_mode('Restricted', targets, tuned) == 'per_interface'
    assert fw.forwarding_mode('Global', targets, None) == 'global'
    assert fw.forwarding_report(targets, '', None, tuned) == [
        {'node': 'w-0', 'interface': 'ens224', 'forwarding_before': False, 'forwarding_after': True}]


def test_plan_egress_nodes():
    nodes = [node('w-0', ['10.20.0.10/24'], labels={'k8s.ovn.org/egress-assignable': ''}),
             node('w-1', ['10.20.0.11/24']),
             node('w-2'),
             node('m-0', labels={'node-role.kubernetes.io/worker': None, 'k8s.ovn.org/egress-assignable': ''})]
    nodes[3]['metadata']['labels'].pop('node-role.kubernetes.io/worker')
    for item in (nodes[0], nodes[3]):
        item['metadata']['annotations'] = dict(item['metadata'].get('annotations') or {}, **{LABEL_RECORD_ANNOTATION: MANAGED_BY_VALUE})
    states = [state('w-0', addresses=['10.20.0.10/24']), state('w-1', addresses=['10.20.0.11/24'], up='down'), state('w-2')]
    plan = el.plan_egress_nodes({'node-role.kubernetes.io/worker': ''}, ['10.20.0.0/24'], {'w-0': MAC}, snapshot(nodes=nodes, nns=states))
    assert (plan['add'], plan['remove'], plan['capable']) == ([], ['m-0'], ['w-0'])
    assert plan['after'] == ['w-0']
    reasons = dict((item['node'], item['reasons']) for item in plan['not_capable'])
    assert reasons['w-1'] == ['interface ens224 is down']
    assert reasons['w-2'][0] == 'k8s.ovn.org/host-cidrs has no address in 10.20.0.0/24'
    assert [f['id'] for f in plan['findings']] == ['node_not_capable', 'node_not_capable']
    absent = el.plan_egress_nodes({'node-role.kubernetes.io/worker': ''}, ['10.20.0.0/24'], {}, snapshot(nodes=nodes, nns=states),
                                  present=False)
    assert absent['remove'] == ['m-0', 'w-0'] and absent['findings'] == []


def test_validate_selector():
    assert el.validate_selector({'a': 'b'}) == []
    assert [f['id'] for f in el.validate_selector({'matchExpressions': [{'key': 'a', 'operator': 'Near'}]})] == ['node_network_input_invalid']


def test_plan_machineset_labels():
    sets = [{'metadata': {'name': 'ms-a'}, 'spec': {'template': {'spec': {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': ''}}}}}},
            {'metadata': {'name': 'ms-b'}, 'spec': {'template': {'spec': {}}}},
            {'metadata': {'name': 'ms-c'}, 'spec': {}}]
    rows = [{'node': 'w-0', 'machineset': 'ms-a'}, {'node': 'w-1', 'machineset': 'ms-b'}, {'node': 'w-2', 'machineset': 'ms-c'},
            {'node': 'm-0', 'machineset': None}]
    assert el.plan_machineset_labels(['w-0', 'w-1', 'm-0'], rows, sets) == ([('ms-b', True)], ['ms-a'], ['ms-a', 'ms-b'])
    assert el.plan_machineset_labels([], rows, sets, present=False) == ([], ['ms-a'], ['ms-a']), 'labelled by hand: kept'
    assert el.plan_machineset_labels([], rows, sets, present=False, force=True) == ([('ms-a', False)], ['ms-a'], [])
    sets[0]['spec']['template']['spec']['metadata']['annotations'] = {LABEL_RECORD_ANNOTATION: MANAGED_BY_VALUE}
    assert el.plan_machineset_labels([], rows, sets, present=False) == ([('ms-a', False)], ['ms-a'], [])
    assert el.machineset_label_patch(False) == {'spec': {'template': {'spec': {'metadata': {
        'labels': {'k8s.ovn.org/egress-assignable': None}, 'annotations': {LABEL_RECORD_ANNOTATION: None}}}}}}


def test_parked_policy_matches_no_node_until_activated():
    parked = nn.parked(policy())
    assert parked['spec']['nodeSelector'] == {'kubernetes.io/hostname': 'worker-0', 'egressip.ocp/address-claim': 'pending'}
    assert policy()['spec']['nodeSelector'] == {'kubernetes.io/hostname': 'worker-0'}  # not changed in place
    assert nn.activation_patch() == {'spec': {'nodeSelector': {'egressip.ocp/address-claim': None}}}
    # a later run of the desired shape removes the parking key too (a run killed before activation)
    assert nn.owned_patch(parked, policy())['spec']['nodeSelector'] == {'egressip.ocp/address-claim': None}


def test_losing_claims_the_first_creation_keeps_the_address():
    def created(node, address, stamp, mac=MAC):
        item = nn.parked(policy({4: address}, mac=mac, node=node))   # claims not yet checked
        item['metadata']['creationTimestamp'] = stamp
        return item
    policies = [created('w-1', '10.20.0.10/24', '2026-12-01T20:00:01Z'), created('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z'),
                created('w-2', '10.20.0.10/24', '2026-12-01T20:00:00Z'), created('w-3', '10.20.0.11/24', '2026-12-01T20:00:02Z'),
                {'metadata': {'name': 'hand-made', 'creationTimestamp': '2026-01-01T00:00:00Z'}, 'spec': {}}]
    # w-2 was first; w-0 and w-1 came later (in the same second), both lose to w-2
    assert nn.losing_claims(policies, ['egressip-w-0', 'egressip-w-1', 'egressip-w-3']) == ['egressip-w-0', 'egressip-w-1']
    assert nn.losing_claims(policies, ['egressip-w-2']) == []
    # two claims in the same second: neither writer can know the other had not checked before it, so both lose
    assert nn.losing_claims(policies[:2], ['egressip-w-0', 'egressip-w-1']) == ['egressip-w-0', 'egressip-w-1']
    # a claim this writer re-allocated yields its new address to any other holder, however old its timestamp
    reallocated = created('w-4', '10.20.0.11/24', '2026-12-01T19:00:00Z')
    assert nn.losing_claims([reallocated, policies[3]], ['egressip-w-4']) == []
    assert nn.losing_claims([reallocated, policies[3]], ['egressip-w-4'], yielding={'egressip-w-4'}) == ['egressip-w-4']
    assert nn.losing_claims([reallocated], ['egressip-w-4'], yielding={'egressip-w-4'}) == []   # nobody else holds it


def test_an_active_policy_holds_its_address_before_any_parked_claim():
    """The race of three writers without the lock (test_node_nic_address_concurrency): writer B re-allocated its
    policy, created at 20:00:00, to .11 while writer C's policy for .11, created at 20:00:01, was already checked and
    activated. B's older timestamp must not win: the active policy keeps the address."""
    b = policy({4: '10.20.0.11/24'}, node='w-1')
    b['metadata']['creationTimestamp'] = '2026-12-01T20:00:00Z'
    c = policy({4: '10.20.0.11/24'}, node='w-2')
    c['metadata']['creationTimestamp'] = '2026-12-01T20:00:01Z'
    parked_b, parked_c = nn.parked(b), nn.parked(c)
    assert nn.losing_claims([parked_b, c], ['egressip-w-1']) == ['egressip-w-1']
    assert nn.unsettled_claims([parked_b, c]) == ['egressip-w-1']
    # both parked: the older claim is first (C lost at its check, or will at its next one)
    assert nn.unsettled_claims([parked_b, parked_c]) == ['egressip-w-2']


def test_a_parked_policy_losing_its_claim_is_re_allocated_and_stays_parked():
    """Two writers without the lock gave w-0 and w-1 the same address; w-0's policy was created first.

    A third run covering both must not refuse (node_address_in_use): the parked loser is not an allocation yet.
    """
    nodes = [node('w-0', primary='192.168.10.14/24'), node('w-1', primary='192.168.10.15/24')]
    states = [state('w-0'), state('w-1', mac='00:50:56:aa:bb:02')]
    first = na.plan_nic_addresses([{'node': 'w-0', 'mac': MAC}], v4(), 200, 'egressip0', snapshot(nodes=nodes, nns=states))
    other = na.plan_nic_addresses([{'node': 'w-1', 'mac': '00:50:56:aa:bb:02'}], v4(), 200, 'egressip0', snapshot(nodes=nodes, nns=states))
    winner = dict(nn.parked(first['create'][0]), status={})
    winner['metadata']['creationTimestamp'] = '2026-12-01T20:00:00Z'
    loser = dict(nn.parked(other['create'][0]), status={})
    loser['metadata']['creationTimestamp'] = '2026-12-01T20:00:01Z'
    assert nn.unsettled_claims([winner, loser]) == ['egressip-w-1']
    entries = [{'node': 'w-0', 'mac': MAC}, {'node': 'w-1', 'mac': '00:50:56:aa:bb:02'}]
    plan = na.plan_nic_addresses(entries, v4(), 200, 'egressip0', snapshot(nodes=nodes, nns=states, nncps=[winner, loser]))
    assert plan['findings'] == [] and plan['create'] == []
    assert plan['reclaim'] == ['egressip-w-1']
    assert [(a['node'], a['address']) for a in plan['allocations']] == [('w-0', '10.20.0.10/24'), ('w-1', '10.20.0.11/24')]
    patches = dict(plan['patch'])
    # the winner is activated; the loser gets the new address and stays parked until its claim is checked
    assert patches['egressip-w-0'] == nn.activation_patch()
    assert patches['egressip-w-1']['metadata']['annotations']['egressip.ocp/addresses'] == '10.20.0.11/24'
    assert 'spec' not in patches['egressip-w-1'] or nn.CLAIM_SELECTOR_KEY not in patches['egressip-w-1']['spec'].get('nodeSelector', {})
    # an active policy holding the address is never re-allocated: a parked one loses to it, older or not
    active = dict(winner, spec=dict(winner['spec'], nodeSelector={'kubernetes.io/hostname': 'w-0'}))
    assert nn.unsettled_claims([active, loser]) == ['egressip-w-1']
    older = dict(loser, metadata=dict(loser['metadata'], creationTimestamp='2026-12-01T19:00:00Z'))
    assert nn.unsettled_claims([older, active]) == ['egressip-w-1']


def test_re_allocating_a_lost_claim_reserves_the_addresses_other_losers_hold():
    """Three writers claimed 10.20.0.10 in the same second: all three lose. When one re-allocates its claim, the other two
    still hold 10.20.0.10 and lose to each other; a run's plan leaves such contested addresses free, but the re-allocation
    must not, or every writer takes 10.20.0.10 again, forever (seen on the twin with three writers under load)."""
    def parked(name):
        item = nn.parked(policy(node=name))
        item['metadata']['creationTimestamp'] = '2026-12-07T08:07:45Z'
        return item
    others = [parked('w-1'), parked('w-2')]
    assert nn.unsettled_claims(others) == ['egressip-w-1', 'egressip-w-2']
    nodes, states = [node('w-0'), node('w-1'), node('w-2')], [state('w-0')]
    entries = [{'node': 'w-0', 'mac': MAC}]
    plan = na.plan_nic_addresses(entries, v4(), 200, 'egressip0', snapshot(nodes=nodes, nns=states, nncps=others))
    assert plan['allocations'][0]['address'] == '10.20.0.10/24', 'a run\'s plan: a parked loser is not an allocation'
    replan = na.plan_nic_addresses(entries, v4(), 200, 'egressip0', snapshot(nodes=nodes, nns=states, nncps=others),
                                   reserve_contested=True)
    assert replan['findings'] == []
    assert replan['allocations'][0]['address'] == '10.20.0.11/24'
