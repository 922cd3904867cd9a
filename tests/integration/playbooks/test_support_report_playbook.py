"""playbooks/support_report.yml end to end against the twin: on an unconfigured cluster, after playbooks/enable.yml,
and with a blackhole; read-only (zero writes to the cluster and vCenter), no secrets in any file or in the output.

The tests share one twin and run in order: the first ones see the seed state, then enable configures the cluster.
"""

import json
import os
import sys

from twin.fixture import kube_writes, vcsim_writes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _egress_cluster as ec  # noqa: E402  pylint: disable=wrong-import-position
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 31, 'carrier_loss': 'keep'}  # ignore-carrier: blackholes
PLAYBOOK = 'playbooks/support_report.yml'
VARIABLES_FILE = '@examples/twin-cluster.yml'
OUTSIDE = 'outside Red Hat support: secondary-network EgressIP on vSphere'


def read(report_dir, name):
    with open(os.path.join(str(report_dir), name), encoding='utf-8') as handle:
        return handle.read()


def report_files(report_dir):
    return json.loads(read(report_dir, 'support_report.json')), read(report_dir, 'support_report.md')


def secrets(twin):
    values = [twin.kube_state['token'], twin.vcsim_state['password'], twin.env.get('VMWARE_PASSWORD'), twin.env.get('K8S_AUTH_API_KEY')]
    return sorted(set(value for value in values if value))


def assert_no_secret(twin, run, report_dir):
    assert secrets(twin), 'the twin has credentials to look for'
    texts = {'stdout': run.stdout, 'stderr': run.stderr}
    for name in (os.listdir(str(report_dir)) if os.path.isdir(str(report_dir)) else []):
        texts[name] = read(report_dir, name)
    for secret in secrets(twin):
        leaks = [where for where, text in texts.items() if secret in text]
        assert leaks == [], 'a credential appears in %s' % ', '.join(leaks)


def run_report(twin, run_playbook, report_dir, *extra, **kwargs):
    """The playbook with -v (every task result printed: the secret check sees them), asserting it changed nothing remote."""
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run = run_playbook(PLAYBOOK, [VARIABLES_FILE, {'egressip_report_dir': str(report_dir)}] + list(extra), extra_args=('-v',), **kwargs)
    assert run.rc == 0, run
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    assert_no_secret(twin, run, report_dir)
    return run


def ids(report, severity=None):
    return sorted(set(item['id'] for item in report['findings'] if severity is None or item['severity'] == severity))


# --- before enable ---------------------------------------------------------------------------------

def test_check_mode_reads_and_writes_no_file(twin, run_playbook, tmp_path):
    report_dir = tmp_path / 'reports'
    run = run_report(twin, run_playbook, report_dir, check=True)
    assert not report_dir.exists()
    assert 'Not healthy:' in run.stdout


def test_unconfigured_cluster_says_what_is_missing(twin, run_playbook, tmp_path, browser):
    run = run_report(twin, run_playbook, tmp_path)
    assert sorted(os.listdir(str(tmp_path))) == ['support_report.html', 'support_report.json', 'support_report.md']
    seen = browser(tmp_path / 'support_report.html')
    assert seen['png_ok'] and seen['console'] == [], seen
    assert '<h1>EgressIP support report</h1>' in seen['dom'] and '<h2>Versions</h2>' in seen['dom']
    report, markdown = report_files(tmp_path)
    assert report['kind'] == 'support' and report['status'] == 'failing'
    assert report['verdict'].startswith('Not healthy: ') and report['verdict'].endswith(OUTSIDE)
    assert {'portgroup_missing', 'egressip_object_missing'} <= set(ids(report, 'error'))
    assert report['versions']['openshift'].startswith('4.') and report['versions']['vcenter']
    assert report['versions']['collection'] == '0.1.0' and report['versions']['ansible_core']
    assert report['configuration']['network']['cidr'] == '10.20.0.0/24' and report['configuration']['acknowledge_unsupported'] is True
    assert [row['ip'] for row in report['placement']] == ['10.20.0.200', '10.20.0.201']
    assert all(row.get('missing') for row in report['placement'])
    assert report['what_if'] == [] and report['checked'] == {'vcenter': True, 'pods': True, 'unreadable': []}
    assert markdown.startswith('# EgressIP support report\n\n**Not healthy: ')
    for section in ('## Support status', '## Versions', '## Configuration', '## Findings', '## Placement', '## Egress nodes',
                    '## What if a node fails', '## EgressIPs on the primary network'):
        assert section in markdown
    assert report['verdict'] in run.stdout and 'support_report.md' in run.stdout
    reads.assert_report_names_the_cluster(twin, report, markdown, read(tmp_path, 'support_report.html'))
    assert report['generated_at'] == report['about']['generated_at']
    assert report['cluster']['platform'] == 'VSphere'  # beside the facts preflight shows


def test_without_variables_only_the_cluster_is_described(twin, run_playbook, tmp_path):
    twin.reset_kube_requests()
    run = run_playbook(PLAYBOOK, [{'egressip_report_dir': str(tmp_path)}])
    assert run.rc == 0, run
    assert kube_writes(twin) == 0
    report, markdown = report_files(tmp_path)
    assert report['status'] == 'not_configured' and report['verdict'] == 'No secondary-network EgressIP is configured'
    assert report['checked']['vcenter'] is False and 'Not read (the checks that need them were skipped): vCenter' in markdown
    assert 'Red Hat' not in report['verdict']


# --- after enable ----------------------------------------------------------------------------------

def test_enable_then_report_is_healthy_with_placement_and_what_if(twin, run_playbook, tmp_path):
    enable = run_playbook('playbooks/enable.yml', [VARIABLES_FILE])
    assert enable.rc == 0, enable
    run = run_report(twin, run_playbook, tmp_path)
    report, markdown = report_files(tmp_path)
    assert report['status'] in ('healthy', 'degraded'), report['findings']
    assert report['verdict'].endswith('; ' + OUTSIDE) and report['verdict'].startswith('Configured and healthy')
    assert ids(report, 'error') == []
    assignments = ec.assignments(twin)
    assert dict((row['ip'], row['node']) for row in report['placement']) == assignments
    assert report['summary']['assigned'] == 2 and report['summary']['egress_ips'] == 2
    assert [row['node'] for row in report['what_if']] == ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
    hosting = [row for row in report['what_if'] if row['node'] in assignments.values()]
    assert hosting and all(row['effect'] == 'moves' and row['moved'] for row in hosting)
    assert report['single_points_of_failure'] == []
    assert all(row['path_ok'] is True and row['nic_connected'] is True and row['labelled'] for row in report['nodes'])
    assert '**%s.**' % report['verdict'] in markdown and '```mermaid' in markdown
    assert 'Configured and healthy' in run.stdout


def test_a_second_report_compares_the_primary_egress_ips_with_the_first(twin, run_playbook, tmp_path):
    run_report(twin, run_playbook, tmp_path)
    first, _markdown = report_files(tmp_path)
    assert first['primary_egressips']['changed'] is None
    run_report(twin, run_playbook, tmp_path)
    second, markdown = report_files(tmp_path)
    assert second['primary_egressips']['recorded'] == [] and second['primary_egressips']['changed'] == []
    assert 'Unchanged since the recorded state.' in markdown


def test_a_blackhole_makes_the_report_fail_without_changing_anything(twin, run_playbook, tmp_path):
    victim = ec.assignments(twin)['10.20.0.200']
    ec.set_nic_connected(twin, victim, False)
    try:
        run_report(twin, run_playbook, tmp_path)
        report, markdown = report_files(tmp_path)
    finally:
        ec.set_nic_connected(twin, victim, True)
    assert report['status'] == 'failing' and 'egressip_blackhole' in report['verdict']
    assert [row['path_ok'] for row in report['nodes'] if row['name'] == victim] == [False]
    assert 'BROKEN' in markdown and 'egressip_blackhole' in markdown
    assert ec.assignments(twin)['10.20.0.200'] == victim  # the report only looks
