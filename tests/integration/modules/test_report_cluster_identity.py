"""The reports name the cluster and the time against the twin: egressip_verify's one GET each of ClusterVersion and
Infrastructure, egressip_upgrade_check from the lists it already makes, and credentials that may not read those objects
(HTTP 403 from the twin's RBAC, as the apiserver answers) giving a report that says what is unknown instead of failing."""

import datetime
import os

import yaml

import _egress_cluster as ec
import _twin_reads as reads

TWIN_OPTIONS = {'workers': 2}
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RBAC = ('rbac.authorization.k8s.io', 'v1')
IDENTITY_PATHS = ['/apis/config.openshift.io/v1/clusterversions/version', '/apis/config.openshift.io/v1/infrastructures/cluster']


def verify_args():
    return {'objects': [], 'network': dict(ec.NETWORK), 'fail_on_error': False}


def now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def test_verify_gets_each_object_once_and_its_report_names_the_cluster(twin, run_module):
    started = now()
    twin.reset_kube_requests()
    result = run_module('egressip_verify', verify_args())
    assert result['_rc'] == 0, result
    log = twin.kube_requests()['requests']  # before the test's own reads of the two objects
    reads.assert_report_names_the_cluster(twin, result['report'], started=started)
    assert sorted(entry['path'] for entry in log if entry['path'] in IDENTITY_PATHS) == IDENTITY_PATHS
    assert all(entry['verb'] == 'get' for entry in log if entry['path'] in IDENTITY_PATHS)


def test_the_upgrade_check_names_the_cluster_from_the_lists_it_makes(twin, run_module):
    started = now()
    twin.reset_kube_requests()
    result = run_module('egressip_upgrade_check', {'phase': 'collection', 'network': dict(ec.NETWORK)})
    assert result['_rc'] == 0, result
    assert [entry for entry in twin.kube_requests()['requests'] if entry['path'] in IDENTITY_PATHS] == []  # no GET of its own
    reads.assert_report_names_the_cluster(twin, result, started=started)
    assert 'generated_at' not in result['record'] and 'cluster' in result['record']  # the record stays deterministic


def test_credentials_that_may_not_read_them_give_a_report_that_says_so(twin, run_module, tmp_path):
    with open(os.path.join(REPO_ROOT, 'rbac', 'verify.yml'), encoding='utf-8') as handle:
        role = yaml.safe_load(handle)
    role['metadata']['name'] = 'verify-without-cluster-identity'
    for rule in role['rules']:
        rule['resources'] = [name for name in rule['resources'] if name not in ('clusterversions', 'infrastructures')]
    role['rules'] = [rule for rule in role['rules'] if rule['resources']]
    objects = twin.custom_objects()
    objects.create_cluster_custom_object(*RBAC, 'clusterroles', role)
    objects.create_cluster_custom_object(*RBAC, 'clusterrolebindings', {
        'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding', 'metadata': {'name': 'verify-without-identity'},
        'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': role['metadata']['name']},
        'subjects': [{'kind': 'User', 'name': 'reporter'}]})
    path = twin.kubeconfig_for(str(tmp_path / 'reporter.kubeconfig'), user='reporter')
    twin.reset_kube_requests()
    result = run_module('egressip_verify', verify_args(), env={'KUBECONFIG': path, 'K8S_AUTH_KUBECONFIG': path})
    assert result['_rc'] == 0, result
    assert sorted(entry['path'] for entry in twin.kube_requests()['requests'] if entry.get('code') == 403) == IDENTITY_PATHS
    cluster = result['report']['cluster']
    assert cluster['name'] is None and cluster['id'] is None and cluster['openshift_version'] is None
    assert cluster['api_url'] == twin.kube_state['url'].rstrip('/')
    assert cluster['unknown'] == {
        'name': 'HTTP 403: the credentials may not get infrastructures.config.openshift.io cluster',
        'id': 'HTTP 403: the credentials may not get clusterversions.config.openshift.io version',
        'openshift_version': 'HTTP 403: the credentials may not get clusterversions.config.openshift.io version'}
    assert result['report']['generated_at'].endswith('Z')
