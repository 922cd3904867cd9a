"""Deleting an EgressIP whose IPs are assigned stops the traffic they carry: refused unless force, and listed either way."""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.model import egressip_facts as facts
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egressips as egressip

OWNED = {'egressip.ocp/managed-by': 'ocp.egressip'}


def obj(name, status=(), labels=None):
    return {'metadata': {'name': name, 'labels': dict(OWNED if labels is None else labels)},
            'spec': {'egressIPs': [ip for ip, _node in status] or ['10.20.0.250'], 'namespaceSelector': {'matchLabels': {'a': 'b'}}},
            'status': {'items': [{'egressIP': ip, 'node': node} for ip, node in status]}}


def test_absent_and_exclusive_deletes_of_assigned_objects_are_refused_without_force():
    existing = {'payments': obj('payments', [('10.20.0.200', 'w-0'), ('10.20.0.201', 'w-1')]), 'idle': obj('idle')}
    changes, _refusals = egressip.plan_changes([], existing, 'present', True, False)
    stops, refusals = egressip.delete_guard(changes, force=False)
    assert stops == [{'egressip': 'payments', 'ip': '10.20.0.200', 'node': 'w-0'}, {'egressip': 'payments', 'ip': '10.20.0.201', 'node': 'w-1'}]
    assert [item['id'] for item in refusals] == ['egressip_delete_assigned']
    assert refusals[0]['message'] == ('deleting EgressIP payments would stop the traffic its assigned egress IP(s) carry: '
                                      '10.20.0.200 on w-0, 10.20.0.201 on w-1.')
    assert egressip.delete_guard(changes, force=True) == (stops, [])
    changes, _refusals = egressip.plan_changes([{'name': 'idle'}], existing, 'absent', False, False)
    assert egressip.delete_guard(changes, force=False) == ([], []), 'an object with no IP assigned carries nothing'


def node(name, primary='192.168.10.11/24', secondary='10.20.0.10/24'):
    return {'metadata': {'name': name, 'annotations': {
        'k8s.ovn.org/node-primary-ifaddr': json.dumps({'ipv4': primary}),
        'k8s.ovn.org/host-cidrs': json.dumps([primary, secondary])}}}


def test_unowned_on_node_names_primary_network_and_hand_made_egress_ips():
    egressips = [obj('payments', [('10.20.0.200', 'w-0')]), obj('legacy', [('192.168.10.250', 'w-0')], labels={}),
                 obj('by-hand', [('10.20.0.230', 'w-0')], labels={}), obj('elsewhere', [('192.168.10.251', 'w-1')], labels={})]
    assert facts.unowned_on_node(node('w-0'), egressips) == [
        ('by-hand', '10.20.0.230', 'object not created by this collection'), ('legacy', '192.168.10.250', 'primary network')]
    assert facts.unowned_on_node(node('w-2'), egressips) == []
