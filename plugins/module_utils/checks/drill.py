# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failover drill, pure parts: measured moves, the comparison with the prediction, the drill result.

No I/O and no clock: the caller reads the EgressIPs, takes the time (a monotonic clock) and
feeds both in. DOMAIN.md section 7 holds the facts the drill shows:

- a failed egress node (label removed, not Ready, unreachable, powered off, deleted) loses its
  egress IPs to other capable nodes, the least loaded first, among equals arbitrarily: the
  prediction (``_placement.what_if``) is a set of candidate nodes per IP, and the drill checks
  that each IP landed in its set (``_placement.compare``);
- cordon (``spec.unschedulable``) moves nothing, and a restored node gets nothing back (no
  failback): any move while nothing should move is reported;
- a disconnected secondary vNIC depends on NetworkManager (DOMAIN.md section 6): without
  ``ignore-carrier`` the address goes and the IPs move (measured like a label removal); with it
  nothing moves and the IPs are blackholed until someone removes the label (verify with
  remediation does, and the drill measures that too).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import normal_ip
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING, errors, summarize

# Drill triggers (what the drill does to the node) -> _placement trigger (what the cluster manager sees).
TRIGGERS = {
    'unlabel': 'unlabel',
    'disconnect_nic': 'disconnect_nic',
    'power_off': 'power_off',
    'cordon': 'cordon',
}


def assignments(egressips):
    """{(object, canonical IP): node} from EgressIP API objects (``status.items``)."""
    current = {}
    for egressip in egressips:
        name = (egressip.get('metadata') or {}).get('name')
        for item in (egressip.get('status') or {}).get('items') or []:
            ip = normal_ip(item.get('egressIP')) or item.get('egressIP')
            current[(name, ip)] = item.get('node')
    return current


def on_node(current, node):
    """The (object, IP) pairs a node hosts, sorted."""
    return sorted(key for key, host in current.items() if host == node)


def assignment_list(current):
    """[{'egressip', 'ip', 'node'}] sorted, for results and reports."""
    return [{'egressip': name, 'ip': ip, 'node': node} for (name, ip), node in sorted(current.items())]


class MoveTracker(object):
    """When each watched egress IP was first seen on a node other than the ones it leaves.

    watched: {(object, ip): node it is on now}; away_from: nodes that do not count as a new home.
    ``observe`` takes one read of the assignments and the seconds elapsed since the trigger.
    """

    def __init__(self, watched, away_from):
        self.watched = dict(watched)
        self.away_from = set(away_from)
        self.arrivals = {}
        self.last = {}
        self.polls = 0

    def observe(self, current, elapsed):
        self.polls += 1
        self.last = dict(current)
        for key in self.watched:
            node = current.get(key)
            if key not in self.arrivals and node and node not in self.away_from:
                self.arrivals[key] = (node, elapsed)
        return self.done()

    def done(self):
        return all(key in self.arrivals for key in self.watched)

    def pending(self):
        return sorted(key for key in self.watched if key not in self.arrivals)

    def moves(self):
        """[{'egressip', 'ip', 'from', 'to', 'seconds'}]: ``to``/``seconds`` None for an IP not moved (yet)."""
        result = []
        for (name, ip), source in sorted(self.watched.items()):
            node, elapsed = self.arrivals.get((name, ip), (None, None))
            result.append({'egressip': name, 'ip': ip, 'from': source, 'to': node, 'seconds': elapsed,
                           'now': self.last.get((name, ip))})
        return result

    def slowest(self):
        times = [elapsed for _node, elapsed in self.arrivals.values()]
        return max(times) if times else None


def unexpected_moves(before, after, keys=None):
    """IPs whose node changed between two reads (``keys`` restricts to those pairs): [{'egressip', 'ip', 'from', 'to'}]."""
    moved = []
    for key in sorted(set(before) | set(after)):
        if keys is not None and key not in keys:
            continue
        if before.get(key) != after.get(key):
            moved.append({'egressip': key[0], 'ip': key[1], 'from': before.get(key), 'to': after.get(key)})
    return moved


def failure_findings(node, trigger, prediction, moves, comparison, wire=None, unexpected=None):
    """Findings of one drill step: not reassigned, outside the prediction, wire not back, moves that should not happen."""
    findings = []
    objects = [{'kind': 'Node', 'name': node}]
    if not moves and prediction.get('effect') != 'blackhole' and not unexpected:
        findings.append(catalogue_finding('egressip_drill_nothing_to_move', 'node %s hosted no egress IP when the drill (%s) started.'
                                          % (node, trigger), objects=objects))
    certain_unassigned = set((item['egressip'], item['ip']) for item in prediction.get('unassigned') or [] if item.get('certain'))
    for move in moves:
        if move['to'] is None and (move['egressip'], move['ip']) not in certain_unassigned and prediction.get('effect') == 'moves':
            findings.append(catalogue_finding('egressip_drill_not_reassigned', 'EgressIP %s: %s left node %s (%s) and was not assigned '
                                              'to another node within the timeout (now on %s).'
                                              % (move['egressip'], move['ip'], node, trigger, move.get('now') or 'no node'),
                                              objects=objects + [{'kind': 'EgressIP', 'name': move['egressip']}]))
    for row in comparison or []:
        if not row['ok'] and row['actual'] is not None:
            findings.append(catalogue_finding('egressip_drill_prediction_mismatch', 'EgressIP %s: %s went to %s, predicted one of %s.'
                                              % (row['egressip'], row['ip'], row['actual'], ', '.join(row['predicted']) or 'none'),
                                              objects=objects + [{'kind': 'EgressIP', 'name': row['egressip']}]))
    for item in wire or []:
        if not item.get('ok'):
            findings.append(catalogue_finding('egressip_drill_wire_not_restored', 'EgressIP %s: after node %s failed (%s) the echo target '
                                              'did not see %s within the timeout (last probe: %s).'
                                              % (item['egressip'], node, trigger, ', '.join(item.get('expected') or []) or 'an egress IP',
                                                 item.get('last') or 'none ran'),
                                              objects=objects + [{'kind': 'EgressIP', 'name': item['egressip']}]))
    return findings + restore_findings(node, unexpected)


def restore_findings(node, unexpected):
    """A warning per egress IP that moved while none should (cordon, blackhole, failback after a restore)."""
    return [catalogue_finding('egressip_drill_unexpected_move', 'EgressIP %s: %s moved from %s to %s %s.'
                              % (move['egressip'], move['ip'], move['from'] or 'no node', move['to'] or 'no node',
                                 move.get('when') or 'while nothing should move'),
                              objects=[{'kind': 'Node', 'name': node}, {'kind': 'EgressIP', 'name': move['egressip']}])
            for move in unexpected or []]


def step_summary(step):
    """One line of the drill's step table, from a step (failure, optional remediation, restore)."""
    failure = step.get('failure') or {}
    remediation = step.get('remediation') or {}
    restore = step.get('restore') or {}
    moves = [move for move in (remediation.get('moves') or failure.get('moves') or []) if move.get('to')]
    comparison = (failure.get('comparison') or []) + (remediation.get('comparison') or [])
    wire = [item['seconds'] for item in failure.get('wire') or [] if item.get('ok') and item.get('seconds') is not None]
    reassigned = remediation.get('seconds') if remediation.get('moves') else failure.get('reassignment_seconds')
    return {
        'node': step.get('node'), 'trigger': step.get('trigger'),
        'egress_ips_before': len([item for item in failure.get('before') or [] if item.get('node') == step.get('node')]),
        'moved': len(moves),
        'effect': (failure.get('prediction') or {}).get('effect'),
        'reassigned_seconds': reassigned,
        'wire_seconds': max(wire) if wire else None,
        'prediction_held': all(row['ok'] for row in comparison) if comparison else None,
        'blackhole_detected': bool(remediation.get('detected')),
        'failback': bool(restore.get('unexpected_moves')),
        'restored': bool(restore) and not restore.get('failed'),
    }


def assemble(data):
    """The drill report (kind ``failover_drill``) from what the role collected.

    data: {'trigger', 'steps': [{'node', 'trigger', 'failure', 'remediation', 'restore'}],
    'cordon': failure-shaped result or None, 'baseline': verify report or None,
    'final': verify report or None, 'settings': {...}}; the report's ``cluster`` and ``generated_at`` are the final
    verify report's (else the baseline's) unless `data` gives them.
    """
    steps = list(data.get('steps') or [])
    findings = []
    for step in steps:
        for part in ('failure', 'remediation', 'restore'):
            findings += (step.get(part) or {}).get('findings') or []
    cordon = data.get('cordon')
    if cordon:
        findings += cordon.get('findings') or []
    final = data.get('final')
    if final:
        findings += [item for item in final.get('findings') or [] if item not in findings]
    # the cluster and the time: the final verify's (the end of the drill), else the baseline's
    made = final or data.get('baseline') or {}
    rows = [step_summary(step) for step in steps]
    times = [row['reassigned_seconds'] for row in rows if row['reassigned_seconds'] is not None]
    counts = summarize(findings)
    return {
        'kind': 'failover_drill',
        'cluster': data.get('cluster') or made.get('cluster'),
        'generated_at': data.get('generated_at') or made.get('generated_at'),
        'trigger': data.get('trigger'),
        'settings': data.get('settings') or {},
        'summary': {'ok': not errors(findings), 'steps': len(steps), 'nodes': [row['node'] for row in rows],
                    'moved': sum(row['moved'] for row in rows),
                    'reassigned_seconds_max': max(times) if times else None,
                    'reassigned_seconds_mean': (sum(times) / len(times)) if times else None,
                    'prediction_held': all(row['prediction_held'] is not False for row in rows),
                    'failback': any(row['failback'] for row in rows),
                    'cordon_moved': bool((cordon or {}).get('unexpected_moves')) if cordon else None,
                    'errors': counts[ERROR], 'warnings': counts[WARNING], 'info': counts[INFO]},
        'step_summaries': rows,
        'steps': steps,
        'cordon': cordon,
        'baseline': data.get('baseline'),
        'final': final,
        'findings': findings,
    }
