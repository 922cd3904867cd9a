"""Report rendering (pure): JSON and Markdown for verify and the failover drill, deterministic output."""

import json

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.checks import drill
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify
from ansible_collections.ocp.egressip.plugins.module_utils.checks import wire

from test_verify import CIDR, Cluster
from test_drill import step


def verify_report(broken=False):
    cluster = Cluster()
    if broken:
        cluster.vsphere['vms']['w0']['nics'][1]['connected'] = False
    result = cluster.evaluate()
    result = wire.apply_wire(result, [{'egressip': 'payments', 'namespace': 'payments', 'pod': 'p', 'outcome': 'answered',
                                       'source_ip': '10.20.0.201', 'log': '10.20.0.201', 'reason': None}])
    return verify.report(result, network=CIDR, portgroup='ocp-egress-120')


def test_cells_escape_pipes_and_newlines_and_show_nothing_as_a_dash():
    assert report.cell('a|b\nc') == 'a\\|b<br>c'
    assert [report.cell(value) for value in (None, '', [], True, False, 1.234, ['x', 'y'])] == ['-', '-', '-', 'yes', 'no', '1.23', 'x, y']
    assert report.seconds(None) == '-' and report.seconds(1.5) == '1.50 s'
    assert report.table(['a'], []) == ['_none_']


def test_mermaid_ids_and_labels_are_safe():
    assert report.mermaid_id('node', 'ocp1-worker-0.example.com') == 'node_ocp1_worker_0_example_com'
    assert report.mermaid_label('a "b"', None, 'c') == '"a #quot;b#quot;<br/>c"'


def test_verify_markdown_has_tables_wire_diagram_and_findings():
    text = report.render_markdown(verify_report(broken=True))
    assert text.startswith('# EgressIP verification\n\n**Result: FAILED**')
    assert '| payments | 10.20.0.200 | w0 | secondary | BLACKHOLE | - |' in text
    assert '| payments | 10.20.0.201 | w1 | secondary | OK | seen |' in text
    assert 'ens224 00:50:56:aa:00:00 DISCONNECTED' in text
    assert '```mermaid\nflowchart LR' in text and 'node_w0 -. "ens224 disconnected" .-> net' in text
    assert 'class node_w0,ip_10_20_0_200 broken' in text
    assert '| ERROR | `egressip_blackhole` |' in text
    assert text.endswith('\n') and not text.endswith('\n\n')


def test_verify_report_is_deterministic_and_json_round_trips():
    first, second = verify_report(), verify_report()
    assert report.render_markdown(first) == report.render_markdown(second)
    assert report.render_json(first) == report.render_json(second)
    assert json.loads(report.render_json(first))['summary']['ok'] is True
    assert '**Result: PASSED**' in report.render_markdown(first)


def test_verify_markdown_with_remediation_in_check_mode_and_done():
    data = verify_report(broken=True)
    data['remediation'] = {'nodes': ['w0'], 'check_mode': True, 'refused': False,
                           'moves': [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w0', 'candidates': ['w2']}]}
    assert 'Would remove the `k8s.ovn.org/egress-assignable` label from w0.' in report.render_markdown(data)
    data['remediation'] = {'nodes': ['w0'], 'refused': False, 'seconds': 1.25,
                           'moves': [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w0', 'to': 'w2', 'candidates': ['w2'],
                                      'seconds': 1.25}]}
    text = report.render_markdown(data)
    assert 'Removed the `k8s.ovn.org/egress-assignable` label from w0; every moved egress IP was assigned elsewhere after 1.25 s.' in text
    assert '| payments | 10.20.0.200 | w0 | w2 | w2 | 1.25 s |' in text
    data['remediation'] = {'nodes': ['w0'], 'refused': True, 'moves': []}
    assert 'Refused: removing the egress-assignable label from w0' in report.render_markdown(data)


def test_drill_markdown_has_steps_timings_cordon_failback_and_final_state():
    remediation = {'detected': True, 'nodes': ['w1'], 'seconds': 2.5, 'findings': [],
                   'moves': [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w1', 'to': 'w2', 'seconds': 2.5, 'candidates': ['w2']}]}
    black = step('w1', 3.0, remediation=remediation)
    black['failure']['prediction']['blackholed'] = [{'egressip': 'payments', 'ip': '10.20.0.200'}]
    black['failure']['observed_seconds'] = 2.0
    data = drill.assemble({'trigger': 'unlabel', 'steps': [step('w0', 1.0), black],
                           'cordon': {'node': 'w0', 'unexpected_moves': [], 'observed_seconds': 2.0, 'findings': []},
                           'final': verify_report(), 'settings': {'poll_interval': 0.5}})
    text = report.render_markdown(data)
    assert text.startswith('# EgressIP failover drill\n\n**Result: PASSED** - 2 step(s) on w0, w1, 2 egress IP move(s); slowest reassignment 2.50 s')
    assert '| 1 | w0 | unlabel | 1 | 1 | 1.00 s | 2.00 s | yes | - | no |' in text, 'no failback: as expected, not in capitals'
    assert '| 2 | w1 | disconnect_nic | 1 | 1 | 2.50 s | 4.00 s | - | yes | no |' in text
    assert 'OVN-Kubernetes does not notice a disconnected secondary vNIC: payments 10.20.0.200 stayed on w1' in text
    assert 'Verify detected the blackhole and removed the label of w1 (the times below run from that label removal).' in text
    assert 'no egress IP moved back (no failback)' in text
    assert 'Node w0 was cordoned (spec.unschedulable) and watched for 2.00 s: no egress IP moved' in text
    assert '## Final state' in text and '```mermaid' in text


def test_drill_markdown_marks_a_failback_as_what_went_wrong():
    data = drill.assemble({'trigger': 'unlabel', 'steps': [step('w0', 1.0, failback=True)], 'final': verify_report(),
                           'settings': {'poll_interval': 0.5}})
    text = report.render_markdown(data)
    assert '| 1 | w0 | unlabel | 1 | 1 | 1.00 s | 2.00 s | yes | - | YES |' in text
    assert '; failback OBSERVED.' in text.split('\n')[2]


def test_unknown_kind_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match='failover_drill, verify'):
        report.render_markdown({'kind': 'nope'})
