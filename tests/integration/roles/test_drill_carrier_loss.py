"""playbooks/failover_drill.yml with trigger disconnect_nic on a twin whose NetworkManager removes the address (no
ignore-carrier, the twin's default): the step is a failover measured against the prediction, verify's remediation does
not run (there is no blackhole), the report says which carrier-loss behaviour was assumed and which was observed, and
the restore reconnects the vNIC (the address comes back) without failback. The ignore-carrier side (blackhole detected
and remediated) is test_verify_and_drill_playbooks.py.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _egress_cluster as ec  # noqa: E402  pylint: disable=wrong-import-position

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 23, 'carrier_loss': 'remove', 'carrier_loss_delay': 1.0}
VARIABLES_FILE = '@examples/twin-cluster.yml'
DRILL = {'poll_interval': 0.2, 'observe_seconds': 5, 'wait_timeout': 60, 'trigger': 'disconnect_nic', 'cordon_check': False}


def read(report_dir, name):
    with open(os.path.join(str(report_dir), name), encoding='utf-8') as handle:
        return handle.read()


def test_drill_disconnect_nic_without_ignore_carrier_is_a_measured_failover(twin, run_playbook, tmp_path):
    ec.make_egress_cluster(twin)
    node = ec.assignments(twin)['10.20.0.200']
    run = run_playbook('playbooks/failover_drill.yml', [VARIABLES_FILE, {
        'egressip_report_dir': str(tmp_path), 'egressip_verify': {'wire': {'echo_target': ec.ECHO_TARGET}},
        'egressip_drill': dict(DRILL, nodes=[node])}])
    assert run.rc == 0, run
    report = json.loads(read(tmp_path, 'failover_drill.json'))
    step = report['steps'][0]
    failure = step['failure']
    assert failure['carrier_loss']['predicted'] == 'remove' and failure['carrier_loss']['observed'] == 'remove'
    assert failure['carrier_loss']['source'].startswith('assumed')
    assert failure['prediction']['effect'] == 'moves' and failure['comparison'][0]['ok'] is True
    move = failure['moves'][0]
    assert move['from'] == node and move['to'] not in (None, node) and move['seconds'] > 0
    assert step['remediation'] is None  # no blackhole: verify's remediation did not run
    assert step['restore']['action'] == 'reconnect_nic' and step['restore']['unexpected_moves'] == []
    summary = report['step_summaries'][0]
    assert summary['moved'] == 1 and summary['blackhole_detected'] is False and summary['reassigned_seconds'] > 0
    assert report['summary']['ok'] is True
    markdown = read(tmp_path, 'failover_drill.md')
    assert 'Carrier loss: predicted remove (assumed' in markdown and 'NetworkManager removed the address (no ignore-carrier)' in markdown
    assert ec.labelled(twin, node) and ec.assignments(twin)['10.20.0.200'] == move['to']  # no failback
    assert any(entry.startswith('10.20.0.') for entry in ec.host_cidrs(twin, node))  # autoconnect gave the address back
