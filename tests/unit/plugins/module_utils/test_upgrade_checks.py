"""Upgrade checks (pure): versions, capacity during rolling reboots, NMState and forwarding, post and collection phases."""

import json

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.model import lifecycle as _lifecycle
from ansible_collections.ocp.egressip.plugins.module_utils.checks import upgrade as _upgrade

import _hand_made_snapshots as hm  # pylint: disable=wrong-import-order

CIDR = '10.30.0.0/24'


def ids(findings):
    return [item['id'] for item in findings]


def pool(name, selector, max_unavailable=None, machines=None):
    spec = {'nodeSelector': {'matchLabels': selector}}
    if max_unavailable is not None:
        spec['maxUnavailable'] = max_unavailable
    return {'metadata': {'name': name}, 'spec': spec, 'status': {'machineCount': machines} if machines else {}}


WORKER_POOL = pool('worker', {'node-role.kubernetes.io/worker': ''})


@pytest.mark.parametrize('current, target, expected', [
    ('4.16.3', '4.17.1', []),
    ('4.16.3', None, ['upgrade_target_version_unknown']),
    ('4.16.3', '4.13.9', ['upgrade_target_version_unsupported']),
    ('4.16.3', '4.16.1', ['upgrade_target_version_unsupported']),
    ('4.16.3', 'latest', ['upgrade_target_version_unsupported']),
])
def test_target_version(current, target, expected):
    assert ids(_upgrade.version_findings(current, target, 'test')) == expected


def test_target_from_cluster_version_desired_update():
    snap = hm.adopted()
    snap['cluster_version']['spec'] = {'desiredUpdate': {'version': '4.17.2'}}
    assert _upgrade.target_version(snap, None) == ('4.17.2', 'ClusterVersion spec.desiredUpdate')
    assert _upgrade.target_version(snap, '4.18.0')[0] == '4.18.0'


@pytest.mark.parametrize('value, total, expected', [(None, 5, 1), ('', 5, 1), (2, 5, 2), ('2', 5, 2), ('50%', 5, 2), ('10%', 5, 1),
                                                    (0, 5, 1), ('100%', 3, 3)])
def test_max_unavailable_as_the_machine_config_operator_reads_it(value, total, expected):
    assert _upgrade.scaled(value, total) == expected


def test_a_custom_pool_rolls_its_nodes_before_worker():
    snap = hm.adopted()
    worker0 = hm.node_by_name(snap, 'ocp1-worker-0')
    worker0['metadata']['labels']['node-role.kubernetes.io/egress'] = ''
    pools = [WORKER_POOL, pool('egress', {'node-role.kubernetes.io/egress': ''}, 1)]
    assert _upgrade.pool_of(worker0, pools)['metadata']['name'] == 'egress'
    capable = _upgrade.capable_nodes(snap, CIDR)
    count, rows, findings = _upgrade.rebooting_at_once(capable, snap['nodes'], pools)
    assert count == 2 and findings == []
    assert [(row['pool'], row['egress_nodes'], row['rebooting_at_once']) for row in rows] == [('egress', 1, 1), ('worker', 2, 1)]


def test_pools_not_readable_fall_back_to_the_default_and_say_so():
    capable = _upgrade.capable_nodes(hm.adopted(), CIDR)
    count, _rows, findings = _upgrade.rebooting_at_once(capable, [], None, default=1)
    assert count == 1 and ids(findings) == ['upgrade_pools_not_read']
    assert _upgrade.rebooting_at_once(capable, [], None, override='2')[0] == 2


def test_capacity_during_rolling_reboots():
    snap = hm.adopted()
    result = _upgrade.pre(snap, [pool('worker', {'node-role.kubernetes.io/worker': ''}, 1)], CIDR, target='4.17.1')
    rows = dict((row['egressip'], row) for row in result['capacity'])
    assert (rows['payments']['capable'], rows['payments']['rebooting_at_once'], rows['payments']['needed']) == (3, 1, 3)
    assert not rows['payments']['ok'] and rows['reports']['ok']
    found = [item for item in result['findings'] if item['id'] == 'upgrade_capacity_insufficient']
    assert len(found) == 1 and 'EgressIP payments has 2 IP(s); of 3 capable egress node(s) up to 1 reboot at once' in found[0]['message']
    hm.node_by_name(snap, 'ocp1-worker-3')['metadata']['labels'][hm.ASSIGNABLE] = ''
    hm.node_by_name(snap, 'ocp1-worker-3')['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(
        ['10.30.0.14/24', '192.168.10.17/24'])
    assert 'upgrade_capacity_insufficient' not in ids(_upgrade.pre(snap, [WORKER_POOL], CIDR, target='4.17.1')['findings'])
    two = _upgrade.pre(snap, [pool('worker', {'node-role.kubernetes.io/worker': ''}, '50%', machines=4)], CIDR, target='4.17.1')
    assert 'upgrade_capacity_insufficient' in ids(two['findings'])


def test_nmstate_and_forwarding_in_place():
    result = _upgrade.pre(hm.adopted(), [WORKER_POOL], CIDR, objects=[{'name': 'reports', 'egress_ips': ['10.30.0.210']}], target='4.17.1')
    assert result['findings'] == [], result['findings']
    assert sorted(result['egress_nodes'][0]['policies']) == ['egressip-ocp1-worker-0', 'ocp1-worker-0-egress']


def test_hand_made_address_and_missing_forwarding_are_reported():
    snap = hm.hand_made()
    snap['tuneds'] = snap['tuneds'][:1]
    findings = _upgrade.pre(snap, [WORKER_POOL], CIDR, objects=[{'name': 'reports', 'egress_ips': ['10.30.0.210']}], target='4.17.1')['findings']
    assert set(ids(findings)) == {'upgrade_address_not_persistent', 'node_ip_forwarding_off', 'upgrade_capacity_insufficient'}
    assert [item['severity'] for item in findings if item['id'] == 'node_ip_forwarding_off'] == ['error']
    external = _upgrade.pre(snap, [WORKER_POOL], CIDR, objects=[{'name': 'reports', 'egress_ips': ['10.30.0.210']}], target='4.17.1',
                            ip_forwarding='external')['findings']
    assert [item['severity'] for item in external if item['id'] == 'node_ip_forwarding_off'] == ['warning']


def test_policy_not_available_and_nmstate_missing_are_errors():
    snap = hm.adopted()
    snap['nncps'][3]['status']['conditions'][0]['status'] = 'False'
    assert 'upgrade_nmstate_not_ready' in ids(_upgrade.pre(snap, [WORKER_POOL], CIDR, target='4.17.1')['findings'])
    snap = hm.adopted()
    snap['nmstates'] = None
    found = [item for item in _upgrade.pre(snap, [WORKER_POOL], CIDR, target='4.17.1')['findings'] if item['id'] == 'upgrade_nmstate_not_ready']
    assert 'API is not served' in found[0]['message']


def test_post_reports_moves_as_info_and_losses_as_errors():
    snap = hm.adopted()
    baseline = _lifecycle.record(snap)
    snap['egressips'][0]['status']['items'][0]['node'] = 'ocp1-worker-2'
    snap['cluster_version']['status']['desired']['version'] = '4.17.1'
    result = _upgrade.post(snap, baseline, CIDR)
    severities = dict((item['id'], item['severity']) for item in result['findings'])
    assert severities == {'lifecycle_egress_ip_moved': 'info', 'upgrade_version_changed': 'info'}
    snap['egressips'][1]['status']['items'] = []
    hm.node_by_name(snap, 'ocp1-worker-1')['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(['192.168.10.15/24'])
    severities = dict((item['id'], item['severity']) for item in _upgrade.post(snap, baseline, CIDR)['findings'])
    assert severities['lifecycle_egress_ip_unassigned'] == 'error' and severities['lifecycle_address_dropped'] == 'error'


def test_post_names_an_uneven_spread_only_after_moves():
    snap = hm.adopted()
    baseline = _lifecycle.record(snap)
    assert 'upgrade_placement_skewed' not in ids(_upgrade.post(snap, baseline, CIDR)['findings'])
    for item in snap['egressips']:
        for entry in item['status']['items']:
            entry['node'] = 'ocp1-worker-2' if entry['egressIP'] != '10.30.0.201' else 'ocp1-worker-1'
    assert 'upgrade_placement_skewed' in ids(_upgrade.post(snap, baseline, CIDR)['findings'])


def test_collection_phase_lists_marked_objects_and_flags_missing_marks():
    snap = hm.adopted()
    del snap['nncps'][3]['metadata']['annotations']['egressip.ocp/addresses']
    result = _upgrade.collection(snap)
    assert ids(result['findings']) == ['upgrade_marked_object_incomplete', 'upgrade_managed_objects']
    assert 'egressip-ocp1-worker-0' in result['findings'][0]['message']
    moved = hm.adopted()
    moved['egressips'][0]['status']['items'][0]['node'] = 'ocp1-worker-2'
    after = _upgrade.collection(moved, _lifecycle.record(snap))
    assert [item['severity'] for item in after['findings'] if item['id'] == 'lifecycle_egress_ip_moved'] == ['error']


CIDR6 = 'fd00:30::/64'


def _dual_stack(snap):
    """The adopted cluster with an IPv6 family on the secondary NIC: host-cidrs of both families, payments mixing them."""
    for node in snap['nodes']:
        cidrs = json.loads(node['metadata']['annotations'].get('k8s.ovn.org/host-cidrs') or '[]')
        secondary = [entry for entry in cidrs if entry.startswith('10.30.0.')]
        if secondary:
            host = int(secondary[0].split('/')[0].rsplit('.', 1)[1])
            node['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(cidrs + ['fd00:30::%x/64' % host])
    payments = next(item for item in snap['egressips'] if item['metadata']['name'] == 'payments')
    payments['spec']['egressIPs'].append('fd00:30::200')
    return snap


def test_dual_stack_objects_mixing_the_families_count_and_ipv6_forwarding_is_checked():
    snap = _dual_stack(hm.adopted())
    counted = dict(_upgrade.egress_objects(snap, CIDR, None, CIDR6))
    assert counted['payments'] == 3 and 'payments' not in dict(_upgrade.egress_objects(snap, CIDR, None))  # IPv4 alone skips it
    # a profile that forwards IPv4 only leaves IPv6 forwarding on: Linux forwards IPv6 by net.ipv6.conf.all.forwarding
    # alone, which ovnkube-node sets to 1 on a cluster with IPv6 (the per-interface IPv6 key does not forward)
    assert 'node_ip_forwarding_off' not in ids(_upgrade.pre(snap, [WORKER_POOL], CIDR, target='4.17.1', ipv6_cidr=CIDR6)['findings'])
    ours = next(item for item in snap['tuneds'] if item['metadata']['name'] == 'egressip-forwarding')
    ours['spec']['profile'][0]['data'] += 'net.ipv6.conf.all.forwarding=0\n'
    result = _upgrade.pre(snap, [WORKER_POOL], CIDR, target='4.17.1', ipv6_cidr=CIDR6)
    found = [item for item in result['findings'] if item['id'] == 'node_ip_forwarding_off']
    assert len(found) == 1 and found[0]['severity'] == 'error' and '(IPv6)' in found[0]['message'] and '(IPv4)' not in found[0]['message']
    assert sorted(item['name'] for item in found[0]['objects']) == sorted(row['node'] for row in result['egress_nodes'])
    assert 'node_ip_forwarding_off' not in ids(_upgrade.pre(snap, [WORKER_POOL], CIDR, target='4.17.1')['findings'])  # IPv4 only


def test_post_compares_ipv6_egress_ips_and_addresses_too():
    before = _dual_stack(hm.adopted())
    for item in before['egressips']:
        if item['metadata']['name'] == 'payments':
            item.setdefault('status', {}).setdefault('items', []).append({'egressIP': 'fd00:30::200', 'node': 'ocp1-worker-0'})
    baseline = _lifecycle.record(before)
    after = hm.clone(before)
    worker = hm.node_by_name(after, 'ocp1-worker-0')
    cidrs = json.loads(worker['metadata']['annotations']['k8s.ovn.org/host-cidrs'])
    worker['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps([entry for entry in cidrs if ':' not in entry])
    payments = next(item for item in after['egressips'] if item['metadata']['name'] == 'payments')
    payments['status']['items'] = [item for item in payments['status']['items'] if item['egressIP'] != 'fd00:30::200']
    comparison = _upgrade.post(after, baseline, CIDR)['comparison']
    assert comparison['unassigned'] == [{'egressip': 'payments', 'ip': 'fd00:30::200', 'from': 'ocp1-worker-0'}]
    assert [row['address'] for row in comparison['dropped_addresses']] == [entry for entry in cidrs if ':' in entry]
    assert comparison['ok'] is False
