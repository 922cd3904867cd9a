"""plan/guard_manifests.py: the in-cluster guard's manifests, validated against their real schemas.

The built-in kinds are checked with the models of the Kubernetes Python client (generated from the Kubernetes OpenAPI:
unknown fields are refused, required ones enforced), the PrometheusRule with the openAPIV3Schema of its upstream CRD
(tests/twin/crds, see its SOURCES.md).
"""

import os

import jsonschema
import pytest
import yaml
from kubernetes import client as models

from ansible_collections.ocp.egressip.plugins.module_utils.checks import permissions
from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard_manifests as gm
from ansible_collections.ocp.egressip.plugins.module_utils.plan import render

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
VARIABLES = {
    'egressip_acknowledge_unsupported': True,
    'egressip_network': {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1'},
    'egressip_vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0', 'portgroup': {'name': 'ocp-egress-120'}},
    'egressip_objects': [{'name': 'payments', 'egress_ips': ['10.20.0.200']}],
    'egressip_report_dir': 'reports',
    'vcenter_password': 'not-for-the-configmap',
}
MODELS = {'Namespace': models.V1Namespace, 'ServiceAccount': models.V1ServiceAccount, 'ClusterRole': models.V1ClusterRole,
          'ClusterRoleBinding': models.V1ClusterRoleBinding, 'Role': models.V1Role, 'RoleBinding': models.V1RoleBinding,
          'ConfigMap': models.V1ConfigMap, 'CronJob': models.V1CronJob}


def build(**options):
    return gm.manifests(dict({'image': 'registry.example.com/ocp-egressip-ee:1.0'}, **options), VARIABLES, render.to_yaml,
                        permissions.RULES['guard'], permissions.NAMESPACES)


def by_kind(manifests):
    result = {}
    for manifest in manifests:
        result.setdefault(manifest['kind'], []).append(manifest)
    return result


def test_every_built_in_manifest_is_valid_for_its_kubernetes_schema():
    manifests = build(image_pull_secret='pull-secret')
    for manifest in manifests:
        if manifest['kind'] in MODELS:
            MODELS[manifest['kind']].model_validate(manifest)   # raises on an unknown or a missing required field
    assert sorted(by_kind(manifests)) == sorted(list(MODELS) + ['PrometheusRule'])
    with pytest.raises(Exception):
        models.V1CronJob.model_validate(dict(by_kind(manifests)['CronJob'][0], spek={}))


def test_the_prometheusrule_is_valid_for_its_upstream_crd():
    with open(os.path.join(ROOT, 'tests', 'twin', 'crds', 'prometheusrules.monitoring.coreos.com.yaml'), encoding='utf-8') as handle:
        crd = yaml.safe_load(handle)
    schema = crd['spec']['versions'][0]['schema']['openAPIV3Schema']
    rule = by_kind(build())['PrometheusRule'][0]
    validator = jsonschema.Draft7Validator(schema)   # Kubernetes patterns are RE2, which Python's re reads, not ECMA-262
    validator.validate(rule)
    broken = dict(rule, spec={'groups': [{'name': 'x', 'rules': [{'alert': 'A', 'for': 'five minutes', 'expr': 'up'}]}]})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(broken)


def test_the_cronjob_runs_one_round_at_a_time_as_a_restricted_pod():
    cronjob = by_kind(build(image_pull_secret='pull-secret'))['CronJob'][0]
    spec = cronjob['spec']
    assert (spec['schedule'], spec['concurrencyPolicy'], spec['startingDeadlineSeconds']) == ('* * * * *', 'Forbid', 50)
    job = spec['jobTemplate']['spec']
    assert job['backoffLimit'] == 0 and job['activeDeadlineSeconds'] == 300
    pod = job['template']['spec']
    assert pod['serviceAccountName'] == 'egressip-guard' and pod['restartPolicy'] == 'Never'
    assert pod['imagePullSecrets'] == [{'name': 'pull-secret'}]
    container = pod['containers'][0]
    assert container['command'][:4] == ['ansible-playbook', '-i', 'localhost,', 'ocp.egressip.guard']
    assert container['securityContext']['allowPrivilegeEscalation'] is False and container['securityContext']['capabilities'] == {'drop': ['ALL']}
    assert container['envFrom'] == [{'secretRef': {'name': 'egressip-guard-vcenter', 'optional': True}}], 'vCenter is optional'
    assert 'imagePullSecrets' not in by_kind(build())['CronJob'][0]['spec']['jobTemplate']['spec']['template']['spec']


def test_the_rbac_is_the_guard_playbooks_permissions_and_writes_only_where_a_round_writes():
    kinds = by_kind(build())
    cluster_rules = kinds['ClusterRole'][0]['rules']
    written = [(rule['resources'], rule['verbs']) for rule in cluster_rules if set(rule['verbs']) - {'get', 'list'}]
    # cluster-wide writes: only the wire check's probe pods and namespaces
    assert sorted(resource for resources, _verbs in written for resource in resources) == ['namespaces', 'pods']
    roles = dict((role['metadata']['namespace'], role['rules']) for role in kinds['Role'])
    assert sorted(roles) == ['default', 'ocp-egressip-guard']
    assert roles['default'] == [{'apiGroups': [''], 'resources': ['events'], 'verbs': ['create', 'patch']}]
    assert {'apiGroups': [''], 'resources': ['configmaps'], 'verbs': ['create', 'get', 'patch']} in roles['ocp-egressip-guard']
    bindings = kinds['RoleBinding'] + kinds['ClusterRoleBinding']
    assert all(binding['subjects'] == [{'kind': 'ServiceAccount', 'name': 'egressip-guard', 'namespace': 'ocp-egressip-guard'}]
               for binding in bindings)


def test_the_variables_configmap_holds_what_a_round_reads_and_no_credential():
    configmap = by_kind(build())['ConfigMap'][0]
    variables = yaml.safe_load(configmap['data']['variables.yml'])
    assert sorted(variables) == ['egressip_acknowledge_unsupported', 'egressip_guard', 'egressip_lock', 'egressip_network',
                                 'egressip_objects', 'egressip_vsphere']
    assert variables['egressip_guard'] == {'namespace': 'ocp-egressip-guard'} == variables['egressip_lock']
    assert 'not-for-the-configmap' not in configmap['data']['variables.yml']


def test_the_namespace_is_evaluated_by_the_platform_prometheus_only_when_alerts_are_on():
    assert by_kind(build())['Namespace'][0]['metadata']['labels']['openshift.io/cluster-monitoring'] == 'true'
    quiet = by_kind(build(alerts=False))
    assert 'PrometheusRule' not in quiet and 'openshift.io/cluster-monitoring' not in quiet['Namespace'][0]['metadata']['labels']
    assert 'openshift.io/cluster-monitoring' not in by_kind(build(platform_monitoring=False))['Namespace'][0]['metadata']['labels']


def test_wrong_options_are_named_with_the_value_and_the_fix():
    problems = dict((key, (value, problem)) for key, value, problem, _fix in gm.input_problems(
        {'image': '', 'schedule': 'every minute', 'starting_deadline_seconds': 0, 'failed_jobs_history_limit': 'x'}))
    assert sorted(problems) == ['failed_jobs_history_limit', 'image', 'schedule', 'starting_deadline_seconds']
    assert problems['schedule'] == ('every minute', 'is not a cron schedule of five fields')
    assert gm.input_problems({'image': 'registry.example.com/ee:1'}) == []


def test_the_cronjob_has_default_resources_and_given_ones_replace_them_whole():
    def resources(manifests):
        return by_kind(manifests)['CronJob'][0]['spec']['jobTemplate']['spec']['template']['spec']['containers'][0]['resources']
    assert resources(build()) == {'requests': {'cpu': '100m', 'memory': '256Mi'}, 'limits': {'memory': '512Mi'}}
    given = resources(build(resources={'requests': {'cpu': 0.2, 'memory': '0.75Gi'}, 'limits': {'cpu': 1, 'memory': '1024Mi'}}))
    assert given == {'requests': {'cpu': '200m', 'memory': '768Mi'}, 'limits': {'cpu': '1', 'memory': '1Gi'}}, \
        'YAML numbers as quantities, each as the API server stores it'
    assert resources(build(resources={'limits': {'memory': '2Gi'}})) == {'limits': {'memory': '2Gi'}}, 'no default merged in'
    models.V1CronJob.model_validate(by_kind(build(resources={'limits': {'memory': '2Gi'}}))['CronJob'][0])


@pytest.mark.parametrize('text, number', [('100m', '0.1'), ('512Mi', 512 * 2 ** 20), ('1.5Gi', 1.5 * 2 ** 30), ('2', 2), (2, 2),
                                          ('0.5', '0.5'), ('1e3', 1000), ('1k', 1000), ('+1M', 10 ** 6)])
def test_kubernetes_quantities_are_read_as_numbers(text, number):
    assert gm.quantity(text) == gm.Decimal(str(number))


@pytest.mark.parametrize('given, stored', [
    ('100m', '100m'), ('0.5', '500m'), (0.5, '500m'), ('1.5', '1500m'), ('1000m', '1'), (1, '1'), ('2000', '2k'), ('1500', '1500'),
    ('0.0001', '100u'), ('0.1n', '1n'), ('512Mi', '512Mi'), ('1024Mi', '1Gi'), ('1000Mi', '1000Mi'), ('1.5Gi', '1536Mi'),
    ('0.5Ki', '512'), ('1.1Ki', '1126400m'), ('1e3', '1e3'), ('1.5e3', '1500'), ('12e6', '12e6'), ('0', '0'), ('0Mi', '0'),
    ('1E', '1E'), ('.5', '500m')])
def test_quantities_are_written_in_the_api_servers_canonical_form(given, stored):
    """resource.Quantity's CanonicalizeBytes (k8s.io/apimachinery): the form the API server stores and returns; written
    otherwise, the CronJob would read back different and every run would patch it."""
    assert gm.canonical_quantity(given) == stored


@pytest.mark.parametrize('text', ['-1', '1Gb', 'lots', '', None, True, '1 Gi', [1]])
def test_what_is_no_quantity_is_none(text):
    assert gm.quantity(text) is None


def test_wrong_resources_are_named_with_the_value_and_the_fix():
    def problems(resources):
        return [(key, value, problem) for key, value, problem, _fix in gm.input_problems({'image': 'x', 'resources': resources})]
    assert problems({'requests': {'memory': '1Gi'}, 'limits': {'memory': '512Mi'}}) == [
        ('resources.requests.memory', '1Gi', 'is above its limit 512Mi')], 'the API server would refuse the CronJob (422)'
    assert problems({'requests': {'cpu': 'half'}}) == [('resources.requests.cpu', 'half', 'is not a Kubernetes quantity')]
    assert problems({'request': {'cpu': '1'}}) == [('resources', {'request': {'cpu': '1'}}, 'is not a map of requests and limits')]
    assert problems({'limits': ['512Mi']}) == [('resources.limits', ['512Mi'], 'is not a map of resource name to quantity')]
    assert problems({'requests': {'memory': '512Mi'}, 'limits': {'memory': '0.5Gi'}}) == [], 'equal is fine, in other units too'
    findings = gm.plan({'image': 'x', 'resources': {'limits': {'memory': '1Gb'}}}, VARIABLES, render.to_yaml,
                       permissions.RULES['guard'], permissions.NAMESPACES)[1]
    assert [item['message'] for item in findings] == [
        "egressip_guard.in_cluster.resources.limits.memory '1Gb' is not a Kubernetes quantity: give a number with an optional "
        "suffix, e.g. 250m (CPU) or 512Mi (memory)."]
