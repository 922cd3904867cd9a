"""playbooks/verify.yml and playbooks/failover_drill.yml end to end against the twin, from the twin's variables file.

The cluster is made egress-ready by hand (tests/integration/modules/_egress_cluster.py) so these tests do not depend
on the enable flow. Verify: check mode writes nothing, two runs give the same report and change nothing in the
cluster. Drill: each trigger (unlabel, disconnect_nic with blackhole detection and remediation, power_off with its
confirmation) with measured times in the report; times are checked for consistency only, never for speed.
"""

import datetime
import json
import os
import re
import sys

import pytest

from twin.fixture import vcsim_writes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _egress_cluster as ec  # noqa: E402  pylint: disable=wrong-import-position
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 21, 'carrier_loss': 'keep'}  # ignore-carrier: blackholes
VARIABLES_FILE = '@examples/twin-cluster.yml'
FAST = {'egressip_verify': {'wire': {'echo_target': ec.ECHO_TARGET}},
        'egressip_drill': {'poll_interval': 0.2, 'observe_seconds': 1.5, 'wait_timeout': 60}}


@pytest.fixture(scope='module', autouse=True)
def egress_ready(twin):
    return ec.make_egress_cluster(twin)


def extra(report_dir, **more):
    values = dict(FAST, egressip_report_dir=str(report_dir))
    values.update(more)
    return [VARIABLES_FILE, values]


def read(report_dir, name):
    with open(os.path.join(str(report_dir), name), encoding='utf-8') as handle:
        return handle.read()


def test_verify_playbook_in_check_mode_writes_nothing(twin, run_playbook, tmp_path):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run = run_playbook('playbooks/verify.yml', extra(tmp_path), check=True, diff=True)
    assert run.rc == 0, run
    assert ec.kube_writes(twin) == [] and vcsim_writes(twin) == {}
    assert os.listdir(str(tmp_path)) == []


def test_verify_playbook_writes_the_reports_and_a_second_run_gives_the_same(twin, run_playbook, tmp_path, browser):
    started = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    run = run_playbook('playbooks/verify.yml', extra(tmp_path))
    assert run.rc == 0, run
    assert sorted(os.listdir(str(tmp_path))) == ['verify.html', 'verify.json', 'verify.md']
    seen = browser(tmp_path / 'verify.html')
    assert seen['png_ok'] and seen['console'] == [], seen
    egress_nodes = [node['name'] for node in json.loads(read(tmp_path, 'verify.json'))['nodes']]
    assert seen['dom'].count('<g class="node ') == len(egress_nodes) and all('data-node="%s"' % name in seen['dom'] for name in egress_nodes)
    report = json.loads(read(tmp_path, 'verify.json'))
    assert report['kind'] == 'verify' and report['summary']['ok'] is True and report['summary']['healthy'] == 2
    markdown = read(tmp_path, 'verify.md')
    assert markdown.startswith('# EgressIP verification\n\n**Result: PASSED**')
    assert '## Egress IPs' in markdown and '## Nodes' in markdown and '## Wire check' in markdown and '```mermaid' in markdown
    reads.assert_report_names_the_cluster(twin, report, markdown, read(tmp_path, 'verify.html'), started)
    assert '<dt>Cluster ID</dt><dd>%s</dd>' % report['cluster']['id'] in seen['dom']
    first = (read(tmp_path, 'verify.json'), read(tmp_path, 'verify.md'))
    twin.reset_kube_requests()
    again = run_playbook('playbooks/verify.yml', extra(tmp_path))
    assert again.rc == 0, again
    assert set(write[1] for write in ec.kube_writes(twin)) == {'pods'}  # the probe pod, created and deleted; nothing else
    # the same report bytes change nothing; the probe may see the other egress IP of the object (ECMP), which is a change
    same = (read(tmp_path, 'verify.json'), read(tmp_path, 'verify.md')) == first
    assert again.changed == (0 if same else 1)
    # a report that says the same keeps its files and their time; another one is made now
    assert (json.loads(read(tmp_path, 'verify.json'))['generated_at'] == report['generated_at']) == same


def test_verify_playbook_fails_on_a_blackhole_after_writing_the_report(twin, run_playbook, tmp_path):
    victim = ec.assignments(twin)['10.20.0.200']
    ec.set_nic_connected(twin, victim, False)
    try:
        run = run_playbook('playbooks/verify.yml', extra(tmp_path, egressip_verify={}))
        assert run.rc != 0 and run.recap['localhost']['failed'] == 1, run
        # one per IP (egressip_blackhole) and one per node naming the kind (the node keeps its address: ignore-carrier)
        assert 'Verification found 2 error(s)' in run.stdout and 'is disconnected' in run.stdout and 'Fix:' in run.stdout
        markdown = read(tmp_path, 'verify.md')
        assert '**Result: FAILED**' in markdown and '| BLACKHOLE |' in markdown and '`egressip_blackhole`' in markdown
        assert '`blackhole_nic_disconnected`' in markdown
        assert 'DISCONNECTED' in markdown
    finally:
        ec.set_nic_connected(twin, victim, True)


def test_drill_unlabel_each_egress_node_in_turn(twin, run_playbook, tmp_path, browser):
    before = ec.assignments(twin)
    run = run_playbook('playbooks/failover_drill.yml', extra(tmp_path))
    assert run.rc == 0, run
    report = json.loads(read(tmp_path, 'failover_drill.json'))
    summary = report['summary']
    assert summary['ok'] is True and summary['steps'] == 2 and sorted(summary['nodes']) == sorted(set(before.values()))
    assert summary['moved'] == 2 and summary['prediction_held'] is True and summary['failback'] is False
    assert summary['cordon_moved'] is False
    # the summary line gives seconds for people (two decimals), the JSON keeps the measurement
    assert re.search(r'slowest reassignment [0-9]+\.[0-9]{2} s;', run.stdout), run.stdout
    for step in report['steps']:
        move = step['failure']['moves'][0]
        assert move['from'] == step['node'] and move['to'] not in (None, step['node']) and move['seconds'] > 0
        assert step['failure']['comparison'][0]['ok'] is True
        assert step['failure']['wire'][0]['ok'] is True and step['failure']['wire'][0]['seconds'] >= move['seconds']
        assert step['restore']['action'] == 'label' and step['restore']['unexpected_moves'] == []
    assert all(ec.labelled(twin, node) for node in ec.workers(twin))
    markdown = read(tmp_path, 'failover_drill.md')
    assert markdown.startswith('# EgressIP failover drill\n\n**Result: PASSED**')
    assert '## Steps' in markdown and '## Cordon moves nothing' in markdown and 'no failback' in markdown
    assert '## Final state' in markdown and '```mermaid' in markdown
    assert os.path.exists(os.path.join(str(tmp_path), 'failover_drill_baseline.md'))
    # the drill names the cluster and the time of its final verification
    assert report['generated_at'] == report['final']['generated_at'] >= report['baseline']['generated_at']
    reads.assert_report_names_the_cluster(twin, report, markdown, read(tmp_path, 'failover_drill.html'))
    seen = browser(tmp_path / 'failover_drill.html')
    assert seen['png_ok'] and seen['console'] == [], seen
    assert '<h2>Steps</h2>' in seen['dom'] and seen['dom'].count('<g class="node ') == len(report['final']['nodes'])


def test_drill_disconnect_nic_detects_and_remediates_the_blackhole(twin, run_playbook, tmp_path):
    node = ec.assignments(twin)['10.20.0.201']
    run = run_playbook('playbooks/failover_drill.yml',
                       extra(tmp_path, egressip_drill=dict(FAST['egressip_drill'], trigger='disconnect_nic', nodes=[node], cordon_check=False)))
    assert run.rc == 0, run
    report = json.loads(read(tmp_path, 'failover_drill.json'))
    step = report['steps'][0]
    assert step['failure']['prediction']['effect'] == 'blackhole' and step['failure']['unexpected_moves'] == []
    assert step['remediation']['detected'] is True and step['remediation']['nodes'] == [node]
    move = step['remediation']['moves'][0]
    assert move['from'] == node and move['to'] not in (None, node) and move['seconds'] > 0
    assert step['restore']['action'] == 'reconnect_nic+label'
    assert report['step_summaries'][0]['blackhole_detected'] is True and report['step_summaries'][0]['reassigned_seconds'] > 0
    assert report['summary']['ok'] is True and report['cordon'] is None
    assert ec.labelled(twin, node)
    assert all(nic['connected'] for nic in ec.inventory_vm(twin, node)['nics'])
    assert 'OVN-Kubernetes does not notice a disconnected secondary vNIC' in read(tmp_path, 'failover_drill.md')


def test_drill_power_off_needs_its_confirmation(twin, run_playbook, tmp_path):
    twin.reset_vcsim_requests()
    run = run_playbook('playbooks/failover_drill.yml', extra(tmp_path, egressip_drill={'trigger': 'power_off'}))
    assert run.rc != 0 and 'confirm_power_off' in run.stdout, run
    assert vcsim_writes(twin) == {}


def test_drill_power_off_with_confirmation(twin, run_playbook, tmp_path):
    node = ec.assignments(twin)['10.20.0.200']
    drill = dict(FAST['egressip_drill'], trigger='power_off', confirm_power_off=True, nodes=[node], cordon_check=False)
    run = run_playbook('playbooks/failover_drill.yml', extra(tmp_path, egressip_drill=drill))
    assert run.rc == 0, run
    report = json.loads(read(tmp_path, 'failover_drill.json'))
    step = report['steps'][0]
    move = step['failure']['moves'][0]
    assert move['from'] == node and move['to'] not in (None, node) and move['seconds'] > 0
    assert step['failure']['comparison'][0]['ok'] is True
    assert step['restore']['action'] == 'power_on' and ec.inventory_vm(twin, node)['power_state'] == 'poweredOn'
    assert report['summary']['failback'] is False


def test_drill_in_check_mode_changes_nothing(twin, run_playbook, tmp_path):
    before = ec.assignments(twin)
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run = run_playbook('playbooks/failover_drill.yml', extra(tmp_path), check=True)
    assert run.rc == 0, run
    assert ec.kube_writes(twin) == [] and vcsim_writes(twin) == {}
    assert ec.assignments(twin) == before and os.listdir(str(tmp_path)) == []
