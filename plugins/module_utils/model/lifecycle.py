# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lifecycle records: what the egress setup of a cluster looks like at one moment, and what changed.

Pure code, no I/O. Migrate (before and after adopting a hand-made setup) and upgrade (before and
after an OpenShift upgrade, before and after converging objects of an older collection version)
take a *record* from one snapshot and compare two records:

- every egress IP of every EgressIP object and the node it is assigned to (``status.items``);
- every address of every node in ``k8s.ovn.org/host-cidrs`` and whether it carries the
  egress-assignable label;
- the objects that carry the collection's marks.

Because OVN-Kubernetes has no failback (DOMAIN.md section 7), an egress IP that moved during a run
does not come back on its own: comparing the records taken before and after the run catches every
move that happened in between, not only the ones still in progress.

The marks of the collection (what "created by this collection" means, in every version so far):

- the label ``egressip.ocp/managed-by: ocp.egressip`` on every object it creates (EgressIP,
  NodeNetworkConfigurationPolicy, Tuned, the verify probe pods);
- on its NodeNetworkConfigurationPolicies, the annotations ``egressip.ocp/node`` (the node) and
  ``egressip.ocp/addresses`` (the base addresses allocated to it, read back on every run).

No object records the version of the collection that wrote it: a converging run re-renders every
marked object from the variables file and patches only its managed part.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL, is_managed as is_marked
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import meta as _meta, name as _name
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import classify_ip_on_nodes, node_networks_from_node, parse_ip

RECORD_FORMAT = 1
MAX_LISTED = 20


def canonical_ip(text):
    address = parse_ip(text)
    return str(address) if address is not None else str(text)


def _infrastructure_name(snapshot):
    return ((snapshot.get('infrastructure') or {}).get('status') or {}).get('infrastructureName')


def _openshift_version(snapshot):
    status = (snapshot.get('cluster_version') or {}).get('status') or {}
    version = (status.get('desired') or {}).get('version')
    if version:
        return version
    for entry in status.get('history') or []:
        if entry.get('state') == 'Completed' and entry.get('version'):
            return entry['version']
    return None


def egress_ip_rows(snapshot):
    """[{'egressip', 'ip', 'node' (or None), 'network' (primary/secondary/none)}] sorted by object and IP."""
    networks = [node_networks_from_node(node) for node in snapshot.get('nodes') or []]
    rows = []
    for egressip in snapshot.get('egressips') or []:
        assigned = dict((canonical_ip(item.get('egressIP')), item.get('node'))
                        for item in ((egressip.get('status') or {}).get('items') or []))
        for text in ((egressip.get('spec') or {}).get('egressIPs') or []):
            address = parse_ip(text)
            network = classify_ip_on_nodes(address, networks).network if address is not None else 'none'
            ip = canonical_ip(text)
            rows.append({'egressip': _name(egressip), 'ip': ip, 'node': assigned.get(ip), 'network': network})
    return sorted(rows, key=lambda row: (row['egressip'] or '', row['ip']))


def node_rows(snapshot):
    """[{'node', 'addresses' (host-cidrs, sorted), 'egress_assignable'}] sorted by node."""
    rows = []
    for node in snapshot.get('nodes') or []:
        networks = node_networks_from_node(node)
        rows.append({'node': _name(node), 'addresses': sorted(str(cidr) for cidr in networks.host_cidrs),
                     'egress_assignable': EGRESS_ASSIGNABLE_LABEL in (_meta(node).get('labels') or {})})
    return sorted(rows, key=lambda row: row['node'])


def marked_objects(snapshot):
    """[{'kind', 'name', 'namespace'}] of the objects carrying the ownership label (EgressIP, NMState policy, Tuned)."""
    found = []
    for key, kind in (('egressips', 'EgressIP'), ('nncps', 'NodeNetworkConfigurationPolicy'), ('tuneds', 'Tuned')):
        for obj in snapshot.get(key) or []:
            if is_marked(obj):
                found.append({'kind': kind, 'name': _name(obj), 'namespace': _meta(obj).get('namespace')})
    return sorted(found, key=lambda item: (item['kind'], item['namespace'] or '', item['name']))


def record(snapshot):
    """The record of one snapshot (JSON-serialisable, deterministic: the same cluster state gives the same record)."""
    return {
        'format': RECORD_FORMAT,
        'cluster': _infrastructure_name(snapshot),
        'openshift_version': _openshift_version(snapshot),
        'egress_ips': egress_ip_rows(snapshot),
        'nodes': node_rows(snapshot),
        'managed_objects': marked_objects(snapshot),
    }


def valid_record(value):
    """Problems that make a record unusable as a baseline ([] when it is fine)."""
    if not isinstance(value, dict):
        return ['it is not a mapping']
    problems = []
    if value.get('format') != RECORD_FORMAT:
        problems.append('its format is %r, not %d' % (value.get('format'), RECORD_FORMAT))
    for key in ('egress_ips', 'nodes'):
        if not isinstance(value.get(key), list):
            problems.append('it has no %s list' % key)
    return problems


def _ip_key(row):
    return (row.get('egressip'), row.get('ip'))


def compare(before, after):
    """What changed between two records.

    Returns {'moved': [{'egressip', 'ip', 'from', 'to', 'network'}], 'unassigned': [{'egressip', 'ip', 'from'}],
    'newly_assigned': [{'egressip', 'ip', 'to'}], 'removed': [{'egressip', 'ip'}], 'added': [{'egressip', 'ip'}],
    'dropped_addresses': [{'node', 'address'}], 'nodes_gone': [node], 'labels_removed': [node], 'labels_added': [node],
    'version': {'before', 'after'}, 'ok': no move, no unassignment, no removal, no dropped address}.
    """
    old = dict((_ip_key(row), row) for row in before.get('egress_ips') or [])
    new = dict((_ip_key(row), row) for row in after.get('egress_ips') or [])
    result = {'moved': [], 'unassigned': [], 'newly_assigned': [], 'removed': [], 'added': [], 'dropped_addresses': [],
              'nodes_gone': [], 'labels_removed': [], 'labels_added': []}
    for key in sorted(old, key=lambda item: (item[0] or '', item[1])):
        was = old[key]
        if key not in new:
            result['removed'].append({'egressip': key[0], 'ip': key[1]})
            continue
        now = new[key]
        if was.get('node') and not now.get('node'):
            result['unassigned'].append({'egressip': key[0], 'ip': key[1], 'from': was['node']})
        elif was.get('node') and now.get('node') != was.get('node'):
            result['moved'].append({'egressip': key[0], 'ip': key[1], 'from': was['node'], 'to': now['node'],
                                    'network': now.get('network')})
        elif not was.get('node') and now.get('node'):
            result['newly_assigned'].append({'egressip': key[0], 'ip': key[1], 'to': now['node']})
    result['added'] = [{'egressip': key[0], 'ip': key[1]} for key in sorted(set(new) - set(old), key=lambda item: (item[0] or '', item[1]))]
    old_nodes = dict((row['node'], row) for row in before.get('nodes') or [])
    new_nodes = dict((row['node'], row) for row in after.get('nodes') or [])
    for name in sorted(old_nodes):
        if name not in new_nodes:
            result['nodes_gone'].append(name)
            continue
        kept = set(new_nodes[name].get('addresses') or [])
        result['dropped_addresses'] += [{'node': name, 'address': address}
                                        for address in sorted(old_nodes[name].get('addresses') or []) if address not in kept]
        if old_nodes[name].get('egress_assignable') and not new_nodes[name].get('egress_assignable'):
            result['labels_removed'].append(name)
        if not old_nodes[name].get('egress_assignable') and new_nodes[name].get('egress_assignable'):
            result['labels_added'].append(name)
    result['labels_added'] += sorted(name for name in new_nodes if name not in old_nodes and new_nodes[name].get('egress_assignable'))
    result['version'] = {'before': before.get('openshift_version'), 'after': after.get('openshift_version')}
    result['ok'] = not (result['moved'] or result['unassigned'] or result['removed'] or result['dropped_addresses'])
    return result


def _listed(items, render):
    texts = [render(item) for item in items]
    if len(texts) > MAX_LISTED:
        texts = texts[:MAX_LISTED] + ['... (and %d more)' % (len(texts) - MAX_LISTED)]
    return '; '.join(texts)


def comparison_findings(comparison, what, moved_severity=None, removed_severity=None):
    """Findings for a comparison. `what` names the interval ('during the adoption', 'since the snapshot').

    moved_severity: the catalogue's (error) unless given, for example info after an OpenShift upgrade, where
    rolling reboots move egress IPs by design. removed_severity likewise for IPs gone from the objects.
    """
    findings = []
    if comparison['moved']:
        findings.append(catalogue_finding(
            'lifecycle_egress_ip_moved', '%d egress IP(s) moved %s: %s.' % (len(comparison['moved']), what, _listed(
                comparison['moved'], lambda item: '%s %s from %s to %s' % (item['egressip'], item['ip'], item['from'], item['to']))),
            objects=[{'kind': 'EgressIP', 'name': name} for name in sorted(set(item['egressip'] for item in comparison['moved']))],
            severity=moved_severity))
    if comparison['unassigned']:
        findings.append(catalogue_finding(
            'lifecycle_egress_ip_unassigned', '%d egress IP(s) were assigned before and are unassigned now (%s): %s.' % (
                len(comparison['unassigned']), what, _listed(comparison['unassigned'],
                                                             lambda item: '%s %s (was on %s)' % (item['egressip'], item['ip'], item['from']))),
            objects=[{'kind': 'EgressIP', 'name': name} for name in sorted(set(item['egressip'] for item in comparison['unassigned']))]))
    if comparison['removed']:
        findings.append(catalogue_finding(
            'lifecycle_egress_ip_removed', '%d egress IP(s) existed before and are gone from their EgressIP objects (%s): %s.' % (
                len(comparison['removed']), what, _listed(comparison['removed'], lambda item: '%s %s' % (item['egressip'], item['ip']))),
            objects=[{'kind': 'EgressIP', 'name': name} for name in sorted(set(item['egressip'] for item in comparison['removed']))],
            severity=removed_severity))
    if comparison['dropped_addresses'] or comparison['nodes_gone']:
        parts = ['%s lost %s' % (item['node'], item['address']) for item in comparison['dropped_addresses']]
        parts += ['%s is gone' % name for name in comparison['nodes_gone']]
        nodes = sorted(set([item['node'] for item in comparison['dropped_addresses']] + comparison['nodes_gone']))
        findings.append(catalogue_finding(
            'lifecycle_address_dropped', 'Node address(es) in k8s.ovn.org/host-cidrs dropped %s: %s.' % (what, _listed(parts, str)),
            objects=[{'kind': 'Node', 'name': name} for name in nodes]))
    if comparison['labels_removed']:
        findings.append(catalogue_finding(
            'lifecycle_label_removed', 'The egress-assignable label was removed %s from node(s) %s.' % (
                what, ', '.join(comparison['labels_removed'])),
            objects=[{'kind': 'Node', 'name': name} for name in comparison['labels_removed']]))
    return findings


def changes_text(comparison):
    """One line per change, for the play output (including what is not a problem: new assignments, new labels)."""
    lines = ['moved: %s %s from %s to %s' % (item['egressip'], item['ip'], item['from'], item['to']) for item in comparison['moved']]
    lines += ['unassigned: %s %s (was on %s)' % (item['egressip'], item['ip'], item['from']) for item in comparison['unassigned']]
    lines += ['removed: %s %s' % (item['egressip'], item['ip']) for item in comparison['removed']]
    lines += ['address dropped: %s %s' % (item['node'], item['address']) for item in comparison['dropped_addresses']]
    lines += ['node gone: %s' % name for name in comparison['nodes_gone']]
    lines += ['newly assigned: %s %s on %s' % (item['egressip'], item['ip'], item['to']) for item in comparison['newly_assigned']]
    lines += ['added: %s %s' % (item['egressip'], item['ip']) for item in comparison['added']]
    lines += ['label added: %s' % name for name in comparison['labels_added']]
    lines += ['label removed: %s' % name for name in comparison['labels_removed']]
    return lines


def hosted_by_node(record_value):
    """{node: [(egressip, ip)]} of the assigned egress IPs of a record."""
    hosted = {}
    for row in record_value.get('egress_ips') or []:
        if row.get('node'):
            hosted.setdefault(row['node'], []).append((row['egressip'], row['ip']))
    return hosted
