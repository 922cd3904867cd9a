"""The support report: verdict, versions, configuration, findings, placement, nodes, what-if, primary record; no secrets."""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight
from ansible_collections.ocp.egressip.plugins.module_utils.reports import support

from _preflight_snapshots import base_snapshot, configured_snapshot, egressip  # pylint: disable=wrong-import-order

ABOUT = {'generated_at': '2026-11-30T10:00:00Z', 'collection_version': '0.1.0', 'ansible_version': '2.19.14'}


def assigned_snapshot():
    """The configured cluster with the payments EgressIP assigned and a primary-network EgressIP."""
    snap = configured_snapshot()
    snap['vsphere']['about'] = 'VMware vCenter Server 8.0.2 build-22617221'
    snap['egressips'] = [
        egressip('payments', ['10.20.0.200', '10.20.0.201'], [('10.20.0.200', 'ocp1-worker-0'), ('10.20.0.201', 'ocp1-worker-1')]),
        egressip('legacy', ['192.168.10.200'], [('192.168.10.200', 'ocp1-worker-2')]),
    ]
    return snap


def report_of(snap, **kwargs):
    kwargs.setdefault('about', ABOUT)
    return support.build(snap, preflight.run_checks(snap, 'audit'), **kwargs)


def test_healthy_verdict_says_outside_red_hat_support():
    report = report_of(assigned_snapshot())
    assert report['kind'] == 'support' and report['status'] == 'healthy'
    assert report['verdict'] == 'Configured and healthy; outside Red Hat support: secondary-network EgressIP on vSphere'
    assert report['summary']['ok'] is True and report['summary']['egress_ips'] == 2 and report['summary']['assigned'] == 2


def test_verdicts_for_errors_warnings_partial_and_nothing():
    snap = assigned_snapshot()
    snap['egressips'][0]['status']['items'].pop()
    report = report_of(snap)
    assert report['status'] == 'partial' and report['verdict'].startswith('Partly configured: 1 of 2 egress IP(s) assigned')
    snap = assigned_snapshot()
    snap['network_operator']['spec']['defaultNetwork']['ovnKubernetesConfig']['egressIPConfig']['reachabilityTotalTimeoutSeconds'] = 0
    report = report_of(snap)
    assert report['status'] == 'degraded' and 'egress_reachability_check_disabled' in report['verdict']
    snap = assigned_snapshot()
    snap['tuneds'] = []
    report = report_of(snap)
    assert report['status'] == 'failing' and report['verdict'].startswith('Not healthy: 1 error(s) (node_ip_forwarding_off)')
    snap = assigned_snapshot()
    snap['config'] = {}
    report = report_of(snap)
    assert report['status'] == 'not_configured' and 'Red Hat' not in report['verdict']


def test_unacknowledged_is_said_in_the_verdict():
    snap = assigned_snapshot()
    snap['config']['acknowledge_unsupported'] = False
    assert report_of(snap)['verdict'].endswith('(NOT acknowledged)')


def test_versions_configuration_and_findings():
    report = report_of(assigned_snapshot())
    assert report['versions'] == {'openshift': '4.16.3', 'platform': 'VSphere', 'network_type': 'OVNKubernetes',
                                  'vcenter': 'VMware vCenter Server 8.0.2 build-22617221', 'collection': '0.1.0',
                                  'ansible_core': '2.19.14'}
    assert report['configuration']['network']['cidr'] == '10.20.0.0/24'
    assert sorted(item['id'] for item in report['findings']) == ['primary_egressips_present', 'support_acknowledged']


def test_placement_classifies_each_ip_and_marks_missing_objects():
    snap = assigned_snapshot()
    snap['config']['objects'].append({'name': 'billing', 'egress_ips': ['10.20.0.210'], 'namespace_selector': {'matchLabels': {'team': 'b'}}})
    rows = dict(((row['egressip'], row['ip']), row) for row in report_of(snap)['placement'])
    assert rows[('payments', '10.20.0.200')]['network'] == 'secondary' and rows[('payments', '10.20.0.200')]['node'] == 'ocp1-worker-0'
    assert rows[('legacy', '192.168.10.200')]['network'] == 'primary' and rows[('legacy', '192.168.10.200')]['requested'] is False
    assert rows[('billing', '10.20.0.210')].get('missing') is True and rows[('billing', '10.20.0.210')]['node'] is None


def test_nodes_show_vm_host_nic_and_a_broken_path():
    snap = assigned_snapshot()
    snap['vsphere']['vms'][4]['nics'][1]['connected'] = False
    nodes = dict((row['name'], row) for row in report_of(snap)['nodes'])
    assert sorted(nodes) == ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
    good = nodes['ocp1-worker-0']
    assert good['vm'] == 'ocp1-worker-0' and good['esxi_host'] == 'DC0_C0_H0' and good['address'] == '10.20.0.13/24'
    assert good['portgroup_on_host'] is True and good['path_ok'] is True
    assert nodes['ocp1-worker-1']['path_ok'] is False


def test_what_if_and_primary_record_comparison():
    plan = {'what_if': [{'node': 'ocp1-worker-0', 'trigger': 'unlabel', 'effect': 'moves',
                         'moved': [{'egressip': 'payments', 'ip': '10.20.0.200', 'candidates': ['ocp1-worker-2']}],
                         'unassigned': [], 'blackholed': []}],
            'single_points_of_failure': []}
    recorded = [{'name': 'legacy', 'egress_ip': '192.168.10.200', 'node': 'ocp1-worker-1', 'subnet': '192.168.10.0/24'}]
    report = report_of(assigned_snapshot(), plan=plan, recorded_primary=recorded)
    assert report['what_if'][0]['moved'] == ['payments 10.20.0.200 -> ocp1-worker-2']
    assert report['primary_egressips']['changed'] == [{'name': 'legacy', 'egress_ip': '192.168.10.200',
                                                       'before': 'ocp1-worker-1', 'after': 'ocp1-worker-2'}]
    unchanged = report_of(assigned_snapshot(), recorded_primary=report['primary_egressips']['current'])
    assert unchanged['primary_egressips']['changed'] == []


def test_markdown_has_every_section_and_a_diagram():
    plan = {'what_if': [], 'single_points_of_failure': [{'node': 'ocp1-worker-0', 'ips': []}]}
    text = support.markdown(report_of(assigned_snapshot(), plan=plan))
    assert text.startswith('# EgressIP support report\n\n**Configured and healthy; outside Red Hat support')
    for heading in ('## Support status', '## Versions', '## Configuration', '## Findings', '## Placement', '## Egress nodes',
                    '## Diagram', '## What if a node fails', '## EgressIPs on the primary network'):
        assert heading in text
    assert '| egressip_network.cidr | 10.20.0.0/24 |' in text
    assert '| egressip_nodes.selector | {"node-role.kubernetes.io/worker": ""} |' in text
    assert '```mermaid' in text and 'ip_10_20_0_200 --> node_ocp1_worker_0' in text
    assert 'Single points of failure: ocp1-worker-0.' in text
    assert '| info | `support_acknowledged` |' in text


def test_render_is_deterministic_json_and_markdown():
    report = report_of(assigned_snapshot())
    first = support.render(report)
    assert first == support.render(json.loads(first[0]))
    assert json.loads(first[0])['verdict'] == report['verdict']


def test_no_secrets_even_when_the_configuration_carries_some():
    snap = assigned_snapshot()
    snap['config']['vsphere']['password'] = 'hunter2'
    snap['config']['network']['api_key'] = 'sha256~token'
    report = report_of(snap, about=dict(ABOUT, token='abc'))
    json_text, markdown_text = support.render(report)
    for secret in ('hunter2', 'sha256~token', 'abc'):
        assert secret not in json_text and secret not in markdown_text


def test_skipped_reads_are_said():
    snap = base_snapshot()
    snap['vsphere'] = None
    del snap['pods']
    snap['unreadable'] = {'machines.machine.openshift.io': 'HTTP 403'}
    text = support.markdown(support.build(snap, preflight.run_checks(snap, 'audit')))
    assert 'Not read (the checks that need them were skipped): vCenter, pods, machines.machine.openshift.io.' in text
    nodes = support.build(snap, [])['nodes']
    assert nodes and all(row['vm'] is None and row['path_ok'] is None for row in nodes)


def test_a_dual_stack_network_shows_both_addresses_and_needs_both():
    snap = assigned_snapshot()
    snap['config']['network']['ipv6'] = {'cidr': 'fd00:20::/64', 'gateway': 'fd00:20::1', 'node_address_range': 'fd00:20::10-fd00:20::99'}
    for item in snap['nodes']:
        if item['metadata']['name'] == 'ocp1-worker-0':
            annotations = item['metadata']['annotations']
            annotations['k8s.ovn.org/host-cidrs'] = json.dumps(json.loads(annotations['k8s.ovn.org/host-cidrs']) + ['fd00:20::13/64'])
    report = report_of(snap)
    nodes = dict((row['name'], row) for row in report['nodes'])
    assert nodes['ocp1-worker-0']['address'] == '10.20.0.13/24, fd00:20::13/64' and nodes['ocp1-worker-0']['path_ok'] is True
    # no address in the IPv6 part: its IPv6 egress IPs would have no path
    assert nodes['ocp1-worker-1']['address'] == '10.20.0.14/24' and nodes['ocp1-worker-1']['path_ok'] is False
    assert 'fd00:20::/64' in '\n'.join(support.diagram_lines(report))
