"""The egress-assignable label plan: only labels this collection set (the record beside them) are removed, never a hand-made
one unless force, and never in a way that moves an egress IP the collection does not own (issue 13, section 2)."""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import (
    EGRESS_ASSIGNABLE_LABEL,
    LABEL_RECORD_ANNOTATION,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    REMEDIATED_ANNOTATION,
)
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egress_labels as el

CIDR = '10.20.0.0/24'
SELECTOR = {'node-role.kubernetes.io/worker': ''}
MAC = '00:50:56:aa:bb:01'
RECORD = {LABEL_RECORD_ANNOTATION: MANAGED_BY_VALUE}


def node(name, secondary=None, labelled=False, recorded=False, worker=True):
    annotations = {'k8s.ovn.org/node-primary-ifaddr': json.dumps({'ipv4': '192.168.10.%d/24' % (10 + len(name))}),
                   'k8s.ovn.org/host-cidrs': json.dumps(['192.168.10.%d/24' % (10 + len(name))] + ([secondary] if secondary else []))}
    if recorded:
        annotations.update(RECORD)
    labels = {'kubernetes.io/hostname': name}
    if worker:
        labels['node-role.kubernetes.io/worker'] = ''
    if labelled:
        labels[EGRESS_ASSIGNABLE_LABEL] = ''
    return {'metadata': {'name': name, 'labels': labels, 'annotations': annotations}}


def nns(name, address=None):
    interfaces = []
    if address:
        interfaces.append({'name': 'ens224', 'type': 'ethernet', 'state': 'up', 'mac-address': MAC.upper(),
                           'ipv4': {'enabled': True, 'address': [{'ip': address.split('/')[0], 'prefix-length': 24}]}})
    return {'metadata': {'name': name}, 'status': {'currentState': {'interfaces': interfaces}}}


def eip(name, items, owned=True):
    labels = {MANAGED_BY_LABEL: MANAGED_BY_VALUE} if owned else {}
    return {'metadata': {'name': name, 'labels': labels}, 'status': {'items': [{'node': n, 'egressIP': ip} for n, ip in items]}}


def plan(nodes, egressips=(), **options):
    snapshot = {'nodes': nodes, 'nns': [nns(item['metadata']['name'], secondary) for item, secondary in
                                           ((item, _secondary(item)) for item in nodes)], 'egressips': list(egressips)}
    return el.plan_egress_nodes(SELECTOR, [CIDR], {}, snapshot, **options)


def _secondary(item):
    cidrs = json.loads(item['metadata']['annotations']['k8s.ovn.org/host-cidrs'])
    return next((entry for entry in cidrs if entry.startswith('10.20.')), None)


def ids(findings):
    return [item['id'] for item in findings]


def test_label_patch_writes_the_record_with_the_label_and_removes_both():
    assert el.label_patch(True) == {'metadata': {'labels': {EGRESS_ASSIGNABLE_LABEL: ''}, 'annotations': RECORD}}
    assert el.label_patch(False) == {'metadata': {'labels': {EGRESS_ASSIGNABLE_LABEL: None},
                                                  'annotations': {LABEL_RECORD_ANNOTATION: None}}}
    assert el.record_patch(True) == {'metadata': {'annotations': RECORD}}


def test_a_hand_made_label_outside_the_selector_hosting_a_primary_egress_ip_is_kept():
    """The defect: an infra node labelled by hand, hosting a primary-network egress IP, lost its label on enable."""
    nodes = [node('w-0', '10.20.0.10/24', labelled=True, recorded=True), node('w-1', '10.20.0.11/24'),
             node('infra-0', labelled=True, worker=False)]
    result = plan(nodes, [eip('legacy', [('infra-0', '192.168.10.250')], owned=False)])
    assert result['remove'] == [] and result['add'] == ['w-1']
    assert result['after'] == ['infra-0', 'w-0', 'w-1'] and result['hand_made'] == ['infra-0']
    kept = [item for item in result['findings'] if item['id'] == 'egress_label_set_by_hand']
    assert len(kept) == 1 and kept[0]['severity'] == 'warning' and 'is outside the egress node selector' in kept[0]['message']
    assert 'oc annotate node infra-0 egressip.ocp/egress-assignable=ocp.egressip' in kept[0]['message']
    assert el.label_changes(result) == [('w-1', el.label_patch(True))]


def test_force_removes_a_hand_made_label():
    nodes = [node('w-0', '10.20.0.10/24', labelled=True, recorded=True), node('infra-0', labelled=True, worker=False)]
    result = plan(nodes, force=True)
    assert result['remove'] == ['infra-0'] and 'is removed (force)' in result['findings'][0]['message']


def test_the_collections_label_is_not_removed_when_the_node_hosts_an_egress_ip_it_does_not_own():
    nodes = [node('w-0', '10.20.0.10/24', labelled=True, recorded=True), node('w-1', '10.20.0.11/24', labelled=True, recorded=True),
             node('w-2', labelled=True, recorded=True)]
    primary = eip('legacy', [('w-2', '192.168.10.250')], owned=False)
    result = plan(nodes, [primary])
    assert result['remove'] == ['w-2'] and ids(result['findings']) == ['node_hosts_unowned_egress_ips', 'node_not_capable']
    assert 'would move egress IP 192.168.10.250 of EgressIP legacy' in result['findings'][0]['message']
    secondary_by_hand = eip('by-hand', [('w-2', '10.20.0.230')], owned=False)
    assert ids(plan(nodes, [secondary_by_hand])['findings'])[0] == 'node_hosts_unowned_egress_ips'
    owned_primary = eip('mine', [('w-2', '192.168.10.251')])
    assert ids(plan(nodes, [owned_primary])['findings'])[0] == 'node_hosts_unowned_egress_ips', 'a primary-network IP is never ours'
    assert ids(plan(nodes, [primary], force=True)['findings']) == ['node_not_capable']


def test_absent_removes_only_the_labels_the_collection_set():
    nodes = [node('w-0', '10.20.0.10/24', labelled=True, recorded=True), node('w-1', '10.20.0.11/24', labelled=True)]
    result = plan(nodes, present=False, exclusive=False)
    assert result['remove'] == ['w-0'] and result['after'] == ['w-1'] and result['hand_made'] == ['w-1']
    assert ids(result['findings']) == ['egress_label_set_by_hand'] and 'matches the egress node selector' in result['findings'][0]['message']


def test_a_label_set_by_an_older_release_is_kept_then_adopted_on_request():
    nodes = [node('w-0', '10.20.0.10/24', labelled=True), node('w-1', labelled=True)]
    result = plan(nodes)
    assert (result['add'], result['remove'], result['adopt']) == ([], [], [])
    assert [item['severity'] for item in result['findings'] if item['id'] == 'egress_label_set_by_hand'] == ['warning', 'info']
    adopted = plan(nodes, adopt=True)
    assert adopted['adopt'] == ['w-0'], 'only a capable node of the selector is adopted'
    assert adopted['recorded_after'] == ['w-0'] and el.label_changes(adopted) == [('w-0', el.record_patch(True))]


def test_a_record_whose_label_was_removed_by_hand_is_dropped():
    nodes = [node('w-0', '10.20.0.10/24', labelled=True, recorded=True), node('w-1', recorded=True)]
    result = plan(nodes)
    assert result['forget'] == ['w-1'] and el.label_changes(result) == [('w-1', el.record_patch(False))]
    assert result['recorded_before'] == ['w-0', 'w-1'] and result['recorded_after'] == ['w-0']


def test_absent_also_removes_the_remediations_record_and_present_keeps_it_for_the_hold_down():
    remediated = {REMEDIATED_ANNOTATION: '2026-12-03T12:13:20Z'}
    labelled = node('w-0', '10.20.0.10/24', labelled=True, recorded=True)
    unlabelled = node('w-1', '10.20.0.11/24', recorded=True)  # the guard removed its label; the record stays
    spare = node('w-2', '10.20.0.12/24')  # an idle node a remediation unlabelled, its record since dropped
    for item in (labelled, unlabelled, spare):
        item['metadata']['annotations'].update(remediated)
    kept = plan([labelled, unlabelled, spare], exclusive=False)
    assert kept['remediated_after'] == ['w-0', 'w-1', 'w-2']
    assert all(REMEDIATED_ANNOTATION not in body['metadata']['annotations'] for _name, body in el.label_changes(kept))
    gone = plan([labelled, unlabelled, spare], present=False, exclusive=False)
    assert (gone['remediated_before'], gone['remediated_after']) == (['w-0', 'w-1', 'w-2'], [])
    changes = dict(el.label_changes(gone))
    assert sorted(changes) == ['w-0', 'w-1', 'w-2']
    assert changes['w-0']['metadata'] == {'labels': {EGRESS_ASSIGNABLE_LABEL: None},
                                          'annotations': {LABEL_RECORD_ANNOTATION: None, REMEDIATED_ANNOTATION: None}}
    assert changes['w-1']['metadata'] == {'annotations': {LABEL_RECORD_ANNOTATION: None, REMEDIATED_ANNOTATION: None}}
    assert changes['w-2']['metadata'] == {'annotations': {REMEDIATED_ANNOTATION: None}}
    assert el.label_changes(plan([node('w-0', '10.20.0.10/24', labelled=True, recorded=True)], present=False, exclusive=False)) == [
        ('w-0', el.label_patch(False))], 'no remediation record: the patch is as before'


def test_deleted_egressips_hold_no_label_back():
    nodes = [node('w-0', '10.20.0.10/24', labelled=True, recorded=True)]
    payments = eip('payments', [('w-0', '10.20.0.200')])
    assert ids(plan(nodes, [payments], present=False, exclusive=False)['findings']) == ['node_hosts_egress_ips']
    assert plan(nodes, [payments], present=False, exclusive=False, deleted=['payments'])['findings'] == []


def test_owned_egress_ips_still_need_a_capable_replacement():
    nodes = [node('w-0', labelled=True, recorded=True), node('w-1', '10.20.0.11/24', labelled=True, recorded=True)]
    result = plan(nodes, [eip('payments', [('w-0', '10.20.0.200'), ('w-1', '10.20.0.201')])])
    assert 'node_hosts_egress_ips' in ids(result['findings'])
