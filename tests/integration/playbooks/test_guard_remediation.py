"""playbooks/guard.yml with egressip_guard.remediate against the twin: the guarded remediation.

Four egress nodes, EgressIP payments with two IPs (so the variables ask for at least two egress nodes); both nodes
hosting them and one idle node broken. A round that finds the lock held by another run verifies and records without
remediating; check mode writes nothing. Then a round moves the IPs of at most max_remediations nodes under the cluster
lock (and unlabels the idle broken node with them, so nothing lands there), writes a Normal EgressIPRemediated Event
on the object and the remediated-at annotation on the nodes, and keeps what it deferred in the status ConfigMap; the
next round stops at the floor of egress nodes; a node that was fixed, labelled again, took an IP and broke again within
the hold-down keeps its label.
"""

import datetime
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _egress_cluster as ec  # noqa: E402  pylint: disable=wrong-import-position
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.slow

TWIN_OPTIONS = {'workers': 4, 'carrier_loss': 'keep'}  # a disconnected vNIC keeps its address: a blackhole
VARIABLES_FILE = '@examples/twin-cluster.yml'
GUARD = {'egressip_guard': {'remediate': True, 'max_remediations': 1, 'hold_down': 3600}}
STATUS = ('openshift-machine-api', 'egressip-guard-status')
REMEDIATED_AT = 'egressip.ocp/remediated-at'


@pytest.fixture(scope='module', autouse=True)
def egress_ready(twin):
    return ec.make_egress_cluster(twin)


def events(twin, reason):
    items = twin.core_v1().list_namespaced_event('default', field_selector='involvedObject.name=payments,reason=%s' % reason).items
    return sorted(items, key=lambda item: item.metadata.name)


def status(twin):
    return json.loads(twin.core_v1().read_namespaced_config_map(STATUS[1], STATUS[0]).data['status.json'])


def annotation(twin, node):
    return (twin.core_v1().read_node(node).metadata.annotations or {}).get(REMEDIATED_AT)


@pytest.fixture(scope='module')
def broken(twin):
    """Both nodes hosting an IP of payments (first and second by name) and one idle node, their egress vNIC disconnected."""
    hosting = sorted(ec.assignments(twin).values())
    idle = sorted(set(ec.workers(twin)) - set(hosting))
    for node in hosting + idle[:1]:
        ec.set_nic_connected(twin, node, False)
    return {'first': hosting[0], 'second': hosting[1], 'idle': idle[0], 'healthy': idle[1]}


def test_check_mode_writes_nothing(twin, run_playbook, broken):
    twin.reset_kube_requests()
    run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE, GUARD], check=True, diff=True)
    assert ec.kube_writes(twin) == [], run
    assert all(ec.labelled(twin, node) for node in broken.values())
    assert events(twin, 'EgressIPRemediated') == []


def test_a_round_that_finds_the_lock_held_records_without_remediating(twin, run_playbook, broken):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    now = datetime.datetime.now(datetime.timezone.utc)
    client.CoordinationV1Api(twin.api_client()).create_namespaced_lease('openshift-machine-api', {
        'metadata': {'name': 'egressip-lock'},
        'spec': {'holderIdentity': 'someone@elsewhere/enable', 'leaseDurationSeconds': 600, 'acquireTime': now, 'renewTime': now}})
    try:
        run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE, GUARD])
    finally:
        client.CoordinationV1Api(twin.api_client()).delete_namespaced_lease('egressip-lock', 'openshift-machine-api')
    assert run.rc != 0, run  # the blackhole is an error finding, recorded and failed on
    assert 'Not remediated: ' in run.stdout and 'someone@elsewhere/enable' in run.stdout, run
    assert all(ec.labelled(twin, node) for node in broken.values()), 'nothing was unlabelled'
    body = status(twin)
    locked = [item for item in body['findings'] if item['id'] == 'guard_remediation_locked']
    assert len(locked) == 1 and locked[0]['severity'] == 'warning' and 'someone@elsewhere/enable' in locked[0]['message']
    assert body['objects']['payments']['state'] == 'blackhole' and 'remediation' not in body
    assert [item.type for item in events(twin, 'EgressIPBlackhole')] == ['Warning']


def test_a_round_moves_the_ips_of_one_node_unlabels_the_idle_broken_one_and_defers_the_rest(twin, run_playbook, broken):
    ip = next(ip for ip, node in ec.assignments(twin).items() if node == broken['first'])
    run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE, GUARD])
    assert 'Remediation: unlabelled %s, %s, deferred %s.' % (broken['first'], broken['idle'], broken['second']) in run.stdout, run
    assert not ec.labelled(twin, broken['first']) and not ec.labelled(twin, broken['idle']) and ec.labelled(twin, broken['second'])
    for node in (broken['first'], broken['idle']):
        stamp = annotation(twin, node)
        assert stamp and datetime.datetime.strptime(stamp, '%Y-%m-%dT%H:%M:%SZ'), stamp
    assert annotation(twin, broken['second']) is None
    assert ec.assignments(twin)[ip] == broken['healthy'], 'the only capable node that hosts no other IP of payments'
    remediated = events(twin, 'EgressIPRemediated')
    assert [(item.type, item.count) for item in remediated] == [('Normal', 1)]
    assert 'removed the k8s.ovn.org/egress-assignable label of %s' % broken['first'] in remediated[0].message
    assert '%s moved from %s to %s' % (ip, broken['first'], broken['healthy']) in remediated[0].message
    body = status(twin)
    assert body['remediation']['nodes'] == [broken['first'], broken['idle']]
    assert 'its limit (egressip_guard.max_remediations)' in body['remediation']['deferred'][broken['second']]
    assert [item['id'] for item in body['findings'] if item['id'] == 'egressip_remediation_deferred'] == ['egressip_remediation_deferred']
    assert body['objects']['payments']['state'] == 'blackhole', 'the second IP is still on a broken node'
    assert reads.lease(twin).spec.holder_identity is None, 'the round released the lock'


def test_the_next_round_stops_at_the_floor_of_egress_nodes(twin, run_playbook, broken):
    run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE, GUARD])
    assert run.rc != 0 and 'Remediation: unlabelled no node, deferred %s.' % broken['second'] in run.stdout, run
    assert ec.labelled(twin, broken['second'])
    deferred = status(twin)['remediation']['deferred'][broken['second']]
    assert 'would leave 1 egress-assignable node(s), below the 2 the variables ask for' in deferred, deferred
    assert len(events(twin, 'EgressIPRemediated')) == 1


def test_a_node_that_took_an_ip_and_broke_again_within_the_hold_down_keeps_its_label(twin, run_playbook, broken):
    ec.set_nic_connected(twin, broken['idle'], True)  # fixed, and labelled again as enable would
    ec.label(twin, broken['idle'])
    twin.wait_for(lambda: run_playbook('playbooks/guard.yml', [VARIABLES_FILE, GUARD]).rc == 0, timeout=120, interval=2,
                  what="a round to move the second node's IP to the fixed node")
    assert broken['idle'] in ec.assignments(twin).values() and not ec.labelled(twin, broken['second'])
    stamp = annotation(twin, broken['idle'])
    ec.set_nic_connected(twin, broken['idle'], False)  # and broken again
    run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE, GUARD])
    assert run.rc != 0 and 'deferred %s.' % broken['idle'] in run.stdout, run
    assert ec.labelled(twin, broken['idle']) and annotation(twin, broken['idle']) == stamp
    deferred = status(twin)['remediation']['deferred'][broken['idle']]
    assert 'within the hold-down of 3600 s (egressip_guard.hold_down)' in deferred, deferred
