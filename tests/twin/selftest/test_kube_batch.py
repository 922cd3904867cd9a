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
