"""playbooks/guard.yml against the twin: a round on a healthy cluster, a blackhole (the egress vNIC of the node hosting
an IP disconnected, NetworkManager keeping the address), the same blackhole a round later, and the recovery.

What an operator sees is checked where they would look: the Events of the EgressIP object (as `oc describe egressip`
selects them: involvedObject kind, name and uid, in namespace default) and the status ConfigMap. An Event someone else
wrote about the same object is left alone.
"""

import json
import os
import shutil
import sys
import urllib.parse

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _egress_cluster as ec  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.slow

TWIN_OPTIONS = {'workers': 3, 'carrier_loss': 'keep'}  # ignore-carrier: a disconnected vNIC keeps its address, a blackhole
VARIABLES_FILE = '@examples/twin-cluster.yml'
STATUS = ('openshift-machine-api', 'egressip-guard-status')


@pytest.fixture(scope='module', autouse=True)
def egress_ready(twin):
    return ec.make_egress_cluster(twin)


def events_of(twin, name='payments'):
    """The Events `oc describe egressip <name>` shows, oldest first."""
    uid = ec.egressip(twin, name)['metadata']['uid']
    selector = 'involvedObject.kind=EgressIP,involvedObject.name=%s,involvedObject.uid=%s' % (name, uid)
    items = twin.core_v1().list_namespaced_event('default', field_selector=selector).items
    return sorted(items, key=lambda item: (item.first_timestamp.isoformat() if item.first_timestamp else '', item.metadata.name))


def status(twin):
    configmap = twin.core_v1().read_namespaced_config_map(STATUS[1], STATUS[0])
    return configmap.data['verdict'], json.loads(configmap.data['status.json'])


def test_check_mode_writes_nothing(twin, run_playbook):
    twin.reset_kube_requests()
    run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE], check=True, diff=True)
    assert run.rc == 0, run
    assert ec.kube_writes(twin) == []
    assert events_of(twin) == []


def test_a_healthy_round_records_ok_and_writes_no_event(twin, run_playbook):
    # someone else's Event about the same object (OVN-K writes some): never touched
    twin.core_v1().create_namespaced_event('default', {
        'metadata': {'name': 'payments.by-someone-else'}, 'reason': 'Observed', 'message': 'written by hand', 'type': 'Normal',
        'involvedObject': {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'name': 'payments',
                           'uid': ec.egressip(twin, 'payments')['metadata']['uid']}})
    twin.reset_kube_requests()
    run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE])
    assert run.rc == 0, run
    assert 'Guard round: ok' in run.stdout and 'every object healthy' in run.stdout, run
    writes = ec.kube_writes(twin)
    # the twin's variables file has the wire check: its probe pods, created and deleted; then the ConfigMap, no Event
    assert [(verb, resource) for verb, resource, _name in writes if resource != 'pods'] == [('create', 'configmaps')], writes
    verdict, body = status(twin)
    assert verdict == 'ok' and body['objects']['payments']['state'] == 'healthy' and body['events'] == []
    assert [item.metadata.name for item in events_of(twin)] == ['payments.by-someone-else']


def test_a_blackhole_gives_one_warning_event_that_counts_the_rounds_and_the_round_fails(twin, run_playbook):
    node = ec.assignments(twin)['10.20.0.200']
    ec.set_nic_connected(twin, node, False)
    run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE])
    assert run.rc != 0, run
    assert 'The guard round found' in run.stdout and 'EgressIPBlackhole' in run.stdout, run
    warnings = [item for item in events_of(twin) if item.type == 'Warning']
    assert [(item.reason, item.count) for item in warnings] == [('EgressIPBlackhole', 1)]
    event = warnings[0]
    assert node in event.message and '10.20.0.200' in event.message and 'Fix:' in event.message
    assert event.source.component == 'ocp.egressip-guard' and event.first_timestamp == event.last_timestamp
    verdict, body = status(twin)
    assert verdict == 'error' and body['objects']['payments']['state'] == 'blackhole'
    assert body['counts']['blackholed'] >= 1
    again = run_playbook('playbooks/guard.yml', [VARIABLES_FILE])
    assert again.rc != 0, again
    warnings = [item for item in events_of(twin) if item.type == 'Warning']
    assert [(item.metadata.name, item.reason, item.count) for item in warnings] == [(event.metadata.name, 'EgressIPBlackhole', 2)]
    assert status(twin)[1]['objects']['payments']['since'] == body['objects']['payments']['since']


def test_the_recovery_says_healthy_once(twin, run_playbook):
    for name in ec.workers(twin):
        ec.set_nic_connected(twin, name, True)
    twin.wait_for(lambda: run_playbook('playbooks/guard.yml', [VARIABLES_FILE]).rc == 0, timeout=120, interval=2,
                  what='a guard round to pass after the vNIC is connected again')
    normal = [item for item in events_of(twin) if item.reason == 'EgressIPHealthy']
    assert [(item.type, item.count) for item in normal] == [('Normal', 1)]
    assert 'healthy again' in normal[0].message
    verdict, body = status(twin)
    assert verdict == 'ok' and body['objects']['payments']['state'] == 'healthy'
    quiet = run_playbook('playbooks/guard.yml', [VARIABLES_FILE])
    assert quiet.rc == 0, quiet
    assert len([item for item in events_of(twin) if item.metadata.name != 'payments.by-someone-else']) == 2, 'healthy stays quiet'


SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'


@pytest.fixture
def pod_service_account(twin):
    """The token and CA where a Pod has them (the in-cluster CronJob's path); needs root, and the directory not in use."""
    if os.path.exists(SERVICE_ACCOUNT_DIR) or os.geteuid() != 0:
        pytest.skip('needs root and no %s on this machine (CI runs as root on a fresh machine)' % SERVICE_ACCOUNT_DIR)
    os.makedirs(SERVICE_ACCOUNT_DIR)
    try:
        with open(os.path.join(SERVICE_ACCOUNT_DIR, 'token'), 'w', encoding='utf-8') as handle:
            handle.write(twin.env['TWIN_KUBE_TOKEN'] + '\n')
        shutil.copyfile(twin.env['TWIN_CA_FILE'], os.path.join(SERVICE_ACCOUNT_DIR, 'ca.crt'))
        yield
    finally:
        shutil.rmtree('/var/run/secrets/kubernetes.io')
        if not os.listdir('/var/run/secrets'):
            os.rmdir('/var/run/secrets')


def test_a_round_runs_with_the_pods_service_account_as_the_cronjob_does(twin, run_playbook, pod_service_account):
    port = urllib.parse.urlsplit(twin.env['TWIN_KUBE_URL']).port
    env = {'KUBECONFIG': None, 'K8S_AUTH_KUBECONFIG': None, 'KUBERNETES_SERVICE_HOST': '127.0.0.1', 'KUBERNETES_SERVICE_PORT': str(port)}
    twin.reset_kube_requests()
    run = run_playbook('playbooks/guard.yml', [VARIABLES_FILE], env=env)
    assert run.rc == 0, run
    assert 'Guard round: ok' in run.stdout, run
    assert status(twin)[0] == 'ok'
    assert twin.kube_requests()['requests'], 'the round talked to the twin'
