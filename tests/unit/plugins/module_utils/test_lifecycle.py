"""Lifecycle records and comparisons (pure): what a record holds, every kind of change, and the findings."""

import copy
import json

from ansible_collections.ocp.egressip.plugins.module_utils.model import lifecycle as _lifecycle

import _hand_made_snapshots as hm  # pylint: disable=wrong-import-order


def test_record_holds_assignment_addresses_labels_and_marked_objects():
    record = _lifecycle.record(hm.adopted())
    assert record['format'] == 1 and record['cluster'] == 'ocp1-abcde' and record['openshift_version'] == '4.16.3'
    assert record['egress_ips'] == [
        {'egressip': 'egressip-legacy', 'ip': '192.168.10.250', 'node': 'ocp1-worker-0', 'network': 'primary'},
        {'egressip': 'payments', 'ip': '10.30.0.200', 'node': 'ocp1-worker-0', 'network': 'secondary'},
        {'egressip': 'payments', 'ip': '10.30.0.201', 'node': 'ocp1-worker-1', 'network': 'secondary'},
        {'egressip': 'reports', 'ip': '10.30.0.210', 'node': 'ocp1-worker-1', 'network': 'secondary'}]
    worker2 = next(row for row in record['nodes'] if row['node'] == 'ocp1-worker-2')
    assert worker2 == {'node': 'ocp1-worker-2', 'addresses': ['10.30.0.13/24', '192.168.10.16/24'], 'egress_assignable': True}
    assert {'kind': 'Tuned', 'name': 'egressip-forwarding', 'namespace': 'openshift-cluster-node-tuning-operator'} in record['managed_objects']
    assert [item['name'] for item in record['managed_objects'] if item['kind'] == 'EgressIP'] == ['payments', 'reports']
    assert _lifecycle.record(hm.adopted()) == record, 'deterministic'
    assert _lifecycle.valid_record(json.loads(json.dumps(record))) == []


def test_identical_records_compare_ok_with_no_change():
    record = _lifecycle.record(hm.hand_made())
    comparison = _lifecycle.compare(record, copy.deepcopy(record))
    assert comparison['ok'] and _lifecycle.changes_text(comparison) == []
    assert _lifecycle.comparison_findings(comparison, 'x') == []


def test_every_kind_of_change_is_found():
    before = _lifecycle.record(hm.hand_made())
    snap = hm.hand_made()
    items = snap['egressips']
    items[0]['status']['items'] = [{'node': 'ocp1-worker-2', 'egressIP': '10.30.0.200'}]      # .200 moved, .201 unassigned
    items[1]['spec']['egressIPs'] = ['10.30.0.211']                                            # .210 removed, .211 added
    items[1]['status']['items'] = [{'node': 'ocp1-worker-1', 'egressIP': '10.30.0.211'}]
    worker0 = hm.node_by_name(snap, 'ocp1-worker-0')
    worker0['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(['192.168.10.14/24'])
    del worker0['metadata']['labels'][hm.ASSIGNABLE]
    hm.node_by_name(snap, 'ocp1-worker-2')['metadata']['labels'][hm.ASSIGNABLE] = ''
    snap['nodes'] = [item for item in snap['nodes'] if item['metadata']['name'] != 'ocp1-worker-3']
    comparison = _lifecycle.compare(before, _lifecycle.record(snap))
    assert not comparison['ok']
    assert comparison['moved'] == [{'egressip': 'payments', 'ip': '10.30.0.200', 'from': 'ocp1-worker-0', 'to': 'ocp1-worker-2',
                                    'network': 'secondary'}]
    assert comparison['unassigned'] == [{'egressip': 'payments', 'ip': '10.30.0.201', 'from': 'ocp1-worker-1'}]
    assert comparison['removed'] == [{'egressip': 'reports', 'ip': '10.30.0.210'}]
    assert comparison['added'] == [{'egressip': 'reports', 'ip': '10.30.0.211'}]
    assert comparison['dropped_addresses'] == [{'node': 'ocp1-worker-0', 'address': '10.30.0.11/24'}]
    assert comparison['nodes_gone'] == ['ocp1-worker-3']
    assert comparison['labels_removed'] == ['ocp1-worker-0'] and comparison['labels_added'] == ['ocp1-worker-2']
    found = dict((item['id'], item) for item in _lifecycle.comparison_findings(comparison, 'during the test'))
    assert set(found) == {'lifecycle_egress_ip_moved', 'lifecycle_egress_ip_unassigned', 'lifecycle_egress_ip_removed',
                          'lifecycle_address_dropped', 'lifecycle_label_removed'}
    assert found['lifecycle_egress_ip_moved']['severity'] == 'error'
    assert 'payments 10.30.0.200 from ocp1-worker-0 to ocp1-worker-2' in found['lifecycle_egress_ip_moved']['message']
    assert 'ocp1-worker-3 is gone' in found['lifecycle_address_dropped']['message']
    relaxed = _lifecycle.comparison_findings(comparison, 'x', moved_severity='info', removed_severity='warning')
    assert dict((item['id'], item['severity']) for item in relaxed)['lifecycle_egress_ip_moved'] == 'info'


def test_new_assignment_is_not_a_problem():
    snap = hm.hand_made()
    snap['egressips'][1]['status']['items'] = []
    before = _lifecycle.record(snap)
    comparison = _lifecycle.compare(before, _lifecycle.record(hm.hand_made()))
    assert comparison['ok'] and comparison['newly_assigned'] == [{'egressip': 'reports', 'ip': '10.30.0.210', 'to': 'ocp1-worker-1'}]
    assert _lifecycle.changes_text(comparison) == ['newly assigned: reports 10.30.0.210 on ocp1-worker-1']


def test_invalid_baselines_are_named():
    assert _lifecycle.valid_record(None) == ['it is not a mapping']
    assert _lifecycle.valid_record({'format': 2, 'egress_ips': []}) == ['its format is 2, not 1', 'it has no nodes list']
