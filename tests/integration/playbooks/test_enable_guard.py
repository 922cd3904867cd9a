"""playbooks/enable.yml and disable.yml with the in-cluster guard (egressip_guard.in_cluster.enabled): a missing image
and resources a request above its limit refused before the first write, enable applies the CronJob (with the resources
given) and the rest (the summary counts them), a rerun changes
nothing, a hand-made object of a guard name stops the run before its first write, check mode of disable writes
nothing, and disable removes the guard's objects."""

import pytest

from twin.fixture import vcsim_writes

pytestmark = pytest.mark.slow

VARIABLES = '@examples/twin-cluster.yml'
IMAGE = 'registry.example.com/platform/ocp-egressip-ee:1.0'
# written as a person might; the API server stores 200m, 768Mi, 1 and 768Mi, and a rerun must find them equal
RESOURCES = {'requests': {'cpu': 0.2, 'memory': '0.75Gi'}, 'limits': {'cpu': 1, 'memory': '768Mi'}}
GUARD = {'egressip_guard': {'in_cluster': {'enabled': True, 'image': IMAGE, 'resources': RESOURCES}}}
NAMESPACE = 'ocp-egressip-guard'
PROBES = ('pods', 'namespaces', 'leases.coordination.k8s.io', 'selfsubjectaccessreviews.authorization.k8s.io')
CONFIRMED = {'disable_delete_assigned_egressips': True}


def _batch(twin):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    return client.BatchV1Api(twin.api_client())


def _guard_objects(twin):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    selector = 'app.kubernetes.io/name=egressip-guard'
    rbac = client.RbacAuthorizationV1Api(twin.api_client())
    found = [item.metadata.name for item in twin.core_v1().list_namespace(label_selector=selector).items]
    found += [item.metadata.name for item in rbac.list_cluster_role(label_selector=selector).items]
    found += [item.metadata.name for item in _batch(twin).list_cron_job_for_all_namespaces(label_selector=selector).items]
    return found


def test_a_guard_without_image_stops_enable_before_any_write(twin, run_playbook):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    over = {'requests': {'memory': '1Gi'}, 'limits': {'memory': '512Mi'}}
    run = run_playbook('playbooks/enable.yml', [VARIABLES, {'egressip_guard': {'in_cluster': {'enabled': True, 'resources': over}}}])
    assert run.rc != 0, run
    assert 'guard_input_invalid' in run.stdout and 'egressip_guard.in_cluster.image' in run.stdout, run
    assert "egressip_guard.in_cluster.resources.requests.memory '1Gi' is above its limit 512Mi" in run.stdout, run
    assert twin.kube_requests()['writes'] == 0 and not vcsim_writes(twin)


def test_enable_applies_the_in_cluster_guard(twin, run_playbook):
    run = run_playbook('playbooks/enable.yml', [VARIABLES, GUARD])
    assert run.rc == 0, run
    cronjob = _batch(twin).read_namespaced_cron_job('egressip-guard', NAMESPACE)
    container = cronjob.spec.job_template.spec.template.spec.containers[0]
    assert container.image == IMAGE and container.command[:4] == ['ansible-playbook', '-i', 'localhost,', 'ocp.egressip.guard']
    assert (container.resources.requests, container.resources.limits) == ({'cpu': '200m', 'memory': '768Mi'}, {'cpu': '1', 'memory': '768Mi'})
    assert cronjob.metadata.labels['egressip.ocp/managed-by'] == 'ocp.egressip'
    variables = twin.core_v1().read_namespaced_config_map('egressip-guard-variables', NAMESPACE).data['variables.yml']
    assert 'payments' in variables
    rule = twin.custom_objects().get_namespaced_custom_object('monitoring.coreos.com', 'v1', NAMESPACE, 'prometheusrules', 'egressip-guard')
    assert rule['spec']['groups'][0]['rules'][0]['alert'] == 'EgressIPGuardRoundFailed'
    summary = run.stdout[run.stdout.index('This run changed:'):]
    assert '- in-cluster guard: create 11 (Namespace ocp-egressip-guard, ' in summary, summary[:3000]


def test_a_rerun_changes_nothing(twin, run_playbook):
    twin.reset_kube_requests()
    run = run_playbook('playbooks/enable.yml', [VARIABLES, GUARD])
    assert run.rc == 0 and run.changed == 0, run
    assert 'Nothing changed: every step was already as the variables ask.' in run.stdout
    # verify's wire probe pods are the run's only writes besides the Lease: nothing of the guard is written
    writes = [entry for entry in twin.kube_requests()['requests'] if entry['method'] not in ('GET', 'HEAD') and not entry.get('dry_run')]
    assert writes and all(entry['resource'] in PROBES for entry in writes), writes


def test_a_hand_made_object_of_a_guard_name_stops_enable_before_any_write(twin, run_playbook):
    twin.core_v1().create_namespace({'metadata': {'name': 'team-guard'}})
    twin.core_v1().create_namespaced_config_map('team-guard', {'metadata': {'name': 'egressip-guard-variables'}, 'data': {'x': 'y'}})
    twin.reset_kube_requests()
    moved = {'egressip_guard': {'in_cluster': {'enabled': True, 'image': IMAGE, 'namespace': 'team-guard'}}}
    run = run_playbook('playbooks/enable.yml', [VARIABLES, moved])
    assert run.rc != 0, run
    assert 'guard_object_not_owned' in run.stdout and 'ConfigMap team-guard/egressip-guard-variables' in run.stdout, run
    assert twin.kube_requests()['writes'] == 0, 'refused before the cluster lock, the first write'
    assert twin.core_v1().read_namespaced_config_map('egressip-guard-variables', 'team-guard').data == {'x': 'y'}


def test_disable_in_check_mode_writes_nothing(twin, run_playbook):
    twin.reset_kube_requests()
    run = run_playbook('playbooks/disable.yml', [VARIABLES, GUARD, CONFIRMED], check=True, diff=True)
    assert run.rc == 0, run
    assert 'Check mode, nothing written. Would remove: 11 object(s) of the in-cluster guard' in run.stdout, run
    assert twin.kube_requests()['writes'] == 0
    assert len(_guard_objects(twin)) == 3


def test_disable_removes_the_in_cluster_guard(twin, run_playbook):
    run = run_playbook('playbooks/disable.yml', [VARIABLES, GUARD, CONFIRMED])
    assert run.rc == 0, run
    assert 'Removed: 11 object(s) of the in-cluster guard' in run.stdout, run
    assert _guard_objects(twin) == []
    assert NAMESPACE not in [item.metadata.name for item in twin.core_v1().list_namespace().items]
    # the hand-made ConfigMap of another team was never the guard's
    assert twin.core_v1().read_namespaced_config_map('egressip-guard-variables', 'team-guard').data == {'x': 'y'}
