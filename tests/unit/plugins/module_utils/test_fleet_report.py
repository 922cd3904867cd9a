"""The fleet report builder (reports/fleet.py, fleet_html.py): one row per cluster from whatever facts a playbook left,
the verdicts, totals, failed and not-run clusters, drift, and nothing of a record outside the keys it reads."""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet
from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet_html
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report

T1, T2, T3 = '2026-12-03T10:00:01Z', '2026-12-03T10:00:02Z', '2026-12-03T10:00:03Z'
CLUSTER_A = {'name': 'ocp-a-x1b2c', 'id': '6f0c-aaaa', 'openshift_version': '4.16.3', 'api_url': 'https://admin:pw@api.a.example.com:6443/'}


def finding(finding_id, severity='error', message=None):
    return {'id': finding_id, 'severity': severity, 'message': message or finding_id, 'remedy': 'do something', 'objects': []}


def verify_report(errors=(), warnings=(), egress_ips=2, assigned=2, healthy=2, blackholed=0, cluster=None):
    findings = [finding(item) for item in errors] + [finding(item, 'warning') for item in warnings]
    return {'kind': 'verify', 'cluster': dict(cluster or CLUSTER_A), 'generated_at': '2026-12-03T09:59:00Z', 'findings': findings,
            'summary': {'ok': not errors, 'egress_ips': egress_ips, 'assigned': assigned, 'healthy': healthy, 'blackholed': blackholed,
                        'errors': len(errors), 'warnings': len(warnings), 'info': 0},
            'nodes': [{'name': 'worker-0'}], 'egress_ips': []}


def test_a_verify_record_gives_the_cluster_its_ips_findings_and_verdict():
    row = fleet.row('cluster-a', {'playbook': 'verify', 'verify': verify_report()}, T1)
    assert row['inventory'] == 'cluster-a' and row['playbook'] == 'verify' and row['verdict'] == 'ok'
    # the API URL without its user information
    assert row['cluster'] == {'name': 'ocp-a-x1b2c', 'id': '6f0c-aaaa', 'openshift_version': '4.16.3', 'api_url': 'https://api.a.example.com:6443'}
    assert row['egress_ips'] == {'total': 2, 'assigned': 2, 'healthy': 2, 'blackholed': 0}
    assert row['findings'] == {'errors': 0, 'warnings': 0, 'ids': {}} and row['drift'] == {'count': 0, 'items': []}
    assert row['time'] == T1 and row['generated_at'] == '2026-12-03T09:59:00Z' and row['checks'] == ['verify'] and row['failure'] is None
    # the whole verify result ({report: ...}) is read as its report
    assert fleet.row('cluster-a', {'playbook': 'verify', 'verify': {'report': verify_report(), 'changed': False}}, T1) == row


def test_verdicts_error_warning_and_drift():
    blackhole = fleet.row('b', {'verify': verify_report(errors=['egressip_blackhole'], healthy=1, blackholed=1)}, T1)
    assert blackhole['verdict'] == 'error' and blackhole['findings']['errors'] == 1 and blackhole['egress_ips']['blackholed'] == 1
    warned = fleet.row('c', {'verify': verify_report(warnings=['kube_tls_unverified'])}, T1)
    assert warned['verdict'] == 'warning' and warned['findings']['ids'] == {'kube_tls_unverified': 1}
    drifted = fleet.row('d', {'verify': verify_report(errors=['egressip_object_missing'])}, T1)
    assert drifted['drift'] == {'count': 1, 'items': [{'id': 'egressip_object_missing', 'message': 'egressip_object_missing'}]}
    assert drifted['verdict'] == 'error'
    # a drift finding that is only a warning still makes the cluster a warning
    vlan = fleet.row('e', {'support': {'summary': {'error': 0, 'warning': 1, 'egress_ips': 1, 'assigned': 1, 'ok': True},
                                       'findings': [finding('machineset_missing_secondary_device', 'warning')]}}, T1)
    assert vlan['verdict'] == 'warning' and vlan['drift']['count'] == 1
    assert vlan['egress_ips'] == {'total': 1, 'assigned': 1, 'healthy': None, 'blackholed': None}


def test_findings_of_several_sources_count_once():
    report = verify_report(errors=['egressip_blackhole'])
    drill = {'summary': {'ok': False, 'errors': 1}, 'findings': report['findings'], 'final': report}
    row = fleet.row('a', {'playbook': 'failover_drill', 'verify': report, 'failover_drill': drill}, T1)
    assert row['findings']['errors'] == 1 and row['checks'] == ['failover_drill', 'verify']
    # the guard's summary (no findings list) counts when nothing else says more
    summary = {'ok': False, 'errors': 2, 'warnings': 0, 'egress_ips': 3, 'assigned': 3}
    guard = fleet.row('g', {'playbook': 'guard', 'guard': {'verdict': 'unhealthy', 'summary': summary}}, T1)
    assert guard['findings']['errors'] == 2 and guard['verdict'] == 'error' and guard['egress_ips']['total'] == 3


def test_missing_facts_give_a_row_of_unknowns():
    row = fleet.row('render-only', {'playbook': 'render'}, T1)
    assert row['verdict'] == 'ok' and row['checks'] == []
    assert row['cluster'] == {'name': None, 'id': None, 'openshift_version': None, 'api_url': None}
    assert row['egress_ips'] == {'total': None, 'assigned': None, 'healthy': None, 'blackholed': None}
    assert fleet.row('x', None, T1)['verdict'] == 'ok'
    # values of the wrong type are dropped, not rendered
    odd = fleet.row('y', {'playbook': 'nonsense', 'verify': 'text', 'cluster': {'name': ['list']}, 'changes': 'one line'}, T1)
    assert odd['playbook'] is None and odd['checks'] == [] and odd['cluster']['name'] is None and odd['changes'] == []
    # preflight counts only when nothing that ran after it did; the upgrade check gives the version
    planned = fleet.row('p', {'playbook': 'enable', 'preflight': {'summary': {'error': 0, 'warning': 1}, 'findings': [
        finding('egress_label_set_by_hand', 'warning')], 'cluster': {'openshift_version': '4.15.2'}}}, T1)
    assert planned['verdict'] == 'warning' and planned['cluster']['openshift_version'] == '4.15.2'
    assert fleet.row('p', {'preflight': {'findings': [finding('x', 'warning')]}, 'verify': verify_report()}, T1)['verdict'] == 'ok'
    upgraded = fleet.row('u', {'upgrade': {'summary': {'error': 0, 'warning': 0, 'ok': True}, 'findings': [], 'versions': {'current': '4.17.0'}}}, T1)
    assert upgraded['cluster']['openshift_version'] == '4.17.0'


def test_a_failed_cluster_is_failed_and_named_with_its_task_and_message():
    row = fleet.row('cluster-c', {'playbook': 'enable', 'failure': {'task': 'Preflight', 'message': 'HTTP 401: Unauthorized'}}, T3)
    assert row['verdict'] == 'failed' and row['failure'] == {'task': 'Preflight', 'message': 'HTTP 401: Unauthorized'}
    rows = [fleet.row('cluster-a', {'playbook': 'enable', 'verify': verify_report()}, T1), row]
    built = fleet.build(rows, ['cluster-a', 'cluster-c', 'cluster-d'])
    assert built['verdict'] == 'failed' and built['not_run'] == ['cluster-d']
    assert built['failed'] == [{'inventory': 'cluster-c', 'cluster': None, 'playbook': 'enable', 'task': 'Preflight',
                                'message': 'HTTP 401: Unauthorized'}]
    markdown = fleet.render_markdown(built)
    assert '| cluster-c | - | enable | Preflight | HTTP 401: Unauthorized |' in markdown
    assert 'not run' in markdown and '`cluster-d`' in markdown


def test_totals_add_up_the_rows_and_count_each_verdict():
    rows = [fleet.row('a', {'verify': verify_report()}, T1),
            fleet.row('b', {'verify': verify_report(errors=['egressip_blackhole', 'egressip_object_missing'], egress_ips=3, assigned=3,
                                                    healthy=2, blackholed=1)}, T2),
            fleet.row('c', {'verify': verify_report(warnings=['kube_tls_unverified'])}, T2),
            fleet.row('d', {'failure': {'task': 't', 'message': 'm'}}, T3)]
    built = fleet.build(rows, ['a', 'b', 'c', 'd'])
    assert [item['inventory'] for item in built['clusters']] == ['a', 'b', 'c', 'd']
    assert built['totals'] == {'clusters': 4, 'ran': 4, 'not_run': 0, 'ok': 1, 'warning': 1, 'error': 1, 'failed': 1,
                               'egress_ips': {'total': 7, 'assigned': 7, 'healthy': 6, 'blackholed': 1},
                               'errors': 2, 'warnings': 1, 'drift': 1}
    assert built['generated_at'] == T3 and built['kind'] == 'fleet'
    assert fleet.build(rows[:3])['verdict'] == 'error' and fleet.build(rows[2:3])['verdict'] == 'warning'
    assert fleet.build([])['verdict'] == 'ok' and fleet.build([])['totals']['clusters'] == 0
    # JSON keeps the exact numbers
    assert json.loads(_report.render_json(built))['totals']['egress_ips']['healthy'] == 6


def test_nothing_outside_the_keys_read_reaches_the_report_and_credentials_are_redacted():
    record = {'playbook': 'verify', 'verify': dict(verify_report(), vcenter_password='hunter2-secret'),
              'egressip_vcenter': {'password': 'hunter2-secret'}, 'api_key': 'sha256~hunter2-secret',
              'cluster': {'name': 'ocp-a', 'token': 'hunter2-secret'},
              'failure': {'task': 'Log in', 'message': 'login failed: password=hunter2-secret token: "hunter2 secret" via '
                                                       'https://user:hunter2-secret@vc.example.com/sdk', 'extra': 'hunter2-secret'},
              'changes': ['added NIC to worker-0', {'password': 'hunter2-secret'}]}
    row = fleet.row('cluster-a', record, T1)
    built = fleet.build([row])
    texts = [_report.render_json(built), fleet.render_markdown(built), fleet_html.render_html(built)]
    for text in texts:
        assert 'hunter2' not in text
    assert row['failure']['message'] == ('login failed: password=[redacted] token: [redacted] via https://[redacted]@vc.example.com/sdk')
    assert row['changes'] == ['added NIC to worker-0']
    # redaction is idempotent (a stored row read back is redacted again), and leaves prose alone
    assert fleet.redact(row['failure']['message']) == row['failure']['message']
    assert fleet.redact('Authorization: Bearer sha256~abc failed') == 'Authorization: Bearer [redacted] failed'
    assert fleet.redact('HTTP 401: the service account token is invalid') == 'HTTP 401: the service account token is invalid'
    assert fleet.redact('api_key="a b c" rejected') == 'api_key=[redacted] rejected'


def test_a_stored_row_read_back_is_the_same_row_and_cannot_add_keys():
    row = fleet.row('b', {'playbook': 'upgrade', 'verify': verify_report(errors=['egressip_object_missing']),
                          'changes': ['x moved'], 'failure': {'task': 't', 'message': 'm'}}, T2)
    assert fleet.normal_row(json.loads(json.dumps(row))) == row
    tampered = dict(row, secret='hunter2', cluster=dict(row['cluster'], password='hunter2'))
    assert 'hunter2' not in json.dumps(fleet.normal_row(tampered))


def test_covers_keeps_a_previous_complete_report_while_a_rerun_finds_the_same():
    rows = [fleet.row(name, {'verify': verify_report()}, T1) for name in ('a', 'b', 'c')]
    previous = json.loads(_report.render_json(fleet.build(rows, ['a', 'b', 'c'])))
    # the first cluster of the next run has reported the same, the others are pending
    partial = fleet.build([fleet.row('a', {'verify': verify_report()}, T3)], ['a', 'b', 'c'])
    assert fleet.covers(previous, partial)
    assert fleet.rebuild(previous) == fleet.build(rows, ['a', 'b', 'c'])
    changed = fleet.build([fleet.row('a', {'verify': verify_report(errors=['egressip_blackhole'])}, T3)], ['a', 'b', 'c'])
    assert not fleet.covers(previous, changed)
    assert not fleet.covers(previous, fleet.build([fleet.row('a', {'verify': verify_report()}, T3)], ['a', 'b', 'c', 'd']))
    assert not fleet.covers(None, partial) and not fleet.covers({'kind': 'verify'}, partial)


def test_the_html_page_has_one_row_per_cluster_the_svg_and_escapes_text():
    rows = [fleet.row('a', {'verify': verify_report()}, T1),
            fleet.row('<b>', {'failure': {'task': 'x', 'message': '<script>alert(1)</script>'}}, T2)]
    page = fleet_html.render_html(fleet.build(rows, ['a', '<b>', 'c']))
    assert page.count('<tr class="cluster verdict-') == 2
    assert '<tr class="cluster verdict-failed" data-cluster="&lt;b&gt;">' in page
    assert '<script>' not in page and '&lt;script&gt;' in page
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="verdicts"' in page and 'data-count="1"' in page
    assert 'http://' not in page.replace('http://www.w3.org/2000/svg', '') and '<link' not in page
    assert fleet_html.render_html(fleet.build(rows), template='{{ rows | length }} {{ verdict }}') == '2 FAILED'
    assert page == fleet_html.render_html(fleet.build(rows, ['a', '<b>', 'c']))
