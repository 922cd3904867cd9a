"""The pure part of the egressip_plan module: findings of the placement, the desired snapshot."""


def test_plan_findings_for_unassigned_ips_and_single_points_of_failure():
    from ansible_collections.ocp.egressip.plugins.modules import egressip_plan  # pylint: disable=import-outside-toplevel
    placements = [{'egressip': 'a', 'ip': '10.20.0.200', 'candidates': [], 'may_be_unassigned': True, 'reasons': ['NoMatchingNodeFound']},
                  {'egressip': 'a', 'ip': '10.20.0.201', 'candidates': ['w0'], 'may_be_unassigned': True, 'reasons': ['EgressIPConflict']},
                  {'egressip': 'a', 'ip': '10.20.0.202', 'candidates': ['w1'], 'may_be_unassigned': False, 'reasons': []}]
    points = [{'node': 'w0', 'trigger': 'unlabel', 'ips': [{'egressip': 'a', 'ip': '10.20.0.202', 'certain': False}]}]
    findings = egressip_plan.plan_findings(placements, points)
    assert [(item['id'], item['severity']) for item in findings] == [
        ('egressip_unassigned', 'error'), ('egressip_unassigned', 'warning'), ('egressip_single_point_of_failure', 'warning')]
    assert findings[0]['message'] == 'EgressIP a IP 10.20.0.200 stays unassigned (NoMatchingNodeFound).'
    assert findings[1]['message'] == 'EgressIP a IP 10.20.0.201 may stay unassigned (EgressIPConflict); otherwise on one of w0.'
    assert findings[2]['message'] == 'If node w0 fails (unlabel), a 10.20.0.202 may stay unassigned.'


def test_plan_desired_snapshot_with_exclusive():
    from ansible_collections.ocp.egressip.plugins.modules import egressip_plan  # pylint: disable=import-outside-toplevel
    snap = {'nodes': {}, 'egressips': {'owned': {'egress_ips': ['10.20.0.1'], 'status': [], 'owned': True},
                                       'hand': {'egress_ips': ['10.20.0.2'], 'status': [], 'owned': False}}}
    assert egressip_plan.desired_snapshot(snap, None, True) is snap
    after = egressip_plan.desired_snapshot(snap, [{'name': 'new', 'egress_ips': ['10.20.0.3']}], True)
    assert sorted(after['egressips']) == ['hand', 'new']
