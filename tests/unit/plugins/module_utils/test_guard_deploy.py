"""plan/guard_deploy.py: applying and removing the in-cluster guard, without a server."""

import copy
import json

from ansible_collections.ocp.egressip.plugins.module_utils.checks import permissions
from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard_deploy as gd
from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard_manifests as gm

GUARD = {'enabled': True, 'image': 'registry.example.com/ee:1.0'}


def _wanted(guard=None):
    objects, refusals = gm.plan(guard or GUARD, {'egressip_objects': []}, json.dumps, permissions.RULES['guard'], permissions.NAMESPACES)
    assert refusals == []
    return objects


def _live(obj, **defaults):
    """The object as the API server returns it: server metadata, defaults inside lists and dicts, a status."""
    live = copy.deepcopy(obj)
    live['metadata'].update(uid='u-1', resourceVersion='7', creationTimestamp='2026-01-01T00:00:00Z')
    if live['kind'] == 'CronJob':
        for container in live['spec']['jobTemplate']['spec']['template']['spec']['containers']:
            container.update(imagePullPolicy='IfNotPresent', terminationMessagePath='/dev/termination-log')
        live['spec'].update(suspend=False)
        live['status'] = {}
    live.update(defaults)
    return live


def test_render_and_deploy_build_the_same_objects_and_refuse_the_same_input():
    objects = _wanted()
    assert [obj['kind'] for obj in objects] == ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding',
                                                'Role', 'RoleBinding', 'ConfigMap', 'CronJob', 'PrometheusRule']
    assert all(gd.guard_object(obj) for obj in objects)
    assert gm.names({})['Namespace'] == 'ocp-egressip-guard' and gm.names({})['ConfigMap'] == 'egressip-guard-variables'
    _objects, refusals = gm.plan({'enabled': True}, {}, json.dumps, permissions.RULES['guard'], permissions.NAMESPACES)
    assert [item['id'] for item in refusals] == ['guard_input_invalid']
    assert 'egressip_guard.in_cluster.image' in refusals[0]['message']


def test_a_fresh_cluster_gets_every_object_created_in_order():
    objects = _wanted()
    changes, refusals = gd.plan_present(objects, [])
    assert refusals == [] and [change['action'] for change in changes] == ['create'] * len(objects)
    assert [change['body'] for change in changes] == objects
    diff = gd.diff(changes)
    assert set(diff['before'].values()) == {None} and diff['after']['ClusterRole egressip-guard'] == objects[2]


def test_server_defaults_and_fields_of_others_are_no_change():
    objects = _wanted()
    live = [_live(obj) for obj in objects]
    live[9]['metadata']['labels']['team'] = 'platform'
    live[9]['metadata']['annotations'] = {'note': 'kept'}
    changes, refusals = gd.plan_present(objects, live)
    assert refusals == [] and {change['action'] for change in changes} == {'none'}
    assert gd.diff(changes) == {'before': {}, 'after': {}}


def test_a_changed_field_is_patched_alone_and_a_list_replaced_whole():
    objects = _wanted()
    live = [_live(obj) for obj in objects]
    live[9]['spec']['schedule'] = '*/5 * * * *'
    live[9]['spec']['jobTemplate']['spec']['template']['spec']['containers'][0]['image'] = 'old:0.9'
    changes, _refusals = gd.plan_present(objects, live)
    cronjob = changes[9]
    assert cronjob['action'] == 'update'
    assert sorted(cronjob['patch']['spec']) == ['jobTemplate', 'schedule']
    assert cronjob['patch']['spec']['schedule'] == '* * * * *'
    containers = cronjob['patch']['spec']['jobTemplate']['spec']['template']['spec']['containers']
    assert containers == objects[9]['spec']['jobTemplate']['spec']['template']['spec']['containers']
    assert 'metadata' not in cronjob['patch']
    assert cronjob['before']['spec']['schedule'] == '*/5 * * * *' and 'status' not in cronjob['before']
    assert 'uid' not in cronjob['before']['metadata']


def test_an_object_without_the_label_is_refused_unless_adopted():
    objects = _wanted()
    hand_made = {'kind': 'ServiceAccount', 'metadata': {'name': 'egressip-guard', 'namespace': 'ocp-egressip-guard', 'labels': {'x': 'y'}}}
    changes, refusals = gd.plan_present(objects, [hand_made])
    assert [item['id'] for item in refusals] == ['guard_object_not_owned']
    assert 'ServiceAccount ocp-egressip-guard/egressip-guard exists without the label egressip.ocp/managed-by' in refusals[0]['message']
    assert 'ServiceAccount ocp-egressip-guard/egressip-guard' not in [change['id'] for change in changes]
    changes, refusals = gd.plan_present(objects, [hand_made], adopt=True)
    account = changes[1]
    assert refusals == [] and account['action'] == 'update'
    assert account['patch'] == {'metadata': {'labels': objects[1]['metadata']['labels']}}


def test_guard_objects_no_longer_wanted_are_deleted_but_not_a_former_namespace():
    old = [_live(obj) for obj in _wanted(dict(GUARD, namespace='old-guard'))]
    objects = _wanted(dict(GUARD, alerts=False))
    foreign = {'kind': 'ConfigMap', 'metadata': {'name': 'egressip-guard-variables', 'namespace': 'team-a', 'labels': {}}}
    changes, refusals = gd.plan_present(objects, old + [foreign])
    assert refusals == []
    deleted = [change['id'] for change in changes if change['action'] == 'delete']
    assert 'PrometheusRule old-guard/egressip-guard' in deleted and 'CronJob old-guard/egressip-guard' in deleted
    assert 'Namespace old-guard' not in deleted and 'ConfigMap team-a/egressip-guard-variables' not in deleted
    actions = dict((change['id'], change['action']) for change in changes)
    assert actions['ClusterRoleBinding egressip-guard'] == 'update' and actions['Role default/egressip-guard'] == 'none'


def test_absent_deletes_guard_objects_namespace_last_and_leaves_terminating_ones():
    live = [_live(obj) for obj in _wanted()]
    live[3]['metadata']['deletionTimestamp'] = '2026-01-01T00:00:00Z'
    other = {'kind': 'ConfigMap', 'metadata': {'name': 'egressip-guard-status', 'namespace': 'openshift-machine-api',
                                               'labels': {'egressip.ocp/managed-by': 'ocp.egressip'}}}
    changes = gd.plan_absent(live + [other])
    ids = [change['id'] for change in changes]
    assert ids[0] == 'PrometheusRule ocp-egressip-guard/egressip-guard' and ids[-1] == 'Namespace ocp-egressip-guard'
    assert 'ClusterRoleBinding egressip-guard' not in ids and 'ConfigMap openshift-machine-api/egressip-guard-status' not in ids
    assert gd.diff(changes)['after']['Namespace ocp-egressip-guard'] is None
    assert 'Namespace ocp-egressip-guard' not in [change['id'] for change in gd.plan_absent(live, keep_namespace=True)]


def test_check_mode_skips_what_an_earlier_create_must_exist_for():
    changes, _refusals = gd.plan_present(_wanted(), [])
    skipped = gd.check_mode_skipped(changes)
    assert 'Namespace ocp-egressip-guard' not in skipped and 'ClusterRole egressip-guard' not in skipped
    assert 'ClusterRoleBinding egressip-guard' in skipped and 'CronJob ocp-egressip-guard/egressip-guard' in skipped
    assert 'Role default/egressip-guard' not in skipped and 'RoleBinding default/egressip-guard' in skipped
    live = [_live(obj) for obj in _wanted()]
    changes, _refusals = gd.plan_present(_wanted(), live)
    assert gd.check_mode_skipped(changes) == set()


def test_covers_compares_what_the_collection_sets_only():
    assert gd.covers({'a': [{'b': 1}]}, {'a': [{'b': 1, 'c': 2}], 'd': 3})
    assert not gd.covers({'a': [{'b': 1}]}, {'a': [{'b': 1}, {'b': 2}]})
    assert not gd.covers({'a': 1}, {})
    assert gd.field_patch({'kind': 'X', 'a': {'b': 1, 'c': 2}}, {'a': {'b': 1, 'c': 3, 'd': 4}}) == {'a': {'c': 2}}
