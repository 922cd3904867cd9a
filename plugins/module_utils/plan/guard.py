# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guard's record of a round, pure parts: the state of each EgressIP object from a verification, the Kubernetes
Events a change of state (or a state that lasts) gives, and the status ConfigMap.

An object is in one state per round: ``blackhole`` (an IP assigned to a node whose secondary path is broken),
``unassigned`` (an IP on no node, or on a node that is gone, not Ready, unlabelled or lacks the network),
``capacity_low`` (a capacity finding names it, or names no object: then every object), ``unknown`` (its path could
not be checked) or ``healthy``. A Warning Event is created when an object enters a bad state and, while the state
lasts, the same Event's ``count`` and ``lastTimestamp`` are raised each round (as the kubelet aggregates its own
Events); a Normal ``EgressIPHealthy`` Event only when an object leaves a bad state. ``unknown`` keeps the last known
state and gives no Event. A round that remediated (removed a broken node's label) adds a Normal ``EgressIPRemediated``
Event per object whose IPs moved.

Core v1 Events, as ``oc describe egressip`` and ``oc get events`` show them. An EgressIP is cluster-scoped, so its
Events live in the ``default`` namespace (the API server accepts no other namespace for an Event without
``eventTime`` whose involvedObject has no namespace; kubernetes pkg/apis/core/validation/events.go).

Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE

HEALTHY, BLACKHOLE, UNASSIGNED, CAPACITY_LOW, UNKNOWN = 'healthy', 'blackhole', 'unassigned', 'capacity_low', 'unknown'
BAD = (BLACKHOLE, UNASSIGNED, CAPACITY_LOW)
# state -> (Event type, reason)
REASONS = {
    BLACKHOLE: ('Warning', 'EgressIPBlackhole'),
    UNASSIGNED: ('Warning', 'EgressIPUnassigned'),
    CAPACITY_LOW: ('Warning', 'EgressIPCapacityLow'),
    HEALTHY: ('Normal', 'EgressIPHealthy'),
}
REMEDIATED = ('Normal', 'EgressIPRemediated')
UNASSIGNED_STATUSES = ('unassigned', 'node_missing', 'node_lacks_network', 'unhealthy_node')
CAPACITY_IDS = ('egressip_single_point_of_failure', 'egressip_node_capacity_lost', 'egress_nodes_capacity_insufficient')
EVENTS_NAMESPACE = 'default'
COMPONENT = 'ocp.egressip-guard'
REPORTING_COMPONENT = 'ocp.egressip/guard'
DATA_KEY = 'status.json'
MESSAGE_LIMIT = 1024   # events.k8s.io's note limit; core v1 sets none, but a longer message helps nobody in `oc get events`
FINDINGS_KEPT = 50
NAME_PART_LIMIT = 200   # an Event name is <object>.<hex nanoseconds>, a DNS subdomain of at most 253 characters


def _objects_named(finding, kind):
    return set(item.get('name') for item in finding.get('objects') or [] if item.get('kind') == kind)


def object_states(verification):
    """{EgressIP name: {'state', 'ips', 'nodes', 'findings'}} from an egressip_verify result (its egress_ips rows and
    findings). ``findings`` are those naming the object or a node one of its IPs is on."""
    rows = {}
    for row in verification.get('egress_ips') or []:
        rows.setdefault(row.get('egressip'), []).append(row)
    findings = [item for item in verification.get('findings') or [] if item.get('severity') in ('error', 'warning')]
    states = {}
    for name in sorted(name for name in rows if name):
        statuses = set(row.get('status') for row in rows[name])
        nodes = sorted(set(row.get('node') for row in rows[name] if row.get('node')))
        related = [item for item in findings
                   if name in _objects_named(item, 'EgressIP') or _objects_named(item, 'Node') & set(nodes)]
        capacity = [item for item in findings if item.get('id') in CAPACITY_IDS
                    and (name in _objects_named(item, 'EgressIP') or not _objects_named(item, 'EgressIP'))]
        if 'blackhole' in statuses:
            state = BLACKHOLE
        elif statuses & set(UNASSIGNED_STATUSES):
            state = UNASSIGNED
        elif capacity:
            state = CAPACITY_LOW
        elif statuses and statuses <= {'path_not_checked'}:
            state = UNKNOWN
        else:
            state = HEALTHY
        for item in capacity:
            if item not in related:
                related.append(item)
        states[name] = {'state': state, 'ips': [row.get('ip') for row in rows[name]], 'nodes': nodes, 'findings': related}
    return states


def event_message(name, entry):
    """What the Event says: the state in words, the IPs and nodes, then each finding with its fix; at most MESSAGE_LIMIT."""
    if entry['state'] == HEALTHY:
        text = 'EgressIP %s is healthy again: %s assigned to %s on a working secondary path.' % (
            name, ', '.join(entry['ips']), ', '.join(entry['nodes']) or 'its nodes')
    else:
        words = {BLACKHOLE: 'is blackholed (assigned to a node whose secondary path is broken)',
                 UNASSIGNED: 'is not assigned to a capable node', CAPACITY_LOW: 'has too few capable egress nodes left'}
        text = 'EgressIP %s %s: IPs %s on %s.' % (name, words[entry['state']], ', '.join(entry['ips']),
                                                  ', '.join(entry['nodes']) or 'no node')
        for item in entry['findings']:
            text += ' [%s] %s' % (item.get('id'), item.get('message'))
            if item.get('remedy'):
                text += ' Fix: %s' % item['remedy']
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT - 3] + '...'


def event_name(object_name, nanoseconds):
    """As client-go names an Event: the object's name, a dot, the time in hexadecimal nanoseconds."""
    return '%s.%x' % (object_name[:NAME_PART_LIMIT], nanoseconds)


def _event(name, uid, reason, message, now, nanoseconds, namespace, instance):
    event_type, reason = reason
    involved = {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'name': name}
    if uid:
        involved['uid'] = uid
    body = {
        'apiVersion': 'v1', 'kind': 'Event',
        'metadata': {'name': event_name(name, nanoseconds), 'namespace': namespace, 'labels': {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
        'involvedObject': involved, 'reason': reason, 'message': message, 'type': event_type,
        'source': {'component': COMPONENT}, 'reportingComponent': REPORTING_COMPONENT,
        'firstTimestamp': now, 'lastTimestamp': now, 'count': 1,
    }
    if instance:
        body['reportingInstance'] = instance[:128]
    return body


def new_event(name, uid, entry, now, nanoseconds, namespace=EVENTS_NAMESPACE, instance=None):
    """A core v1 Event on EgressIP `name` for its state `entry`."""
    return _event(name, uid, REASONS[entry['state']], event_message(name, entry), now, nanoseconds, namespace, instance)


def _move_words(move, check_mode):
    if check_mode:
        return '%s would leave %s (candidates: %s)' % (move['ip'], move['from'], ', '.join(move.get('candidates') or []) or 'none')
    if move.get('to'):
        timing = ' in %.2f s' % move['seconds'] if move.get('seconds') is not None else ''
        return '%s moved from %s to %s%s' % (move['ip'], move['from'], move['to'], timing)
    return '%s left %s and was not assigned to another node yet' % (move['ip'], move['from'])


def remediated_message(name, moves, remediation):
    """What an EgressIPRemediated Event says: which labels the guard removed and where each IP of the object went."""
    nodes = sorted(set(move['from'] for move in moves))
    verb = 'would remove' if remediation.get('check_mode') else 'removed'
    text = ('The guard %s the k8s.ovn.org/egress-assignable label of %s (broken secondary path) so that OVN-Kubernetes moves '
            'EgressIP %s: %s.' % (verb, ', '.join(nodes), name, '; '.join(_move_words(move, remediation.get('check_mode')) for move in moves)))
    text += ' Fix the node, then label it again (the enable playbook or egress_nodes); the IPs do not move back.'
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT - 3] + '...'


def remediation_events(remediation, uids, now, nanoseconds, namespace=EVENTS_NAMESPACE, instance=None):
    """One Normal EgressIPRemediated Event per EgressIP whose IPs a remediation moved (or would move, in check mode);
    none when it was refused or unlabelled no node. ``remediation``: egressip_verify's ``remediation`` record."""
    remediation = remediation or {}
    if remediation.get('refused') or not remediation.get('nodes'):
        return []
    by_object = {}
    for move in remediation.get('moves') or []:
        by_object.setdefault(move['egressip'], []).append(move)
    return [_event(name, uids.get(name), REMEDIATED, remediated_message(name, by_object[name], remediation), now, nanoseconds + offset,
                   namespace, instance) for offset, name in enumerate(sorted(by_object))]


def remediation_summary(remediation):
    """What the status ConfigMap keeps of a round's remediation (None without one)."""
    if not remediation:
        return None
    return dict((key, remediation.get(key)) for key in ('nodes', 'moves', 'refused', 'deferred', 'skipped', 'check_mode', 'seconds'))


def previous_record(configmap):
    """The objects' record of the last round ({name: {'state', 'since', 'event', 'count'}}) from the status ConfigMap."""
    text = ((configmap or {}).get('data') or {}).get(DATA_KEY)
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    objects = data.get('objects') if isinstance(data, dict) else None
    return dict((key, value) for key, value in (objects or {}).items() if isinstance(value, dict))


def plan_round(states, previous, uids, now, nanoseconds, events=True, namespace=EVENTS_NAMESPACE, instance=None, remediation=None):
    """What this round records: {'create': [Event bodies], 'raise': [(event name, patch)], 'objects': the new record,
    'next_offset': the first nanosecond offset no Event of this plan uses}.

    Per object: a bad state new since the last round creates a Warning Event; the same bad state raises that Event's
    count; leaving a bad state for healthy creates a Normal EgressIPHealthy Event; unknown keeps the last record.
    A remediation of the round (egressip_verify's record) adds a Normal EgressIPRemediated Event per object it moved.
    """
    plan = {'create': [], 'raise': [], 'objects': {}}
    for offset, name in enumerate(sorted(states)):
        entry, before = states[name], previous.get(name) or {}
        if entry['state'] == UNKNOWN:
            plan['objects'][name] = dict(before, checked=False) if before else {'state': UNKNOWN, 'since': now, 'checked': False}
            continue
        record = {'state': entry['state'], 'since': before.get('since', now) if before.get('state') == entry['state'] else now,
                  'checked': True}
        if before.get('state') == entry['state']:
            if entry['state'] in BAD and before.get('event') and events:
                count = int(before.get('count') or 1) + 1
                plan['raise'].append((before['event'], {'count': count, 'lastTimestamp': now}, name, entry))
                record.update(event=before['event'], count=count)
            elif before.get('event'):
                record.update(event=before['event'], count=before.get('count') or 1)
        elif events and (entry['state'] in BAD or before.get('state') in BAD):
            body = new_event(name, uids.get(name), entry, now, nanoseconds + offset, namespace, instance)
            plan['create'].append(body)
            record.update(event=body['metadata']['name'], count=1)
        plan['objects'][name] = record
    if events:
        plan['create'] += remediation_events(remediation, uids, now, nanoseconds + len(states), namespace, instance)
    plan['next_offset'] = len(states) + len(plan['create'])
    return plan


def verdict(summary):
    summary = summary or {}
    if summary.get('errors'):
        return 'error'
    return 'warning' if summary.get('warnings') else 'ok'


def status_data(verification, objects, now, events_written, remediation=None):
    """The status ConfigMap's data: the round's time and verdict in keys of their own, the whole summary as JSON."""
    summary = dict(verification.get('summary') or {})
    findings = [dict((key, item.get(key)) for key in ('id', 'severity', 'message', 'objects'))
                for item in verification.get('findings') or [] if item.get('severity') in ('error', 'warning')]
    body = {
        'time': now, 'verdict': verdict(summary),
        'counts': dict((key, summary.get(key)) for key in ('egress_ips', 'assigned', 'healthy', 'blackholed', 'errors', 'warnings')),
        'findings': findings[:FINDINGS_KEPT], 'findings_left_out': max(0, len(findings) - FINDINGS_KEPT),
        'objects': objects, 'events': events_written,
    }
    if remediation:
        body['remediation'] = remediation_summary(remediation)
    return {'time': now, 'verdict': body['verdict'], DATA_KEY: json.dumps(body, sort_keys=True, indent=1)}


def status_configmap(name, namespace, data):
    return {'apiVersion': 'v1', 'kind': 'ConfigMap',
            'metadata': {'name': name, 'namespace': namespace, 'labels': {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
            'data': data}


def round_diff(configmap, data, plan):
    """before/after: the record of the objects and the verdict, and the Events this round writes."""
    before_data = (configmap or {}).get('data') or {}
    return {
        'before': {'verdict': before_data.get('verdict'), 'objects': previous_record(configmap), 'events': []},
        'after': {'verdict': data['verdict'], 'objects': json.loads(data[DATA_KEY])['objects'],
                  'events': sorted([body['metadata']['name'] for body in plan['create']] + [item[0] for item in plan['raise']])},
    }
