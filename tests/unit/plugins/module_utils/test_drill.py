"""The failover drill (pure): measured moves, comparison with the prediction, findings and the assembled report."""

from ansible_collections.ocp.egressip.plugins.module_utils.checks import drill
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement

from _cluster_states import egressip_object, node_object

CIDR = '10.20.0.0/24'


def cluster(status, count=3):
    nodes = [node_object('w%d' % index, index, [CIDR]) for index in range(count)]
    return nodes, [egressip_object('payments', ['10.20.0.200', '10.20.0.201'], status)]


def test_assignments_are_keyed_by_object_and_canonical_ip():
    _nodes, egressips = cluster((('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')))
    current = drill.assignments(egressips)
    assert current == {('payments', '10.20.0.200'): 'w0', ('payments', '10.20.0.201'): 'w1'}
    assert drill.on_node(current, 'w0') == [('payments', '10.20.0.200')]
    assert drill.assignment_list(current)[1] == {'egressip': 'payments', 'ip': '10.20.0.201', 'node': 'w1'}


def test_tracker_records_the_first_poll_an_ip_is_elsewhere():
    tracker = drill.MoveTracker({('payments', '10.20.0.200'): 'w0'}, ['w0'])
    assert tracker.observe({('payments', '10.20.0.200'): 'w0'}, 0.5) is False
    assert tracker.observe({}, 1.0) is False  # removed from w0, not yet placed
    assert tracker.observe({('payments', '10.20.0.200'): 'w2'}, 1.5) is True
    assert tracker.observe({('payments', '10.20.0.200'): 'w1'}, 2.0) is True  # a later move does not change the arrival
    assert tracker.moves() == [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w0', 'to': 'w2', 'seconds': 1.5, 'now': 'w1'}]
    assert tracker.slowest() == 1.5 and tracker.polls == 4 and tracker.pending() == []


def test_tracker_with_nothing_to_watch_is_done_and_has_no_time():
    tracker = drill.MoveTracker({}, ['w0'])
    assert tracker.done() and tracker.moves() == [] and tracker.slowest() is None


def test_unexpected_moves_between_two_reads():
    before = {('a', '1'): 'w0', ('a', '2'): 'w1'}
    after = {('a', '1'): 'w0', ('a', '2'): 'w2', ('b', '3'): 'w1'}
    assert drill.unexpected_moves(before, after) == [{'egressip': 'a', 'ip': '2', 'from': 'w1', 'to': 'w2'},
                                                     {'egressip': 'b', 'ip': '3', 'from': None, 'to': 'w1'}]
    assert drill.unexpected_moves(before, after, keys=[('a', '1')]) == []


def test_unlabel_step_against_the_prediction_of_placement():
    nodes, egressips = cluster((('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')))
    snap = placement.snapshot(nodes, egressips)
    prediction = placement.what_if(snap, 'w0', 'unlabel')
    assert prediction['moved'][0]['candidates'] == ['w2']
    tracker = drill.MoveTracker({('payments', '10.20.0.200'): 'w0'}, ['w0'])
    tracker.observe({('payments', '10.20.0.200'): 'w2', ('payments', '10.20.0.201'): 'w1'}, 0.8)
    _nodes, after = cluster((('10.20.0.200', 'w2'), ('10.20.0.201', 'w1')))
    comparison = placement.compare(prediction, placement.snapshot(nodes, after))
    assert comparison[0]['ok'] is True
    assert drill.failure_findings('w0', 'unlabel', prediction, tracker.moves(), comparison) == []
    wrong = placement.compare(prediction, placement.snapshot(nodes, cluster((('10.20.0.200', 'w1'), ('10.20.0.201', 'w1')))[1]))
    findings = drill.failure_findings('w0', 'unlabel', prediction, tracker.moves(), wrong)
    assert [item['id'] for item in findings] == ['egressip_drill_prediction_mismatch']
    assert 'went to w1, predicted one of w2' in findings[0]['message']


def test_not_reassigned_is_an_error_unless_the_prediction_said_it_stays_unassigned():
    nodes, egressips = cluster((('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')))
    prediction = placement.what_if(placement.snapshot(nodes, egressips), 'w0', 'unlabel')
    stuck = drill.MoveTracker({('payments', '10.20.0.200'): 'w0'}, ['w0'])
    stuck.observe({('payments', '10.20.0.200'): 'w0'}, 5.0)
    findings = drill.failure_findings('w0', 'unlabel', prediction, stuck.moves(), [])
    assert [item['id'] for item in findings] == ['egressip_drill_not_reassigned']
    assert 'now on w0' in findings[0]['message']
    nodes, egressips = cluster((('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')), count=2)
    certain = placement.what_if(placement.snapshot(nodes, egressips), 'w0', 'unlabel')
    assert certain['unassigned'][0]['certain'] is True
    assert drill.failure_findings('w0', 'unlabel', certain, stuck.moves(), []) == []


def test_nothing_to_move_cordon_moves_and_wire_findings():
    nodes, egressips = cluster((('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')))
    snap = placement.snapshot(nodes, egressips)
    idle = drill.failure_findings('w2', 'unlabel', placement.what_if(snap, 'w2', 'unlabel'), [], [])
    assert [item['id'] for item in idle] == ['egressip_drill_nothing_to_move']
    cordon = placement.what_if(snap, 'w0', 'cordon')
    assert cordon['effect'] == 'none'
    moved = [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w0', 'to': 'w2', 'when': 'while w0 was cordoned'}]
    findings = drill.failure_findings('w0', 'cordon', cordon, [], [], unexpected=moved)
    assert [item['id'] for item in findings] == ['egressip_drill_unexpected_move']
    assert findings[0]['severity'] == 'warning' and 'while w0 was cordoned' in findings[0]['message']
    wire = [{'egressip': 'payments', 'ok': False, 'expected': ['10.20.0.200'], 'last': 'curl: (28) timeout'}]
    findings = drill.failure_findings('w0', 'unlabel', placement.what_if(snap, 'w0', 'unlabel'), [], [], wire=wire)
    assert 'egressip_drill_wire_not_restored' in [item['id'] for item in findings]


def test_blackhole_prediction_for_a_disconnected_nic_is_not_nothing_to_move():
    nodes, egressips = cluster((('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')))
    prediction = placement.what_if(placement.snapshot(nodes, egressips), 'w0', 'disconnect_nic', carrier_loss='keep')
    assert prediction['effect'] == 'blackhole'
    assert drill.failure_findings('w0', 'disconnect_nic', prediction, [], []) == []


def step(node, seconds, ok=True, failback=False, remediation=None):
    moves = [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': node, 'to': 'w2', 'seconds': seconds}]
    comparison = [{'egressip': 'payments', 'ip': '10.20.0.200', 'predicted': ['w2'], 'actual': 'w2', 'may_be_unassigned': False, 'ok': ok}]
    failure = {'before': [{'egressip': 'payments', 'ip': '10.20.0.200', 'node': node}], 'moves': [] if remediation else moves,
               'reassignment_seconds': None if remediation else seconds,
               'prediction': {'effect': 'blackhole' if remediation else 'moves', 'notes': ['n']},
               'comparison': [] if remediation else comparison,
               'wire': [{'egressip': 'payments', 'ok': True, 'seconds': seconds + 1}], 'findings': []}
    restore = {'action': 'label', 'seconds': 0.1, 'observed_seconds': 2.0,
               'unexpected_moves': [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w2', 'to': node}] if failback else [],
               'findings': []}
    return {'node': node, 'trigger': 'disconnect_nic' if remediation else 'unlabel', 'failure': failure, 'remediation': remediation,
            'restore': restore}


def test_step_summary_and_assembled_report():
    remediation = {'detected': True, 'nodes': ['w1'], 'seconds': 2.5, 'findings': [],
                   'moves': [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w1', 'to': 'w2', 'seconds': 2.5}]}
    data = {'trigger': 'unlabel', 'steps': [step('w0', 1.0), step('w1', 3.0, remediation=remediation)],
            'cordon': {'node': 'w0', 'unexpected_moves': [], 'observed_seconds': 2.0, 'findings': []},
            'settings': {'poll_interval': 0.5}}
    report = drill.assemble(data)
    assert report['kind'] == 'failover_drill'
    first, second = report['step_summaries']
    assert (first['moved'], first['reassigned_seconds'], first['wire_seconds'], first['prediction_held']) == (1, 1.0, 2.0, True)
    assert (second['moved'], second['reassigned_seconds'], second['blackhole_detected'], second['prediction_held']) == (1, 2.5, True, None)
    summary = report['summary']
    assert summary['ok'] is True and summary['moved'] == 2 and summary['reassigned_seconds_max'] == 2.5
    assert summary['reassigned_seconds_mean'] == 1.75 and summary['prediction_held'] is True
    assert summary['failback'] is False and summary['cordon_moved'] is False


def test_assembled_report_collects_findings_and_flags_failback():
    finding = {'id': 'egressip_drill_prediction_mismatch', 'severity': 'error', 'message': 'm', 'remedy': 'r', 'docs': '', 'objects': []}
    bad = step('w0', 1.0, ok=False, failback=True)
    bad['failure']['findings'] = [finding]
    report = drill.assemble({'steps': [bad], 'final': {'findings': [finding]}})
    assert report['summary']['ok'] is False and report['summary']['failback'] is True
    assert report['summary']['prediction_held'] is False and report['summary']['cordon_moved'] is None
    assert report['findings'] == [finding]  # the final verify's copy is not counted twice
