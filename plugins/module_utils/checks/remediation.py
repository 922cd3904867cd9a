# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify's remediation, pure parts: which broken egress nodes to unlabel so OVN-K moves their IPs, whether that is
safe (the placement prediction), the label patch, its diff and the findings of what moved.

Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import datetime

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import (
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    EGRESS_ASSIGNABLE_LABEL,
    REMEDIATED_ANNOTATION,
)
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.plan.egress_labels import label_recorded, unowned_egress_ips

TIME_FORMAT = '%Y-%m-%dT%H:%M:%SZ'
EPOCH = datetime.datetime(1970, 1, 1)


def _remediation_skips(broken, snapshot, cidr):
    """{node: reason} for broken nodes whose label remediation must not remove: a label set by hand (no record that
    this collection set it) or a node hosting egress IPs the collection does not own (a primary-network IP, or an
    object without its managed-by label), since removing the label would move those IPs too."""
    nodes = dict((((node.get('metadata') or {}).get('name')), node) for node in snapshot.get('nodes') or [])
    owned = set(obj['metadata']['name'] for obj in snapshot.get('egressips') or []
                if ((obj.get('metadata') or {}).get('labels') or {}).get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE)
    hosted = {}
    for obj in snapshot.get('egressips') or []:
        for item in (obj.get('status') or {}).get('items') or []:
            hosted.setdefault(item.get('node'), []).append((obj['metadata']['name'], item.get('egressIP')))
    skips = {}
    for name in broken:
        cidrs = [str(item) for item in (cidr if isinstance(cidr, (list, tuple)) else [cidr]) if item]
        unowned = unowned_egress_ips(hosted.get(name, []), owned, cidrs or None)
        if unowned:
            skips[name] = 'it hosts egress IP(s) the collection does not own: %s' % ', '.join('%s (EgressIP %s)' % (ip, obj) for obj, ip in unowned)
        elif name in nodes and not label_recorded(nodes[name]):
            skips[name] = 'its %s label was set by hand (no %s record)' % (EGRESS_ASSIGNABLE_LABEL, 'egressip.ocp/egress-assignable')
    return skips


def remediated_at(node):
    """When this collection last removed the node's label to move its IPs (epoch seconds), from its annotation; None."""
    text = (((node or {}).get('metadata') or {}).get('annotations') or {}).get(REMEDIATED_ANNOTATION)
    try:
        stamp = datetime.datetime.strptime(text or '', TIME_FORMAT)
    except ValueError:
        return None
    return (stamp - EPOCH).total_seconds()


def _hosted_counts(result):
    counts = {}
    for row in result['egress_ips']:
        if row.get('node'):
            counts[row['node']] = counts.get(row['node'], 0) + 1
    return counts


def guard_limits(broken, result, snapshot, limits):
    """(nodes to unlabel now, {node: reason} deferred) under the guard's limits (all optional).

    They bound the moves of traffic, so ``limit`` and ``hold_down`` apply to the broken nodes that host egress IPs:
    ``limit`` - at most that many of them per run, those hosting the most IPs first (then by name); ``hold_down``
    seconds - one this collection unlabelled less than that ago (its remediated-at annotation: it was labelled again and
    broke again) waits. An idle broken node moves nothing when unlabelled and would otherwise receive the moved IPs, so
    it is unlabelled with them. ``min_egress_nodes`` applies to all: never fewer egress-assignable nodes than that after
    this run. ``now``: epoch seconds."""
    limits = limits or {}
    nodes = dict((node['metadata']['name'], node) for node in snapshot.get('nodes') or [])
    counts = _hosted_counts(result)
    hosting = sorted((name for name in broken if counts.get(name)), key=lambda name: (-counts[name], name))
    idle = sorted(name for name in broken if not counts.get(name))
    labelled = len([name for name, node in nodes.items() if EGRESS_ASSIGNABLE_LABEL in ((node.get('metadata') or {}).get('labels') or {})])
    floor, limit, hold_down = limits.get('min_egress_nodes') or 0, limits.get('limit'), limits.get('hold_down') or 0
    chosen, deferred = [], {}
    for name in hosting + idle:
        last = remediated_at(nodes.get(name)) if name in hosting else None
        moving = len([node for node in chosen if node in hosting])
        if hold_down and last is not None and limits['now'] - last < hold_down:
            deferred[name] = ('it was unlabelled by a remediation %d s ago, within the hold-down of %d s (egressip_guard.hold_down)'
                              % (limits['now'] - last, hold_down))
        elif labelled - len(chosen) - 1 < floor:
            deferred[name] = ('removing its label would leave %d egress-assignable node(s), below the %d the variables ask for '
                              '(egressip_guard.min_egress_nodes)' % (labelled - len(chosen) - 1, floor))
        elif name in hosting and limit is not None and moving >= limit:
            deferred[name] = ('this run already moves the egress IPs of %d node(s), its limit (egressip_guard.max_remediations)'
                              % limit)
        else:
            chosen.append(name)
    return chosen, deferred


def _deferred_findings(deferred):
    return [catalogue_finding('egressip_remediation_deferred', 'Node %s has a broken secondary path but keeps its label for now: %s.'
                              % (name, deferred[name]), objects=[{'kind': 'Node', 'name': name}]) for name in sorted(deferred)]


def plan_remediation(result, snapshot, cidr=None, limits=None):
    """Which broken egress nodes to unlabel so OVN-K moves their IPs, and whether that is safe.

    Every labelled node whose secondary path is broken loses the label (an idle one too: OVN-K
    could otherwise move an IP onto it), except a node whose label the collection did not set or
    that hosts egress IPs the collection does not own (egressip_remediation_skipped), and one the
    guard's limits defer (guard_limits; egressip_remediation_deferred). Refused as a whole when the
    prediction says a moved IP may be left unassigned. Returns {'nodes': [names], 'moves': [{'egressip',
    'ip', 'from', 'candidates'}], 'refused': bool, 'findings': [...], 'skipped': {node: reason}, 'deferred': {node: reason}}.
    """
    skips = _remediation_skips(result['broken_nodes'], snapshot, cidr)
    broken, deferred = guard_limits([name for name in result['broken_nodes'] if name not in skips], result, snapshot, limits)
    plan = {'nodes': broken, 'moves': [], 'refused': False, 'findings': [], 'skipped': skips, 'deferred': deferred}
    for name in sorted(skips):
        plan['findings'].append(catalogue_finding(
            'egressip_remediation_skipped', 'Node %s has a broken secondary path but its label is left alone: %s.' % (name, skips[name]),
            objects=[{'kind': 'Node', 'name': name}]))
    plan['findings'] += _deferred_findings(deferred)
    if not broken:
        return plan
    after = copy.deepcopy(snapshot['placement'])
    for name in broken:
        after['nodes'][name]['labelled'] = False
    prediction = _placement.predict(after)
    moving = set((row['egressip'], row['ip']) for row in result['egress_ips'] if row['node'] in broken)
    stranded = []
    for placement in prediction['placements']:
        if (placement['egressip'], placement['ip']) not in moving:
            continue
        source = next(row['node'] for row in result['egress_ips'] if (row['egressip'], row['ip']) == (placement['egressip'], placement['ip']))
        plan['moves'].append({'egressip': placement['egressip'], 'ip': placement['ip'], 'from': source,
                              'candidates': placement['candidates'], 'may_be_unassigned': placement['may_be_unassigned']})
        if placement['may_be_unassigned']:
            stranded.append(placement)
    if stranded:
        plan['refused'] = True
        plan['findings'].append(catalogue_finding(
            'egressip_remediation_refused', 'Removing the egress-assignable label from %s would leave %s unassigned (%s); nothing '
            'was changed.' % (', '.join(broken), ', '.join('%s %s' % (item['egressip'], item['ip']) for item in stranded),
                              ', '.join(sorted(set(reason for item in stranded for reason in item['reasons']))) or 'no capable node'),
            objects=[{'kind': 'Node', 'name': name} for name in broken]))
    return plan


def time_text(seconds):
    """Epoch seconds as the annotation's UTC ISO 8601 text."""
    return (EPOCH + datetime.timedelta(seconds=int(seconds))).strftime(TIME_FORMAT)


def label_patch(now):
    """The merge patch that removes the egress-assignable label (OVN-K then moves the node's IPs) and records when
    (the remediated-at annotation the hold-down reads; epoch seconds ``now``)."""
    return {'metadata': {'labels': {EGRESS_ASSIGNABLE_LABEL: None}, 'annotations': {REMEDIATED_ANNOTATION: time_text(now)}}}


def remediation_diff(nodes, now, snapshot=None):
    """before/after of each unlabelled node: the label, and the remediated-at annotation (its earlier value, if any)."""
    earlier = dict((node['metadata']['name'], ((node['metadata'].get('annotations') or {}).get(REMEDIATED_ANNOTATION)))
                   for node in (snapshot or {}).get('nodes') or [])

    def before(name):
        entry = {'labels': {EGRESS_ASSIGNABLE_LABEL: ''}}
        if earlier.get(name):
            entry['annotations'] = {REMEDIATED_ANNOTATION: earlier[name]}
        return entry
    return {'before': dict((name, before(name)) for name in nodes),
            'after': dict((name, {'labels': {}, 'annotations': {REMEDIATED_ANNOTATION: time_text(now)}}) for name in nodes)}


def _move_text(move):
    timing = ' in %.2f s' % move['seconds'] if move.get('seconds') is not None else ''
    return '%s %s -> %s%s' % (move['egressip'], move['ip'], move.get('to') or 'unassigned', timing)


def remediated_findings(moves):
    """One info finding per unlabelled node, saying where its IPs went and how long it took."""
    by_node = {}
    for move in moves:
        by_node.setdefault(move['from'], []).append(move)
    findings = []
    for node, items in sorted(by_node.items()):
        text = ', '.join(_move_text(item) for item in items)
        findings.append(catalogue_finding('egressip_blackhole_remediated', 'node %s was unlabelled; %s.' % (node, text),
                                          objects=[{'kind': 'Node', 'name': node}]))
    return findings
