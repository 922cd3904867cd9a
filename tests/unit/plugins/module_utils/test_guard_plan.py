"""plan/guard.py: the state of each EgressIP from a verification, the Events a round writes, the status ConfigMap."""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard

NOW = '2026-12-03T07:40:00Z'
LATER = '2026-12-03T07:41:00Z'


def row(egressip, ip, node, status='ok'):
    return {'egressip': egressip, 'ip': ip, 'node': node, 'status': status}


def finding(ident, message, objects, severity='error', remedy='Do this.'):
    return {'id': ident, 'severity': severity, 'message': message, 'remedy': remedy, 'objects': objects}


def verification(rows, findings=(), errors=0, warnings=0):
    return {'summary': {'ok': not errors, 'egress_ips': len(rows), 'errors': errors, 'warnings': warnings},
            'egress_ips': rows, 'findings': list(findings)}


BLACKHOLE = verification(
    [row('payments', '10.20.0.200', 'w-0', 'blackhole'), row('payments', '10.20.0.201', 'w-1'),
     row('billing', '10.20.0.210', 'w-2'), row('audit', '10.20.0.220', None, 'unassigned'),
     row('remote', '10.20.0.230', 'w-3', 'path_not_checked')],
    [finding('blackhole_nic_disconnected', 'The vNIC of node w-0 is disconnected.', [{'kind': 'Node', 'name': 'w-0'}]),
     finding('egressip_unassigned', 'EgressIP audit: 10.20.0.220 on no node.', [{'kind': 'EgressIP', 'name': 'audit'}]),
     finding('egressip_single_point_of_failure', 'billing has one capable node.', [{'kind': 'EgressIP', 'name': 'billing'}],
             severity='warning'),
     finding('egress_nodes_summary', 'info only', [], severity='info')],
    errors=2, warnings=1)


def test_each_object_gets_its_worst_state_and_the_findings_that_name_it_or_its_nodes():
    states = guard.object_states(BLACKHOLE)
    assert dict((name, entry['state']) for name, entry in states.items()) == {
        'payments': 'blackhole', 'audit': 'unassigned', 'billing': 'capacity_low', 'remote': 'unknown'}
    assert [item['id'] for item in states['payments']['findings']] == ['blackhole_nic_disconnected']
    assert states['payments']['nodes'] == ['w-0', 'w-1'] and states['payments']['ips'] == ['10.20.0.200', '10.20.0.201']
    assert [item['id'] for item in states['billing']['findings']] == ['egressip_single_point_of_failure']


def test_a_capacity_finding_naming_no_object_concerns_every_object():
    result = verification([row('payments', '10.20.0.200', 'w-0'), row('billing', '10.20.0.210', 'w-1')],
                          [finding('egress_nodes_capacity_insufficient', 'Two capable nodes, three needed.', [{'kind': 'Node', 'name': 'w-5'}],
                                   severity='warning')])
    assert set(entry['state'] for entry in guard.object_states(result).values()) == {'capacity_low'}


def test_first_round_creates_warnings_for_bad_states_only_and_core_v1_events_for_cluster_scoped_objects():
    states = guard.object_states(BLACKHOLE)
    plan = guard.plan_round(states, {}, {'payments': 'uid-1'}, NOW, 0x18b2c6d1e0f4a000, instance='guard-pod')
    created = dict((body['involvedObject']['name'], body) for body in plan['create'])
    assert sorted(created) == ['audit', 'billing', 'payments'], 'remote is unknown: no Event; nothing healthy to announce'
    event = created['payments']
    assert event['metadata']['namespace'] == 'default' and 'eventTime' not in event
    assert event['involvedObject'] == {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'name': 'payments', 'uid': 'uid-1'}
    assert 'namespace' not in event['involvedObject']
    assert (event['type'], event['reason'], event['count']) == ('Warning', 'EgressIPBlackhole', 1)
    assert event['firstTimestamp'] == event['lastTimestamp'] == NOW and event['reportingInstance'] == 'guard-pod'
    assert 'w-0' in event['message'] and 'Fix: Do this.' in event['message']
    assert (created['audit']['reason'], created['billing']['reason']) == ('EgressIPUnassigned', 'EgressIPCapacityLow')
    assert len(set(body['metadata']['name'] for body in plan['create'])) == 3, 'one name per Event'
    assert plan['objects']['payments'] == {'state': 'blackhole', 'since': NOW, 'checked': True, 'event': event['metadata']['name'],
                                           'count': 1}
    assert plan['objects']['remote'] == {'state': 'unknown', 'since': NOW, 'checked': False}
    assert plan['raise'] == []


def test_a_lasting_state_raises_the_same_event_and_a_recovery_says_healthy_once():
    first = guard.plan_round(guard.object_states(BLACKHOLE), {}, {}, NOW, 1000)
    second = guard.plan_round(guard.object_states(BLACKHOLE), first['objects'], {}, LATER, 2000)
    assert second['create'] == []
    assert sorted((name, patch) for name, patch, _egressip, _entry in
                  [(item[0], json.dumps(item[1], sort_keys=True), item[2], item[3]) for item in second['raise']]) == sorted(
        (first['objects'][name]['event'], json.dumps({'count': 2, 'lastTimestamp': LATER}, sort_keys=True)) for name in ('audit', 'billing', 'payments'))
    assert second['objects']['payments']['since'] == NOW and second['objects']['payments']['count'] == 2
    healthy = verification([row('payments', '10.20.0.200', 'w-1'), row('payments', '10.20.0.201', 'w-2'),
                            row('billing', '10.20.0.210', 'w-2'), row('audit', '10.20.0.220', 'w-0'),
                            row('remote', '10.20.0.230', 'w-3', 'path_not_checked')])
    third = guard.plan_round(guard.object_states(healthy), second['objects'], {}, LATER, 3000)
    assert sorted((body['involvedObject']['name'], body['type'], body['reason']) for body in third['create']) == [
        ('audit', 'Normal', 'EgressIPHealthy'), ('billing', 'Normal', 'EgressIPHealthy'), ('payments', 'Normal', 'EgressIPHealthy')]
    assert 'healthy again' in third['create'][0]['message']
    fourth = guard.plan_round(guard.object_states(healthy), third['objects'], {}, LATER, 4000)
    assert fourth['create'] == [] and fourth['raise'] == [], 'healthy stays quiet'


def test_unknown_keeps_the_last_known_state_so_a_blackhole_seen_again_is_not_announced_twice():
    first = guard.plan_round(guard.object_states(BLACKHOLE), {}, {}, NOW, 1000)
    blind = verification([row('payments', '10.20.0.200', 'w-0', 'path_not_checked')])
    second = guard.plan_round(guard.object_states(blind), first['objects'], {}, LATER, 2000)
    assert second['create'] == [] and second['raise'] == []
    assert second['objects']['payments'] == dict(first['objects']['payments'], checked=False)
    third = guard.plan_round(guard.object_states(BLACKHOLE), second['objects'], {}, LATER, 3000)
    assert [item[0] for item in third['raise'] if item[2] == 'payments'] == [first['objects']['payments']['event']]


def test_without_events_only_the_record_changes():
    plan = guard.plan_round(guard.object_states(BLACKHOLE), {}, {}, NOW, 1000, events=False)
    assert plan['create'] == [] and plan['raise'] == []
    assert plan['objects']['payments']['state'] == 'blackhole' and 'event' not in plan['objects']['payments']


def test_the_status_configmap_holds_time_verdict_and_the_record_and_reads_back():
    plan = guard.plan_round(guard.object_states(BLACKHOLE), {}, {}, NOW, 1000)
    data = guard.status_data(BLACKHOLE, plan['objects'], NOW, [{'name': 'x'}])
    assert data['time'] == NOW and data['verdict'] == 'error'
    body = json.loads(data['status.json'])
    assert body['counts']['errors'] == 2 and [item['id'] for item in body['findings']] == [
        'blackhole_nic_disconnected', 'egressip_unassigned', 'egressip_single_point_of_failure'], 'info findings left out'
    configmap = guard.status_configmap('egressip-guard-status', 'openshift-machine-api', data)
    assert guard.previous_record(configmap) == plan['objects']
    assert guard.previous_record({'data': {'status.json': 'not json'}}) == {} and guard.previous_record(None) == {}
    diff = guard.round_diff(None, data, plan)
    assert diff['before'] == {'verdict': None, 'objects': {}, 'events': []}
    assert diff['after']['verdict'] == 'error' and len(diff['after']['events']) == 3


def test_a_long_message_is_cut_and_an_event_name_stays_a_dns_subdomain():
    entry = {'state': 'blackhole', 'ips': ['10.20.0.200'], 'nodes': ['w-0'],
             'findings': [finding('blackhole_nic_disconnected', 'x' * 2000, [])]}
    assert len(guard.event_message('payments', entry)) == guard.MESSAGE_LIMIT
    assert len(guard.event_name('a' * 253, 0x18b2c6d1e0f4a000)) <= 253
    assert guard.verdict({'errors': 0, 'warnings': 1}) == 'warning' and guard.verdict({}) == 'ok'


REMEDIATION = {'nodes': ['w-0'], 'refused': False, 'check_mode': False, 'seconds': 1.5, 'deferred': {'w-4': 'its limit'}, 'skipped': {},
               'moves': [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w-0', 'to': 'w-2', 'seconds': 1.5, 'candidates': ['w-2']}]}


def test_a_remediation_adds_one_normal_event_per_object_it_moved_and_the_status_keeps_it():
    healthy = verification([row('payments', '10.20.0.200', 'w-2'), row('billing', '10.20.0.210', 'w-1')])
    previous = {'payments': {'state': 'blackhole', 'since': NOW, 'event': 'payments.1', 'count': 2}}
    plan = guard.plan_round(guard.object_states(healthy), previous, {'payments': 'uid-1'}, LATER, 1000, remediation=REMEDIATION)
    reasons = sorted((body['involvedObject']['name'], body['type'], body['reason']) for body in plan['create'])
    assert reasons == [('payments', 'Normal', 'EgressIPHealthy'), ('payments', 'Normal', 'EgressIPRemediated')]
    remediated = next(body for body in plan['create'] if body['reason'] == 'EgressIPRemediated')
    assert remediated['message'].startswith('The guard removed the k8s.ovn.org/egress-assignable label of w-0 (broken secondary path)')
    assert '10.20.0.200 moved from w-0 to w-2 in 1.50 s' in remediated['message']
    assert remediated['involvedObject']['uid'] == 'uid-1'
    names = [body['metadata']['name'] for body in plan['create']]
    assert len(set(names)) == 2 and plan['next_offset'] >= 2 + len(names)
    data = guard.status_data(healthy, plan['objects'], LATER, [], REMEDIATION)
    kept = json.loads(data[guard.DATA_KEY])['remediation']
    assert kept['nodes'] == ['w-0'] and kept['deferred'] == {'w-4': 'its limit'} and kept['moves'][0]['to'] == 'w-2'


def test_no_remediated_event_for_a_refused_remediation_or_without_events_and_check_mode_says_would():
    states = guard.object_states(verification([row('payments', '10.20.0.200', 'w-0', 'blackhole')]))
    refused = dict(REMEDIATION, refused=True)
    assert [body['reason'] for body in guard.plan_round(states, {}, {}, NOW, 0, remediation=refused)['create']] == ['EgressIPBlackhole']
    assert guard.plan_round(states, {}, {}, NOW, 0, events=False, remediation=REMEDIATION)['create'] == []
    checked = guard.remediation_events(dict(REMEDIATION, check_mode=True), {}, NOW, 0)
    assert 'would remove' in checked[0]['message'] and '10.20.0.200 would leave w-0 (candidates: w-2)' in checked[0]['message']
    stuck = dict(REMEDIATION, moves=[dict(REMEDIATION['moves'][0], to=None, seconds=None)])
    assert 'left w-0 and was not assigned to another node yet' in guard.remediation_events(stuck, {}, NOW, 0)[0]['message']
    assert guard.remediation_summary(None) is None
