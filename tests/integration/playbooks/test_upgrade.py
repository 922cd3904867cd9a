"""playbooks/upgrade.yml end to end on the twin, on a cluster enabled by the collection (4 workers, EgressIP payments with 2 IPs).

pre: check mode writes nothing; the snapshot, and a rerun that changes nothing; refusals (too many nodes rebooting at once,
a target older than 4.14). A rolling reboot as an OpenShift upgrade does it (each egress node NotReady in turn, then the new
version). post: movements reported, verify passes, reruns change nothing; a missing snapshot fails. collection: an object
left by an "older version" (a marked policy without its allocation annotation) is converged without moving anything.
"""

import json
import os
import sys

import pytest
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position

TWIN_OPTIONS = {'workers': 4}
pytestmark = pytest.mark.slow
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
WORKERS = ['ocp1-worker-%d' % index for index in range(4)]
NNCP = dict(group='nmstate.io', version='v1', plural='nodenetworkconfigurationpolicies')


@pytest.fixture(scope='module')
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp('upgrade')
    with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
        variables = yaml.safe_load(handle)
    # without the wire check of verify, whose probe pods are writes even when nothing changes
    (folder / 'cluster.yml').write_text(yaml.safe_dump(dict((key, value) for key, value in variables.items()
                                                            if key not in ('egressip_verify', 'egressip_drill'))))
    return folder


@pytest.fixture
def enabled(twin, files, run_playbook):
    """The cluster enabled by the collection (once per module: the twin handle keeps the assignment taken then)."""
    if getattr(twin, 'enabled_assignments', None) is None:
        run = run_playbook('playbooks/enable.yml', extra_vars='@%s' % (files / 'cluster.yml'))
        assert run.rc == 0, run
        twin.enabled_assignments = reads.assignments(twin)
    return twin.enabled_assignments


def upgrade_vars(files, phase, **extra):
    return ['@%s' % (files / 'cluster.yml'), dict({'upgrade_phase': phase, 'upgrade_snapshot_file': str(files / 'snapshot.json')}, **extra)]


def set_ready(twin, node, ready):
    condition = {'type': 'Ready', 'status': 'True' if ready else 'False', 'reason': 'KubeletReady' if ready else 'KubeletNotReady',
                 'message': 'kubelet is posting ready status' if ready else 'node is rebooting'}
    twin.core_v1().patch_node_status(node, {'status': {'conditions': [condition]}})


def test_pre_in_check_mode_writes_nothing(twin, enabled, files, run_playbook):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'pre', upgrade_target_version='4.17.3'), check=True)
    assert run.rc == 0, run
    reads.assert_nothing_written(twin)
    assert not (files / 'snapshot.json').exists()
    assert reads.assignments(twin) == enabled


def test_pre_writes_the_snapshot_and_a_rerun_changes_nothing(twin, enabled, files, run_playbook):
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'pre', upgrade_target_version='4.17.3'))
    assert run.rc == 0, run
    assert run.changed == 1, run
    assert 'payments: 4 capable - 1 rebooting = 3 (needs 3)' in run.stdout, run
    snapshot = json.loads((files / 'snapshot.json').read_text())
    assert snapshot['target_version'] == '4.17.3'
    rows = [row for row in snapshot['record']['egress_ips'] if row['egressip'] == 'payments']
    assert sorted(row['ip'] for row in rows) == ['10.20.0.200', '10.20.0.201'] and all(row['node'] for row in rows)
    reads.reset_requests(twin)
    again = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'pre', upgrade_target_version='4.17.3'))
    assert again.rc == 0 and again.changed == 0, again
    reads.assert_nothing_written(twin)


def test_pre_refuses_too_many_nodes_rebooting_at_once(twin, enabled, files, run_playbook):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(
        files, 'pre', upgrade_max_unavailable=2, upgrade_snapshot_file=str(files / 'other.json')))
    assert run.rc != 0, run
    assert 'upgrade_capacity_insufficient' in run.stdout and 'of 4 capable egress node(s) up to 2 reboot at once' in run.stdout, run
    reads.assert_nothing_written(twin)


def test_pre_refuses_a_target_older_than_4_14(twin, enabled, files, run_playbook):
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(
        files, 'pre', upgrade_target_version='4.13.9', upgrade_snapshot_file=str(files / 'other.json')))
    assert run.rc != 0, run
    assert 'upgrade_target_version_unsupported' in run.stdout, run


def test_post_without_a_snapshot_fails(twin, enabled, files, run_playbook):
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'post', upgrade_snapshot_file=str(files / 'missing.json')))
    assert run.rc != 0, run
    assert 'lifecycle_baseline_invalid' in run.stdout, run


def test_post_reports_the_moves_of_a_rolling_reboot(twin, enabled, files, run_playbook):
    # the node that hosted the first egress IP reboots last: that IP leaves it then and nothing moves it back, so the
    # reboot moves at least that IP whichever nodes the cluster manager has seen Ready again at each failover
    last = enabled[sorted(enabled)[0]]
    for node in [name for name in WORKERS if name != last] + [last]:
        set_ready(twin, node, False)
        twin.wait_for(lambda node=node: node not in reads.assignments(twin).values() and len(reads.assignments(twin)) == 2, timeout=30,
                      what='the egress IPs of rebooting %s to fail over' % node)
        set_ready(twin, node, True)
    twin.custom_objects().patch_cluster_custom_object_status(
        'config.openshift.io', 'v1', 'clusterversions', 'version', {'status': {'desired': {'version': '4.17.3'}}})
    moved = sorted(key[1] for key, node in reads.assignments(twin).items() if enabled[key] != node)
    assert moved, 'the rolling reboot moved at least one egress IP'
    reads.reset_requests(twin)
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'post'), check=True)
    assert run.rc == 0, run
    reads.assert_nothing_written(twin)
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'post'))
    assert run.rc == 0, run
    assert run.changed == 0, run
    for ip in moved:
        assert 'moved: payments %s from' % ip in run.stdout, run
    assert 'INFO [upgrade_version_changed] OpenShift went from 4.16.21 to 4.17.3.' in run.stdout, run
    assert '2 egress IP(s), 2 assigned, 2 healthy, 0 blackholed' in run.stdout, run


def test_collection_upgrade_converges_marked_objects_without_moving_anything(twin, enabled, files, run_playbook):
    before = reads.assignments(twin)
    policy = twin.custom_objects().get_cluster_custom_object(name='egressip-ocp1-worker-0', **NNCP)
    address = policy['metadata']['annotations'].pop('egressip.ocp/addresses')
    twin.custom_objects().replace_cluster_custom_object(name='egressip-ocp1-worker-0', body=policy, **NNCP)
    reads.reset_requests(twin)
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'collection'), check=True, diff=True)
    assert run.rc == 0, run
    assert 'upgrade_marked_object_incomplete' in run.stdout and 'egressip-ocp1-worker-0' in run.stdout, run
    reads.assert_nothing_written(twin)
    run = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'collection'))
    assert run.rc == 0, run
    assert run.changed >= 1, run
    assert 'no egress IP moved, no node address dropped, no label changed' in run.stdout, run
    policy = twin.custom_objects().get_cluster_custom_object(name='egressip-ocp1-worker-0', **NNCP)
    assert policy['metadata']['annotations']['egressip.ocp/addresses'] == address
    assert reads.assignments(twin) == before
    reads.reset_requests(twin)
    again = run_playbook('playbooks/upgrade.yml', extra_vars=upgrade_vars(files, 'collection'))
    assert again.rc == 0 and again.changed == 0, again
    reads.assert_nothing_written(twin)
    assert yaml.safe_load((files / 'cluster.yml').read_text())['egressip_network']['cidr'] == '10.20.0.0/24'
