"""egressip_guard_deploy against the twin: bad options refused before any request, check mode and diff (nothing
written), creation of the in-cluster guard's objects with their labels, a second run unchanged, a field someone else
set kept and a changed field patched back, a hand-made object of a guard name refused (and adopted on request), alerts
turned off delete the PrometheusRule, and state absent deletes everything, the Namespace last."""

import pytest

from twin.fixture import kube_writes

IMAGE = 'registry.example.com/platform/ocp-egressip-ee:1.0'
NAMESPACE = 'guard-test'
GUARD = {'image': IMAGE, 'namespace': NAMESPACE}
VARIABLES = {'egressip_objects': [{'name': 'payments', 'egress_ips': ['10.20.0.200']}], 'egressip_network': {'cidr': '10.20.0.0/24'},
             'k8s_auth_api_key': 'secret-never-in-the-configmap'}
KINDS = ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'Role', 'RoleBinding',
         'ConfigMap', 'CronJob', 'PrometheusRule']
LABELS = {'egressip.ocp/managed-by': 'ocp.egressip', 'app.kubernetes.io/name': 'egressip-guard'}


def _args(**extra):
    return dict({'guard': GUARD, 'guard_variables': VARIABLES}, **extra)


def _cronjob(twin):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    return client.BatchV1Api(twin.api_client()).read_namespaced_cron_job('egressip-guard', NAMESPACE)


def _rbac(twin):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    return client.RbacAuthorizationV1Api(twin.api_client())


def test_bad_options_are_refused_before_any_request(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip_guard_deploy', {'guard': {'namespace': NAMESPACE, 'schedule': 'every minute'}})
    assert result['_rc'] != 0 and result['findings'], result
    assert 'egressip_guard.in_cluster.image' in result['msg'] and 'egressip_guard.in_cluster.schedule' in result['msg'], result['msg']
    assert {item['id'] for item in result['findings']} == {'guard_input_invalid'}
    assert twin.kube_requests()['requests'] == []


def test_check_mode_and_diff_write_nothing(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip_guard_deploy', _args(), check=True, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert [entry['kind'] for entry in result['objects']] == KINDS
    assert {entry['action'] for entry in result['objects']} == {'create'}
    assert twin.kube_requests()['writes'] == 0
    cronjob_id = 'CronJob %s/egressip-guard' % NAMESPACE
    assert result['diff']['before'][cronjob_id] is None
    assert result['diff']['after'][cronjob_id]['spec']['jobTemplate']['spec']['template']['spec']['containers'][0]['image'] == IMAGE
    # the Namespace and the cluster-scoped objects are sent with dryRun, nothing inside the namespace that is not there yet
    writes = [entry for entry in twin.kube_requests()['requests'] if entry['method'] != 'GET']
    assert writes and all(entry['dry_run'] for entry in writes), writes
    assert not any('/namespaces/%s/' % NAMESPACE in entry['path'] for entry in writes), writes


def test_apply_creates_every_object_with_the_labels(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip_guard_deploy', _args(), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert [entry['action'] for entry in result['objects']] == ['create'] * len(KINDS)
    lists = [entry for entry in twin.kube_requests()['requests'] if entry['method'] == 'GET' and 'leases' not in entry['path']]
    assert len(lists) == 9, lists  # one list per kind
    cronjob = _cronjob(twin)
    assert cronjob.spec.schedule == '* * * * *' and cronjob.spec.concurrency_policy == 'Forbid'
    assert cronjob.metadata.labels == LABELS
    role = _rbac(twin).read_cluster_role('egressip-guard')
    assert role.metadata.labels == LABELS and role.rules
    configmap = twin.core_v1().read_namespaced_config_map('egressip-guard-variables', NAMESPACE)
    assert 'payments' in configmap.data['variables.yml'] and 'secret-never' not in configmap.data['variables.yml']
    namespace = twin.core_v1().read_namespace(NAMESPACE)
    assert namespace.metadata.labels['openshift.io/cluster-monitoring'] == 'true'


def test_a_second_run_changes_nothing(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip_guard_deploy', _args())
    assert result['_rc'] == 0 and result['changed'] is False, result
    assert {entry['action'] for entry in result['objects']} == {'none'}
    assert kube_writes(twin) == 0


def test_a_field_set_by_others_stays_and_a_changed_field_is_patched_back(twin, run_module):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    batch = client.BatchV1Api(twin.api_client())
    patch = {'metadata': {'labels': {'team': 'platform'}, 'annotations': {'note': 'x'}}, 'spec': {'schedule': '*/5 * * * *', 'suspend': True}}
    batch.patch_namespaced_cron_job('egressip-guard', NAMESPACE, patch)
    result = run_module('egressip_guard_deploy', _args(), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    changed = [entry['id'] for entry in result['objects'] if entry['action'] != 'none']
    cronjob_id = 'CronJob %s/egressip-guard' % NAMESPACE
    assert changed == [cronjob_id]
    assert result['diff']['before'][cronjob_id]['spec']['schedule'] == '*/5 * * * *'
    assert result['diff']['after'][cronjob_id]['spec']['schedule'] == '* * * * *'
    cronjob = _cronjob(twin)
    assert cronjob.spec.schedule == '* * * * *'
    # suspend, the label and the annotation are not fields the collection sets: they stay
    assert cronjob.spec.suspend is True and cronjob.metadata.labels['team'] == 'platform' and cronjob.metadata.annotations == {'note': 'x'}


def test_a_hand_made_object_of_a_guard_name_is_refused_then_adopted_on_request(twin, run_module):
    twin.core_v1().create_namespace({'metadata': {'name': 'hand-made'}})
    twin.core_v1().create_namespaced_service_account('hand-made', {'metadata': {'name': 'egressip-guard'}})
    twin.reset_kube_requests()
    guard = dict(GUARD, namespace='hand-made')
    result = run_module('egressip_guard_deploy', {'guard': guard, 'guard_variables': VARIABLES})
    assert result['_rc'] != 0, result
    assert [item['id'] for item in result['findings']] == ['guard_object_not_owned'] * 2, result['findings']
    assert 'Namespace hand-made exists without the label egressip.ocp/managed-by=ocp.egressip' in result['msg']
    assert 'ServiceAccount hand-made/egressip-guard' in result['msg']
    assert kube_writes(twin) == 0  # the cluster lock's Lease only
    adopted = run_module('egressip_guard_deploy', {'guard': guard, 'guard_variables': VARIABLES, 'adopt': True})
    assert adopted['_rc'] == 0 and adopted['changed'] is True, adopted
    actions = dict((entry['id'], entry['action']) for entry in adopted['objects'])
    assert actions['Namespace hand-made'] == 'update' and actions['ServiceAccount hand-made/egressip-guard'] == 'update'
    # the ClusterRoleBinding now names the account in hand-made; the objects left in the former namespace are deleted
    assert actions['ServiceAccount %s/egressip-guard' % NAMESPACE] == 'delete'
    assert actions['CronJob %s/egressip-guard' % NAMESPACE] == 'delete'
    assert twin.core_v1().read_namespaced_service_account('egressip-guard', 'hand-made').metadata.labels['egressip.ocp/managed-by'] == 'ocp.egressip'


def test_alerts_off_deletes_the_prometheus_rule(twin, run_module):
    guard = dict(GUARD, namespace='hand-made', alerts=False)
    result = run_module('egressip_guard_deploy', {'guard': guard, 'guard_variables': VARIABLES})
    assert result['_rc'] == 0, result
    # the platform monitoring label of the Namespace stays: the collection never removes a label
    assert [(entry['kind'], entry['action']) for entry in result['objects'] if entry['action'] != 'none'] == [('PrometheusRule', 'delete')]
    rules = twin.custom_objects().list_namespaced_custom_object('monitoring.coreos.com', 'v1', 'hand-made', 'prometheusrules')
    assert rules['items'] == []


@pytest.mark.parametrize('check', [True, False])
def test_absent_deletes_every_guard_object_namespace_last(twin, run_module, check):
    twin.reset_kube_requests()
    result = run_module('egressip_guard_deploy', {'state': 'absent'}, check=check, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert {entry['action'] for entry in result['objects']} == {'delete'}
    assert result['objects'][-1]['id'] == 'Namespace hand-made'
    # the former namespace was never the guard's to delete: it has no guard object left; hand-made's Namespace is adopted
    assert 'Namespace %s' % NAMESPACE in [entry['id'] for entry in result['objects']]
    assert result['diff']['after']['ClusterRole egressip-guard'] is None
    if check:
        assert twin.kube_requests()['writes'] == 0
        assert _rbac(twin).read_cluster_role('egressip-guard')
        return
    assert _rbac(twin).list_cluster_role(label_selector='app.kubernetes.io/name=egressip-guard').items == []
    assert 'hand-made' not in [item.metadata.name for item in twin.core_v1().list_namespace().items]
    again = run_module('egressip_guard_deploy', {'state': 'absent'})
    assert again['_rc'] == 0 and again['changed'] is False and again['objects'] == [], again
