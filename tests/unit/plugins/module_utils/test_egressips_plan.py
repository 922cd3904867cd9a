"""The pure plan of the EgressIP objects (plan/egressips.py): desired objects, managed views, the write plan, gaps explained."""

from ansible_collections.ocp.egressip.plugins.module_utils.plan import egressips as egressip

OWNED = {'egressip.ocp/managed-by': 'ocp.egressip'}


def entry(name='payments', ips=('10.20.0.200', '10.20.0.201'), **extra):
    result = {'name': name, 'egress_ips': list(ips), 'namespace_selector': {'matchLabels': {'team': name}}, 'pod_selector': None}
    result.update(extra)
    return result


def existing(name='payments', ips=('10.20.0.200', '10.20.0.201'), labels=None, status=(), **spec):
    body = {'egressIPs': list(ips), 'namespaceSelector': {'matchLabels': {'team': name}}}
    body.update(spec)
    return {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP',
            'metadata': {'name': name, 'labels': dict(OWNED if labels is None else labels), 'annotations': {'k8s.ovn.org/egressip-mark': '50000'}},
            'spec': body, 'status': {'items': [{'egressIP': ip, 'node': node} for ip, node in status]}}


def actions(changes):
    return [(change['name'], change['action']) for change in changes]


def test_desired_object_has_the_label_and_canonical_ips():
    body = egressip.desired_object(entry(ips=['FD00::0:200'], pod_selector={'matchLabels': {'app': 'x'}}))
    assert body['metadata'] == {'name': 'payments', 'labels': OWNED}
    assert body['spec'] == {'egressIPs': ['fd00::200'], 'namespaceSelector': {'matchLabels': {'team': 'payments'}},
                            'podSelector': {'matchLabels': {'app': 'x'}}}
    assert 'status' not in body


def test_managed_view_keeps_only_the_label_and_spec():
    view = egressip.managed_view(existing(labels={'other': 'x', 'egressip.ocp/managed-by': 'ocp.egressip'}, status=[('10.20.0.200', 'w0')]))
    assert view == {'metadata': {'labels': OWNED},
                    'spec': {'egressIPs': ['10.20.0.200', '10.20.0.201'], 'namespaceSelector': {'matchLabels': {'team': 'payments'}}}}
    assert egressip.managed_view(None) is None


def test_create_update_none():
    changes, refusals = egressip.plan_changes([entry(), entry('billing', ['10.20.0.210'])],
                                              {'payments': existing()}, 'present', False, False)
    assert refusals == [] and actions(changes) == [('billing', 'create')]
    changes, _refusals = egressip.plan_changes([entry(ips=['10.20.0.201', '10.20.0.200'])], {'payments': existing()}, 'present', False, False)
    assert changes == []  # order alone is not a change


def test_update_patch_is_spec_only_and_removes_what_the_entry_lacks():
    current = existing(podSelector={'matchLabels': {'app': 'old'}},
                       namespaceSelector={'matchLabels': {'team': 'payments'}, 'matchExpressions': [{'key': 'a', 'operator': 'Exists'}]})
    [change], _refusals = egressip.plan_changes([entry(ips=['10.20.0.200'])], {'payments': current}, 'present', False, False)
    assert change['action'] == 'update'
    assert change['patch'] == {'spec': {'egressIPs': ['10.20.0.200'], 'podSelector': None,
                                        'namespaceSelector': {'matchExpressions': None}}}
    assert change['drops_ips']


def test_objects_made_by_hand_are_refused_or_adopted():
    changes, refusals = egressip.plan_changes([entry()], {'payments': existing(labels={})}, 'present', False, False)
    assert changes == [] and [item['id'] for item in refusals] == ['egressip_not_owned']
    assert 'objects[0].name payments' in refusals[0]['message']
    [change], refusals = egressip.plan_changes([entry()], {'payments': existing(labels={})}, 'present', False, True)
    assert refusals == [] and change['action'] == 'adopt'
    assert change['patch'] == {'metadata': {'labels': OWNED}}


def test_exclusive_deletes_owned_objects_only_and_orders_the_writes():
    current = {'payments': existing(), 'old': existing('old', ['10.20.0.230']), 'hand': existing('hand', ['10.20.0.240'], labels={}),
               'billing': existing('billing', ['10.20.0.210'])}
    changes, refusals = egressip.plan_changes(
        [entry('billing', ['10.20.0.210', '10.20.0.201']), entry(ips=['10.20.0.200']), entry('new', ['10.20.0.250'])],
        current, 'present', True, False)
    assert refusals == []
    # deletes, then updates freeing IPs, then other updates, then creates
    assert actions(changes) == [('old', 'delete'), ('payments', 'update'), ('billing', 'update'), ('new', 'create')]


def test_absent():
    current = {'payments': existing(), 'hand': existing('hand', labels={})}
    changes, refusals = egressip.plan_changes([{'name': 'payments'}, {'name': 'gone'}, {'name': 'hand'}], current, 'absent', False, False)
    assert actions(changes) == [('payments', 'delete')] and [item['id'] for item in refusals] == ['egressip_not_owned']


def test_diff_of_uses_one_view_for_both_sides():
    current = {'payments': existing(), 'old': existing('old', ['10.20.0.230'])}
    changes, _refusals = egressip.plan_changes([entry(ips=['10.20.0.200'])], current, 'present', True, False)
    diff = egressip.diff_of(changes)
    assert diff['before']['old']['spec']['egressIPs'] == ['10.20.0.230'] and diff['after']['old'] is None
    assert diff['after']['payments']['spec']['egressIPs'] == ['10.20.0.200']


def test_explain_gaps_quotes_the_events_of_the_object():
    gaps = [{'egressip': 'payments', 'ip': '10.20.0.201', 'node': None, 'problem': 'unassigned'},
            {'egressip': 'payments', 'ip': '10.20.0.202', 'node': 'w1', 'problem': 'node_lacks_network'}]
    events = [{'involvedObject': {'kind': 'EgressIP', 'name': 'payments'}, 'type': 'Warning', 'reason': 'UnassignedRequest',
               'message': 'Not all egress IPs for EgressIP: payments could be assigned, please tag more nodes', 'count': 3,
               'lastTimestamp': '2026-01-01T00:00:02Z'},
              {'involvedObject': {'kind': 'EgressIP', 'name': 'other'}, 'type': 'Warning', 'reason': 'NoMatchingNodeFound',
               'message': 'x', 'count': 1},
              {'involvedObject': {'kind': 'Pod', 'name': 'payments'}, 'type': 'Warning', 'reason': 'BackOff', 'message': 'y'}]
    explained, [finding] = egressip.explain_gaps(gaps, events)
    assert [item['reason'] for item in explained[0]['events']] == ['UnassignedRequest']
    assert finding['id'] == 'egressip_unassigned'
    assert finding['message'] == ('EgressIP payments: 10.20.0.201 is not assigned to any node; 10.20.0.202 is assigned to node w1, '
                                  'whose host-cidrs do not hold its network. Events: UnassignedRequest (x3): Not all egress IPs '
                                  'for EgressIP: payments could be assigned, please tag more nodes.')
    assert {'kind': 'Node', 'name': 'w1'} in finding['objects']
    _explained, [quiet] = egressip.explain_gaps([dict(gaps[0], egressip='silent')], events)
    assert 'Events: none recorded for this object' in quiet['message']
