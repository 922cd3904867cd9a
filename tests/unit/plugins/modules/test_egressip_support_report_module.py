"""The pure part of the egressip_support_report module and the report file writer: findings merged once, the previous
report's primary-network record, the what-if plan and the per-IP verification on a preflight snapshot, files written
only when they change (never in check mode)."""

import json
import os
import sys

from ansible_collections.ocp.egressip.plugins.module_utils.reports import files as _report_files
from ansible_collections.ocp.egressip.plugins.modules import egressip_support_report as module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils'))
from _preflight_snapshots import configured_snapshot, egressip  # noqa: E402  pylint: disable=wrong-import-position,wrong-import-order
from _file_module import FileModule as FakeModule  # noqa: E402  pylint: disable=wrong-import-position,wrong-import-order


def finding(finding_id, *names):
    return {'id': finding_id, 'severity': 'error', 'message': finding_id, 'remedy': '', 'objects': [{'kind': 'Node', 'name': name} for name in names]}


def test_merged_keeps_one_finding_per_id_and_objects():
    first = [finding('a', 'n1'), finding('b')]
    merged = module.merged(first, [finding('a', 'n1'), finding('a', 'n2'), finding('c')])
    assert [(item['id'], [obj['name'] for obj in item['objects']]) for item in merged] == [('a', ['n1']), ('b', []), ('a', ['n2']), ('c', [])]


def params(dest, **changes):
    values = {'dest': str(dest) if dest else None, 'name': 'support_report', 'formats': ['json', 'markdown']}
    values.update(changes)
    return values


def test_previous_record_is_read_from_the_last_support_report_only(tmp_path):
    assert module.previous_record(params(tmp_path)) is None          # no file
    assert module.previous_record(params(None)) is None
    record = [{'name': 'legacy', 'egress_ip': '192.168.10.200', 'node': 'ocp1-worker-1', 'subnet': '192.168.10.0/24'}]
    path = tmp_path / 'support_report.json'
    path.write_text(json.dumps({'kind': 'support', 'primary_egressips': {'current': record}}))
    assert module.previous_record(params(tmp_path)) == record
    assert module.previous_record(params(tmp_path, formats=['markdown'])) is None
    path.write_text(json.dumps({'kind': 'verify'}))
    assert module.previous_record(params(tmp_path)) is None
    path.write_text('{not json')
    assert module.previous_record(params(tmp_path)) is None


def assigned_snapshot():
    snap = configured_snapshot()
    snap['egressips'] = [egressip('payments', ['10.20.0.200', '10.20.0.201'],
                                  [('10.20.0.200', 'ocp1-worker-0'), ('10.20.0.201', 'ocp1-worker-1')])]
    return snap


def test_plan_predicts_each_egress_node_failure_on_the_snapshot():
    prediction = module.plan(assigned_snapshot(), 'unlabel')
    assert sorted(item['ip'] for item in prediction['placements']) == ['10.20.0.200', '10.20.0.201']
    moved = dict((item['node'], [move['ip'] for move in item['moved']]) for item in prediction['what_if'])
    assert moved['ocp1-worker-0'] == ['10.20.0.200'] and moved['ocp1-worker-1'] == ['10.20.0.201']
    assert prediction['single_points_of_failure'] == []


def test_verification_names_missing_and_unassigned_objects_and_skips_without_the_api():
    snap = configured_snapshot()
    snap['egressips'] = []
    assert [item['id'] for item in module.verification_findings(snap)] == ['egressip_object_missing']
    snap['egressips'] = [egressip('payments', ['10.20.0.200', '10.20.0.201'], [('10.20.0.200', 'ocp1-worker-0')])]
    assert [item['id'] for item in module.verification_findings(snap)] == ['egressip_unassigned']
    snap['egressips'] = None   # the EgressIP API is not served
    assert module.verification_findings(snap) == []


def test_report_files_are_written_when_they_change_and_never_in_check_mode(tmp_path):
    dest = str(tmp_path / 'reports')
    contents = [('.json', '{}\n'), ('.md', '# report\n')]
    paths, changed, diffs = _report_files.write_reports(FakeModule(check_mode=True), dest, 'support_report', contents, '0644')
    assert changed and len(diffs) == 2 and not os.path.exists(dest)
    assert paths == [os.path.join(dest, 'support_report.json'), os.path.join(dest, 'support_report.md')]
    paths, changed, diffs = _report_files.write_reports(FakeModule(), dest, 'support_report', contents, '0644')
    assert changed and sorted(os.listdir(dest)) == ['support_report.json', 'support_report.md']
    assert _report_files.read_text(paths[1]) == '# report\n'
    _paths, changed, diffs = _report_files.write_reports(FakeModule(), dest, 'support_report', contents, '0644')
    assert not changed and diffs == []
    assert sorted(os.listdir(dest)) == ['support_report.json', 'support_report.md']  # no temporary file left


def test_report_file_names_must_be_plain():
    assert _report_files.check_name('support_report') is None
    for bad in ('', '.', '..', 'a/b', '/tmp/x'):
        assert 'plain file name' in _report_files.check_name(bad)


IPV6_PART = {'cidr': 'fd00:20::/64', 'gateway': 'fd00:20::1', 'node_address_range': 'fd00:20::10-fd00:20::99'}


def dual_stack_snapshot(ipv6_on=('ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2')):
    """The configured cluster with an IPv6 part, IPv6 node addresses in host-cidrs on `ipv6_on`, and a mixed EgressIP."""
    snap = configured_snapshot()
    snap['config']['network']['ipv6'] = dict(IPV6_PART)
    snap['config']['objects'][0]['egress_ips'] = ['10.20.0.200', 'fd00:20::200']
    for item in snap['nodes']:
        name = item['metadata']['name']
        if name in ipv6_on:
            annotations = item['metadata']['annotations']
            cidrs = json.loads(annotations['k8s.ovn.org/host-cidrs'])
            annotations['k8s.ovn.org/host-cidrs'] = json.dumps(cidrs + ['fd00:20::%d/64' % (10 + int(name[-1]))])
    snap['egressips'] = [egressip('payments', ['10.20.0.200', 'fd00:20::200'],
                                  [('10.20.0.200', 'ocp1-worker-0'), ('fd00:20::200', 'ocp1-worker-1')])]
    return snap


def test_verification_judges_an_ipv6_egress_ip_against_the_ipv6_part():
    assert module.verification_findings(dual_stack_snapshot()) == []
    # the node hosting the IPv6 IP has no address in the IPv6 part: the secondary path of that IP is broken
    ids = [item['id'] for item in module.verification_findings(dual_stack_snapshot(ipv6_on=('ocp1-worker-0',)))]
    assert ids and all(item != 'egressip_outside_network' for item in ids)
    found = module.verification_findings(dual_stack_snapshot(ipv6_on=('ocp1-worker-0',)))
    assert any('fd00:20::200' in item['message'] and 'ocp1-worker-1' in item['message'] for item in found)
