# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Applying the in-cluster guard (the manifests of plan/guard_manifests.py) and taking it out, pure parts.

present: each wanted object is created when missing, patched where a field it sets differs (a JSON merge patch of those
fields only: a field someone else set is never removed; a list the collection sets is replaced whole), refused when an
object of that name exists without the collection's label (unless adopt); an object of the guard's own names and labels
that is no longer wanted (the PrometheusRule with alerts off, the objects left in a former namespace) is deleted.
absent: every object carrying the guard's labels is deleted, the Namespace last (unless kept).

Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.plan.guard_manifests import KINDS, NAME, NAME_LABEL

# metadata the API server owns: never compared, never shown in a diff
SERVER_METADATA = ('uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink')


def object_id(obj):
    """`CronJob ocp-egressip-guard/egressip-guard`, `ClusterRole egressip-guard`: how results and diffs name an object."""
    metadata = obj['metadata']
    where = '%s/%s' % (metadata['namespace'], metadata['name']) if metadata.get('namespace') else metadata['name']
    return '%s %s' % (obj['kind'], where)


def owned(obj):
    return ((obj.get('metadata') or {}).get('labels') or {}).get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE


def guard_object(obj):
    """An object of the in-cluster guard: the collection's label and the guard's name label."""
    return owned(obj) and (obj['metadata'].get('labels') or {}).get(NAME_LABEL) == NAME


def covers(wanted, current):
    """Whether `current` holds every field of `wanted` with its value (dicts: a subset; lists: the same length, each item
    covered, so the API server's defaults inside a container or a rule do not count as a difference)."""
    if isinstance(wanted, dict):
        return isinstance(current, dict) and all(key in current and covers(value, current[key]) for key, value in wanted.items())
    if isinstance(wanted, list):
        return isinstance(current, list) and len(wanted) == len(current) and all(covers(a, b) for a, b in zip(wanted, current))
    return wanted == current


def field_patch(wanted, current):
    """The JSON merge patch that sets the fields of `wanted` that `current` does not hold ({} when none)."""
    patch = {}
    for key, value in wanted.items():
        if key in ('apiVersion', 'kind'):
            continue
        have = current.get(key) if isinstance(current, dict) else None
        if isinstance(value, dict) and isinstance(have, dict):
            nested = field_patch(value, have)
            if nested:
                patch[key] = nested
        elif not covers(value, have):
            patch[key] = value
    return patch


def view(obj, shape=None):
    """What a diff shows of `obj`: the fields of `shape` (the wanted object) only, or, without a shape, the object
    without its status and the server's metadata. None stays None. The one function of both sides of the diff."""
    if obj is None:
        return None
    if shape is None:
        shown = dict((key, value) for key, value in obj.items() if key != 'status')
        shown['metadata'] = dict((key, value) for key, value in obj['metadata'].items() if key not in SERVER_METADATA)
        return shown
    return _project(obj, shape)


def _project(value, shape):
    if isinstance(shape, dict) and isinstance(value, dict):
        return dict((key, _project(value[key], shape[key])) for key in shape if key in value)
    return value


def _not_owned(obj):
    return catalogue_finding(
        'guard_object_not_owned', '%s exists without the label %s=%s: it was not created by this collection, so the in-cluster '
        'guard does not take it over.' % (object_id(obj), MANAGED_BY_LABEL, MANAGED_BY_VALUE),
        objects=[{'kind': obj['kind'], 'name': object_id(obj).split(' ', 1)[1]}])


def plan_present(wanted, current, adopt=False):
    """(changes, refusals): one change per wanted object - {id, kind, name, namespace, action: create|update|none, body,
    patch, before, after} - then a delete for each guard object found that is not wanted.

    current: the objects read (every object of each guard kind that has the guard's name for that kind, any namespace).
    An object without the collection's label is refused unless `adopt` (the patch then adds the label too)."""
    found = dict((object_id(obj), obj) for obj in current)
    changes, refusals = [], []
    for body in wanted:
        key = object_id(body)
        live = found.get(key)
        if live is not None and not owned(live) and not adopt:
            refusals.append(_not_owned(live))
            continue
        patch = field_patch(body, live) if live is not None else None
        action = 'create' if live is None else 'update' if patch else 'none'
        changes.append(_change(key, body, action, live, body, patch=patch))
    wanted_ids = set(object_id(body) for body in wanted)
    stale = [obj for obj in current if object_id(obj) not in wanted_ids and guard_object(obj) and obj['kind'] != 'Namespace']
    return changes + plan_absent(stale), refusals


def plan_absent(current, keep_namespace=False):
    """A delete for each guard object in `current` (those with the guard's labels), in reverse apply order, the Namespace
    last; an object already being deleted is left to finish."""
    order = dict((kind, index) for index, kind in enumerate(KINDS))
    chosen = [obj for obj in current if guard_object(obj) and not obj['metadata'].get('deletionTimestamp')
              and not (keep_namespace and obj['kind'] == 'Namespace')]
    chosen.sort(key=lambda obj: (-order.get(obj['kind'], len(KINDS)), object_id(obj)))
    return [_change(object_id(obj), obj, 'delete', obj, None) for obj in chosen]


def _change(key, obj, action, before, after, patch=None):
    metadata = obj['metadata']
    shape = after if after is not None else None
    return {'id': key, 'kind': obj['kind'], 'name': metadata['name'], 'namespace': metadata.get('namespace'), 'action': action,
            'body': after, 'patch': patch, 'before': view(before, shape), 'after': view(after, shape)}


def diff(changes):
    """{before, after}: each changed object as it is and as it will be (fields the collection sets), keyed by object_id."""
    moving = [change for change in changes if change['action'] != 'none']
    return {'before': dict((change['id'], change['before']) for change in moving),
            'after': dict((change['id'], change['after']) for change in moving)}


def check_mode_skipped(changes):
    """The ids of the changes check mode does not send: what lies in a namespace the run creates (the API server would
    answer 404), and a binding whose role the run creates (without `bind`, the API server resolves the role to check
    the binding against RBAC escalation: 404 before it exists)."""
    created = set(change['id'] for change in changes if change['action'] == 'create')
    namespaces = set(change['name'] for change in changes if change['kind'] == 'Namespace' and change['id'] in created)
    skipped = set()
    for change in changes:
        body = change['body'] or {}
        role = body.get('roleRef') or {}
        role_id = '%s %s' % (role.get('kind'), '%s/%s' % (change['namespace'], role.get('name')) if role.get('kind') == 'Role'
                             else role.get('name'))
        if change['namespace'] in namespaces or (change['action'] != 'delete' and role and role_id in created):
            skipped.add(change['id'])
    return skipped


def result_entries(changes):
    """The `objects` of the module's result: id, kind, name, namespace and action of each object."""
    return [dict((key, change[key]) for key in ('id', 'kind', 'name', 'namespace', 'action')) for change in changes]
