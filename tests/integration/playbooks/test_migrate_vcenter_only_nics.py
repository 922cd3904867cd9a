"""migrate on a hand-made setup whose NICs were added in vCenter only (the Machines still list one device).

Machine API then reports `invalid network count` for those Machines. The only difference is the one NIC on the secondary
port group, which the vSphere step of enable fixes with align_machines (its default), so preflight's plan mode reports
`machine_nic_count_mismatch` as a notice, not an error: discovery succeeds and adoption goes through like
test_migrate.py, the egress nodes' Machines get the port group appended to their providerSpec, nothing moves, and a rerun
changes nothing. With alignment switched off (vsphere_network_align_machines=false) the mismatch stays an error and
enable's preflight stops the adoption before any write.
"""

import json
import os
import sys

import pytest
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _by_hand as bh  # noqa: E402  pylint: disable=wrong-import-order,wrong-import-position
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position

TWIN_OPTIONS = {'workers': 4}
pytestmark = pytest.mark.slow
NOTICE = 'enable will align the Machine\'s providerSpec'


hand_made, out = bh.module_fixtures('migrate_vcenter_only', machines=False)


def _machine_devices(twin):
    """{node: its Machine's providerSpec network device names}."""
    return dict((machine['status']['nodeRef']['name'],
                 [device['networkName'] for device in machine['spec']['providerSpec']['value']['network']['devices']])
                for machine in twin.custom_objects().list_namespaced_custom_object(**bh.MACHINES)['items']
                if (machine.get('status') or {}).get('nodeRef'))


def test_discovery_reports_the_mismatch_as_a_notice(twin, hand_made, run_playbook, out):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(out))
    assert run.rc == 0, run
    reads.assert_nothing_written(twin)
    assert yaml.safe_load((out / 'egressip-variables.yml').read_text())['egressip_network']['cidr'] == '10.30.0.0/24'
    report = json.loads((out / 'migrate.json').read_text())
    assert report['summary']['ok'], report['findings']
    mismatches = [item for item in report['findings'] if item['id'] == 'machine_nic_count_mismatch']
    assert sorted(item['objects'][0]['name'] for item in mismatches) == bh.EGRESS_NODES
    assert set(item['severity'] for item in mismatches) == {'info'}
    assert all(NOTICE in item['message'] for item in mismatches)
    assert 'Machine ocp1-worker-0 lists 1 network device(s), its VM ocp1-worker-0 has 2 NIC(s)' in (out / 'migrate.md').read_text()
    assert bh.assignments(twin) == hand_made['assignments']


def test_without_alignment_the_mismatch_stops_migrate_before_any_write(twin, hand_made, run_playbook, tmp_path):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(tmp_path, migrate_adopt=True, vsphere_network_align_machines=False))
    assert run.rc != 0, run
    assert 'machine_nic_count_mismatch' in run.stdout and 'nothing was written' in run.stdout, run
    reads.assert_nothing_written(twin)
    assert all(devices == ['VM Network'] for devices in _machine_devices(twin).values())
    assert bh.assignments(twin) == hand_made['assignments']


def test_adoption_aligns_the_machines_and_moves_nothing(twin, hand_made, run_playbook, out):
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(out, migrate_adopt=True))
    assert run.rc == 0, run
    assert run.changed > 0, run
    devices = _machine_devices(twin)
    for node in bh.EGRESS_NODES:
        assert devices[node] == ['VM Network', bh.PORTGROUP], node
    assert devices['ocp1-worker-3'] == ['VM Network']
    assert bh.assignments(twin) == hand_made['assignments']
    after = bh.all_host_cidrs(twin)
    for node, addresses in hand_made['host_cidrs'].items():
        assert set(addresses) <= set(after[node]), node
    report = json.loads((out / 'migrate.json').read_text())
    assert report['adoption_check']['ok'] and report['summary']['ok']


def test_rerun_changes_nothing_and_reports_no_mismatch(twin, hand_made, run_playbook, out):
    run = bh.adoption_rerun(twin, run_playbook, out, hand_made)
    assert 'machine_nic_count_mismatch' not in run.stdout, run
