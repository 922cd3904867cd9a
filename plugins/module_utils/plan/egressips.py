# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure plan of the EgressIP objects: the desired object, the managed view both sides of a diff use, the ordered
changes, the delete guard and the explanation of unassigned IPs. The egressip module and the render action plugin
call the same functions. No I/O. Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import is_managed, MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.core import kinds
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import normal_ip
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding

API_VERSION = kinds.api_version(kinds.EGRESSIPS)
KIND = kinds.EGRESSIPS.kind
OWNER = (MANAGED_BY_LABEL, MANAGED_BY_VALUE)


def desired_object(entry):
    """The EgressIP for one entry: ownership label and spec, IPs in canonical form."""
    spec = {'egressIPs': [normal_ip(ip) for ip in entry['egress_ips']],
            'namespaceSelector': copy.deepcopy(entry['namespace_selector'])}
    if entry.get('pod_selector') is not None:
        spec['podSelector'] = copy.deepcopy(entry['pod_selector'])
    return {'apiVersion': API_VERSION, 'kind': KIND,
            'metadata': {'name': entry['name'], 'labels': {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}, 'spec': spec}


def managed_view(obj):
    """What the collection manages of an EgressIP: its ownership label and spec (None for no object).

    One function for both sides of the diff and of the comparison.
    """
    if obj is None:
        return None
    labels = (obj.get('metadata') or {}).get('labels') or {}
    view = {'metadata': {'labels': {}}, 'spec': {}}
    if MANAGED_BY_LABEL in labels:
        view['metadata']['labels'][MANAGED_BY_LABEL] = labels[MANAGED_BY_LABEL]
    spec = obj.get('spec') or {}
    for key in ('egressIPs', 'namespaceSelector', 'podSelector'):
        if spec.get(key) is not None:
            view['spec'][key] = copy.deepcopy(spec[key])
    return view


def _same(current_view, desired_view):
    """Equal managed parts; the order and spelling of the IPs do not matter."""
    def comparable(view):
        result = copy.deepcopy(view)
        result['spec']['egressIPs'] = sorted(normal_ip(ip) or ip for ip in result['spec'].get('egressIPs') or [])
        return result
    return comparable(current_view) == comparable(desired_view)


def plan_changes(objects, existing, state, exclusive, adopt):
    """(changes, refusals): one change per object to write, in write order, and ownership refusals.

    objects: entries of the module. existing: {name: EgressIP}. A change is
    {'name', 'action', 'before', 'after', 'patch', 'body'}: before/after are managed views, patch
    is the merge patch of an update, body the object to create.
    """
    listed = [entry['name'] for entry in objects]
    changes, refusals, deletes = [], [], []
    for index, entry in enumerate(objects):
        current = existing.get(entry['name'])
        owned = current is not None and is_managed(current)
        if current is not None and not owned and not adopt:
            refusals.append(catalogue_finding(
                'egressip_not_owned', 'objects[%d].name %s: EgressIP %s exists without the label %s=%s, so it was not created by '
                'this collection; it is left as it is.' % (index, entry['name'], entry['name'], MANAGED_BY_LABEL, MANAGED_BY_VALUE),
                objects=[{'kind': 'EgressIP', 'name': entry['name']}]))
            continue
        if state == 'absent':
            if current is not None:
                deletes.append(_delete(entry['name'], current))
            continue
        desired = desired_object(entry)
        before, after = managed_view(current), managed_view(desired)
        if current is None:
            changes.append({'name': entry['name'], 'action': 'create', 'before': None, 'after': after, 'body': desired})
        elif not _same(before, after):
            changes.append({'name': entry['name'], 'action': 'update' if owned else 'adopt', 'before': before, 'after': after,
                            'patch': nn.merge_patch(before, after), 'drops_ips': _drops_ips(before, after)})
    if state == 'present' and exclusive:
        for name, current in sorted(existing.items()):
            if name not in listed and is_managed(current):
                deletes.append(_delete(name, current))
    # Deletes and patches that free IPs go first, so an IP can move from one object to another in one run.
    updates = [change for change in changes if change['action'] != 'create']
    ordered = deletes + sorted(updates, key=lambda change: not change['drops_ips']) + \
        [change for change in changes if change['action'] == 'create']
    return ordered, refusals


def _delete(name, current):
    return {'name': name, 'action': 'delete', 'before': managed_view(current), 'after': None,
            'assigned': [{'egressip': name, 'ip': item.get('egressIP'), 'node': item.get('node')}
                         for item in (current.get('status') or {}).get('items') or [] if item.get('node')]}


def delete_guard(changes, force):
    """(stops_carrying, refusals): the assigned egress IPs of the deletes, refused (one finding per object) unless force."""
    stops, refusals = [], []
    for change in changes:
        assigned = change.get('assigned') or []
        stops += assigned
        if assigned and not force:
            refusals.append(catalogue_finding(
                'egressip_delete_assigned', 'deleting EgressIP %s would stop the traffic its assigned egress IP(s) carry: %s.'
                % (change['name'], ', '.join('%s on %s' % (item['ip'], item['node']) for item in assigned)),
                objects=[{'kind': 'EgressIP', 'name': change['name']}] + [{'kind': 'Node', 'name': item['node']} for item in assigned]))
    return stops, refusals


def _drops_ips(before, after):
    kept = set(normal_ip(ip) for ip in after['spec'].get('egressIPs') or [])
    return any(normal_ip(ip) not in kept for ip in before['spec'].get('egressIPs') or [])


def diff_of(changes):
    return {'before': dict((change['name'], change['before']) for change in changes),
            'after': dict((change['name'], change['after']) for change in changes)}


def explain_gaps(gaps, events):
    """Each gap with the Warning events of its object (newest first) and one finding per object."""
    by_object = {}
    for event in events:
        involved = event.get('involvedObject') or event.get('involved_object') or {}
        if involved.get('kind') == KIND and event.get('type', 'Warning') == 'Warning':
            by_object.setdefault(involved.get('name'), []).append(event)
    explained, findings = [], []
    for name in sorted(set(gap['egressip'] for gap in gaps)):
        recent = sorted(by_object.get(name, []), key=lambda event: str(event.get('lastTimestamp') or event.get('eventTime') or ''),
                        reverse=True)
        summary = [{'reason': event.get('reason'), 'message': event.get('message'), 'count': event.get('count') or 1}
                   for event in recent]
        mine = [gap for gap in gaps if gap['egressip'] == name]
        for gap in mine:
            explained.append(dict(gap, events=summary))
        findings.append(catalogue_finding(
            'egressip_unassigned', 'EgressIP %s: %s. Events: %s.' % (
                name, '; '.join(_describe_gap(gap) for gap in mine),
                ' | '.join('%s (x%d): %s' % (item['reason'], item['count'], item['message']) for item in summary[:5])
                or 'none recorded for this object'),
            objects=[{'kind': 'EgressIP', 'name': name}] + [{'kind': 'Node', 'name': gap['node']} for gap in mine if gap['node']]))
    return explained, findings


def _describe_gap(gap):
    if gap['problem'] == 'unassigned':
        return '%s is not assigned to any node' % gap['ip']
    if gap['problem'] == 'node_missing':
        return '%s is assigned to node %s, which does not exist' % (gap['ip'], gap['node'])
    return "%s is assigned to node %s, whose host-cidrs do not hold its network" % (gap['ip'], gap['node'])


# --- I/O -------------------------------------------------------------------------------------------
