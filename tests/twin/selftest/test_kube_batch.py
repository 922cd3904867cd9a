"""batch/v1 CronJobs as the API server serves them (defaults, ValidateCronJobCreate/Update, robfig/cron's schedule
syntax), and the immutable roleRef of RoleBindings and ClusterRoleBindings."""

import copy
import functools
import operator
import os
import sys

import pytest
from kubernetes import client

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from _kube import failure  # noqa: E402
from twin.kube.batch import schedule_problem  # noqa: E402

CRONJOB = {
    'apiVersion': 'batch/v1', 'kind': 'CronJob', 'metadata': {'name': 'round'},
    'spec': {'schedule': '* * * * *', 'concurrencyPolicy': 'Forbid', 'jobTemplate': {'spec': {'backoffLimit': 0, 'template': {
        'spec': {'restartPolicy': 'Never', 'containers': [{'name': 'guard', 'image': 'registry.example.com/ee:1.0'}]}}}}},
}


@pytest.fixture(scope='module')
def batch(api, core):
    core.create_namespace({'metadata': {'name': 'jobs'}})
    return client.BatchV1Api(api)


def _with(path, value, name='bad'):
    body = copy.deepcopy(CRONJOB)
    body['metadata']['name'] = name
    functools.reduce(operator.getitem, path[:-1], body)[path[-1]] = value
    return body


def test_a_cronjob_is_stored_with_the_api_servers_defaults(batch):
    batch.create_namespaced_cron_job('jobs', CRONJOB)
    stored = batch.read_namespaced_cron_job('round', 'jobs').to_dict()
    assert stored['spec']['successful_jobs_history_limit'] == 3 and stored['spec']['failed_jobs_history_limit'] == 1
    assert stored['spec']['suspend'] is False and stored['spec']['concurrency_policy'] == 'Forbid'
    container = stored['spec']['job_template']['spec']['template']['spec']['containers'][0]
    assert container['image_pull_policy'] == 'IfNotPresent' and container['termination_message_path'] == '/dev/termination-log'
    assert [item.metadata.name for item in batch.list_cron_job_for_all_namespaces(field_selector='metadata.name=round').items] == ['round']


@pytest.mark.parametrize('path, value, field, text', [
    (('spec', 'schedule'), '* * * *', 'spec.schedule', 'expected exactly 5 fields, found 4'),
    (('spec', 'schedule'), '61 * * * *', 'spec.schedule', 'end of range (61) above maximum (59)'),
    (('spec', 'schedule'), 'CRON_TZ=UTC * * * * *', 'spec.schedule', 'use timeZone field instead'),
    (('spec', 'concurrencyPolicy'), 'Never', 'spec.concurrencyPolicy', 'supported values'),
    (('spec', 'startingDeadlineSeconds'), -1, 'spec.startingDeadlineSeconds', 'greater than or equal to 0'),
    (('spec', 'jobTemplate', 'spec', 'template', 'spec', 'restartPolicy'), 'Always',
     'spec.jobTemplate.spec.template.spec.restartPolicy', '"OnFailure", "Never"'),
])
def test_an_invalid_cronjob_is_422_naming_the_field(batch, path, value, field, text):
    status, body = failure(batch.create_namespaced_cron_job, 'jobs', _with(path, value))
    assert status == 422, body
    causes = body['details']['causes']
    assert any(cause['field'] == field and text in cause['message'] for cause in causes), causes


def test_a_cronjob_name_over_52_characters_is_refused(batch):
    status, body = failure(batch.create_namespaced_cron_job, 'jobs', _with(('spec', 'schedule'), '@hourly', name='x' * 53))
    assert status == 422 and 'no more than 52 characters' in body['message'], body


RESOURCES = ('spec', 'jobTemplate', 'spec', 'template', 'spec', 'containers', 0, 'resources')


def test_container_quantities_are_stored_in_canonical_form(batch, core):
    """resource.Quantity decoded and encoded again (CanonicalizeBytes): the object read back is not what was written."""
    written = {'requests': {'cpu': '0.5', 'memory': '0.75Gi'}, 'limits': {'cpu': '2000m', 'memory': '1024Mi', 'ephemeral-storage': '2000'}}
    batch.create_namespaced_cron_job('jobs', _with(RESOURCES, written, name='sized'))
    stored = batch.read_namespaced_cron_job('sized', 'jobs').to_dict()
    container = stored['spec']['job_template']['spec']['template']['spec']['containers'][0]
    assert container['resources'] == {'requests': {'cpu': '500m', 'memory': '768Mi'},
                                      'limits': {'cpu': '2', 'memory': '1Gi', 'ephemeral-storage': '2k'}, 'claims': None}
    batch.patch_namespaced_cron_job('sized', 'jobs', {'spec': {'jobTemplate': {'spec': {'template': {'spec': {'containers': [
        {'name': 'guard', 'image': 'registry.example.com/ee:1.0', 'resources': {'limits': {'memory': '1.5Gi'}}}]}}}}}})
    patched = batch.read_namespaced_cron_job('sized', 'jobs').spec.job_template.spec.template.spec.containers[0].resources
    assert patched.limits == {'memory': '1536Mi'} and not patched.requests, 'an update too'
    pod = {'metadata': {'name': 'sized'}, 'spec': {'containers': [{'name': 'c', 'image': 'busybox:1', 'resources': {
        'requests': {'cpu': '1000m'}}}]}}
    core.create_namespaced_pod('jobs', pod)
    assert core.read_namespaced_pod('sized', 'jobs').spec.containers[0].resources.requests == {'cpu': '1'}


def test_a_quantity_above_its_limit_is_422_and_no_quantity_400(batch, core):
    over = {'requests': {'memory': '1Gi'}, 'limits': {'memory': '512Mi'}}
    status, body = failure(batch.create_namespaced_cron_job, 'jobs', _with(RESOURCES, over))
    assert status == 422, body
    assert body['details']['causes'] == [{'reason': 'FieldValueInvalid', 'field': 'spec.jobTemplate.spec.template.spec.containers[0].resources.requests',
                                          'message': 'Invalid value: "1Gi": must be less than or equal to memory limit of 512Mi'}]
    status, body = failure(batch.create_namespaced_cron_job, 'jobs', _with(RESOURCES, {'limits': {'memory': '1Gb'}}))
    assert status == 400 and body['message'] == ('CronJob in version "v1" cannot be handled as a CronJob: quantities must match the '
                                                 "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"), body
    pod = {'metadata': {'name': 'greedy'}, 'spec': {'containers': [{'name': 'c', 'image': 'busybox:1', 'resources': over}]}}
    status, body = failure(core.create_namespaced_pod, 'jobs', pod)
    assert status == 422 and body['details']['causes'][0]['field'] == 'spec.containers[0].resources.requests', body


def test_schedules_robfig_cron_accepts():
    for schedule in ('*/5 * * * *', '0 6 * * MON-FRI', '@daily', '@every 90s', '0,30 1-3 1 JAN *'):
        assert schedule_problem(schedule) is None, schedule
    assert 'beyond end of range' in schedule_problem('0 5-3 * * *')


def test_the_roleref_of_a_binding_cannot_change(api):
    rbac = client.RbacAuthorizationV1Api(api)
    binding = {'metadata': {'name': 'readers'}, 'subjects': [{'kind': 'Group', 'name': 'readers', 'apiGroup': 'rbac.authorization.k8s.io'}],
               'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'view'}}
    rbac.create_cluster_role_binding(binding)
    rbac.patch_cluster_role_binding('readers', {'subjects': [{'kind': 'Group', 'name': 'others', 'apiGroup': 'rbac.authorization.k8s.io'}]})
    other = {'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'edit'}}
    status, body = failure(rbac.patch_cluster_role_binding, 'readers', other)
    assert status == 422 and 'cannot change roleRef' in body['message'], body
