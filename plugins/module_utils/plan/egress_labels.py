# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which nodes can host secondary-network egress IPs, why the others cannot, and the label changes of
ocp.egressip.egress_nodes (with the guard against stranding egress IPs), as pure functions (no I/O); the MachineSet
template labels.
"""


from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import (
    EGRESS_ASSIGNABLE_LABEL,
    is_managed,
    LABEL_RECORD_ANNOTATION,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    REMEDIATED_ANNOTATION,
)
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import node_networks_from_node
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import host_cidr_holds
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn


# --- egress-assignable nodes --------------------------------------------------------------------

def in_network(address, networks):
    """Whether 'ip/prefix' is a base address inside one of `networks` (same prefix length: not a /32 egress IP)."""
    return any(host_cidr_holds(address, network) for network in networks)


def node_capability(host_cidrs, nns, networks, mac=None):
    """Why a node cannot host secondary-network egress IPs ([] when it can).

    host_cidrs: the node's `k8s.ovn.org/host-cidrs` entries (what OVN-K places by, DOMAIN.md
    section 3). nns: its NodeNetworkState (host-cidrs include links that are down, so the NIC
    must also be up there). networks: the secondary cidrs. mac: the NIC's MAC when known.
    """
    reasons = []
    if not any(in_network(entry, networks) for entry in host_cidrs or []):
        reasons.append('k8s.ovn.org/host-cidrs has no address in %s' % ', '.join(str(n) for n in networks))
    if nns is None:
        reasons.append('no NodeNetworkState (Kubernetes NMState not running on the node)')
        return reasons
    if mac:
        interface = nn.interface_by_mac(nns, mac)
        if interface is None:
            reasons.append('no interface with MAC %s (NIC not attached)' % nn.normalize_mac(mac))
            return reasons
        candidates = [interface]
    else:
        candidates = [item for item in nn.nns_interfaces(nns) if any(in_network(entry, networks) for entry in nn.interface_addresses(item))]
    if not candidates:
        reasons.append('no interface holds an address in %s' % ', '.join(str(n) for n in networks))
    elif not any(item.get('state') == 'up' for item in candidates):
        reasons.append('interface %s is %s' % (candidates[0].get('name'), candidates[0].get('state') or 'not up'))
    elif mac and not any(in_network(entry, networks) for entry in nn.interface_addresses(candidates[0])):
        reasons.append('interface %s has no address in %s' % (candidates[0].get('name'), ', '.join(str(n) for n in networks)))
    return reasons


def label_recorded(obj):
    """Whether a Node (or MachineSet template metadata holder) carries the record that this collection set its label."""
    return (((obj or {}).get('metadata') or {}).get('annotations') or {}).get(LABEL_RECORD_ANNOTATION) == MANAGED_BY_VALUE


def unowned_egress_ips(hosted, owned_objects, networks=None):
    """The (object, IP) pairs of `hosted` this collection does not own: of an object without its label, or outside
    the secondary `networks` (a primary-network egress IP)."""
    parsed = [netaddr.IPNetwork(network) for network in networks or []]

    def in_secondary(ip):
        try:
            address = netaddr.IPAddress(str(ip).strip())
        except (netaddr.AddrFormatError, ValueError, TypeError):
            return False
        return not parsed or any(address.version == network.version and address in network for network in parsed)
    return [(name, ip) for name, ip in hosted if name not in owned_objects or not in_secondary(ip)]


def plan_labels(labelled, capable, matching, egressips, exclusive=True, force=False, recorded=(), networks=None):
    """Label changes for the egress-assignable label.

    labelled: nodes that carry the label now. capable: nodes that match the selector and can host
    secondary egress IPs. matching: nodes that match the selector. egressips: EgressIP objects
    (status.items says which node hosts which IP). recorded: labelled nodes whose label this collection
    set (LABEL_RECORD_ANNOTATION); the others were labelled by hand (or by a release before the record) and
    keep their label unless force. networks: the secondary cidrs (an egress IP outside them is a primary-network one).
    Returns (add, remove, findings): removing a label is refused (unless force) when the node hosts an egress IP this
    collection does not own (it would move), or one of its own without a capable replacement (a labelled capable
    node that does not host another IP of the same object).
    """
    labelled, capable, matching = set(labelled), set(capable), set(matching)
    recorded = set(recorded) & labelled
    add = sorted(capable - labelled)
    candidates = labelled - capable
    if not exclusive:
        candidates &= matching
    findings = hand_made_findings(sorted(candidates - recorded), sorted((labelled & capable) - recorded), matching, force)
    remove = sorted(candidates if force else candidates & recorded)
    if force:
        return add, remove, findings
    owned_objects = set(obj['metadata']['name'] for obj in egressips or [] if is_managed(obj))
    hosted = hosted_egress_ips(egressips)
    for node in remove:
        findings += [_moves_unowned(node, name, ip) for name, ip in unowned_egress_ips(hosted.get(node, []), owned_objects, networks)]
    findings += _strands(remove, capable, egressips, dict(
        (node, [pair for pair in pairs if pair not in unowned_egress_ips(pairs, owned_objects, networks)]) for node, pairs in hosted.items()))
    return add, remove, findings


def hand_made_findings(kept, labelled_capable, matching, force):
    """One finding per label this collection did not set: kept (warning; removed with force) or left as it is (info)."""
    fix = ('Fix: to hand it over (later runs and disable then manage it), run egress_nodes with adopt: true (egress_nodes_adopt) or '
           '`oc annotate node %s %s=%s`; to remove it, `oc label node %s %s-` (or force: true).')
    findings = []
    for node in kept:
        where = 'matches' if node in matching else 'is outside'
        findings.append(catalogue_finding(
            'egress_label_set_by_hand', 'node %s %s the egress node selector and carries %s without the record %s=%s: the label was '
            'not set by this collection (by hand, or by a release before the record), so it %s. %s'
            % (node, where, EGRESS_ASSIGNABLE_LABEL, LABEL_RECORD_ANNOTATION, MANAGED_BY_VALUE,
               'is removed (force)' if force else 'is kept', fix % (node, LABEL_RECORD_ANNOTATION, MANAGED_BY_VALUE, node, EGRESS_ASSIGNABLE_LABEL)),
            objects=[{'kind': 'Node', 'name': node}]))
    for node in labelled_capable:
        findings.append(catalogue_finding(
            'egress_label_set_by_hand', 'node %s carries %s without the record %s=%s (set by hand, or by a release before the record): '
            'it stays, and disable will not remove it. %s'
            % (node, EGRESS_ASSIGNABLE_LABEL, LABEL_RECORD_ANNOTATION, MANAGED_BY_VALUE,
               fix % (node, LABEL_RECORD_ANNOTATION, MANAGED_BY_VALUE, node, EGRESS_ASSIGNABLE_LABEL)),
            objects=[{'kind': 'Node', 'name': node}], severity='info'))
    return findings


def _moves_unowned(node, name, ip):
    return catalogue_finding(
        'node_hosts_unowned_egress_ips',
        'removing %s from node %s would move egress IP %s of EgressIP %s, which this collection does not own (a primary-network '
        'egress IP, or an object without the label %s=%s).' % (EGRESS_ASSIGNABLE_LABEL, node, ip, name, MANAGED_BY_LABEL, MANAGED_BY_VALUE),
        objects=[{'kind': 'Node', 'name': node}, {'kind': 'EgressIP', 'name': name}])


def _strands(remove, capable, egressips, hosted):
    """node_hosts_egress_ips for each owned egress IP on a node losing its label without a capable replacement."""
    by_object = {}
    for obj in egressips or []:
        by_object[obj['metadata']['name']] = set(item.get('node') for item in (obj.get('status') or {}).get('items') or [])
    findings = []
    for node in remove:
        for object_name, egress_ip in hosted.get(node, []):
            needed = sum(1 for other in remove for name, _ip in hosted.get(other, []) if name == object_name)
            spare = set(capable) - by_object.get(object_name, set())  # after the change exactly the capable nodes are labelled
            if len(spare) < needed:
                findings.append(catalogue_finding(
                    'node_hosts_egress_ips',
                    'removing %s from node %s would strand egress IP %s of EgressIP %s: %d capable replacement node(s) for %d IP(s) of that object.'
                    % (EGRESS_ASSIGNABLE_LABEL, node, egress_ip, object_name, len(spare), needed),
                    objects=[{'kind': 'Node', 'name': node}, {'kind': 'EgressIP', 'name': object_name}]))
    return findings


# --- egress_nodes: the plan ----------------------------------------------------------------------

def validate_selector(selector):
    """Refusals for a selector that is neither a label map nor a LabelSelector."""
    try:
        selector_matches(selector, {})
    except (ValueError, AttributeError, TypeError) as exc:
        return [nn.input_invalid('selector', selector, 'is not a label selector (%s)' % exc,
                                 'give {label: value, ...} or {matchLabels: ..., matchExpressions: [{key, operator: In|NotIn|Exists|DoesNotExist, values}]}.')]
    return []


def plan_egress_nodes(selector, networks, macs, snapshot, present=True, exclusive=True, force=False, adopt=False, deleted=()):
    """Which nodes get or lose the egress-assignable label (and the record that this collection set it).

    networks: the secondary cidrs (text). macs: {node: MAC} of the secondary NICs when known.
    snapshot: {'nodes', 'nns', 'egressips'}. Capable = matches the selector, the NIC is up
    with an address in every secondary network (NodeNetworkState) and host-cidrs shows it.
    adopt: record as set by this collection the hand-made labels of capable nodes (present only).
    deleted: EgressIP objects an earlier step of the same run deletes (their IPs hold no label back).
    """
    states = nn.by_name(snapshot['nns'])
    labelled, recorded, matching, capable, not_capable, remediated = [], [], [], [], [], []
    for node in sorted(snapshot['nodes'], key=lambda item: item['metadata']['name']):
        name = node['metadata']['name']
        labels = node['metadata'].get('labels') or {}
        if REMEDIATED_ANNOTATION in (node['metadata'].get('annotations') or {}):
            remediated.append(name)
        if EGRESS_ASSIGNABLE_LABEL in labels:
            labelled.append(name)
        if label_recorded(node):
            recorded.append(name)
        if not selector_matches(selector, labels):
            continue
        matching.append(name)
        host_cidrs = [str(cidr) for cidr in node_networks_from_node(node).host_cidrs]
        reasons = []
        for network in networks:
            reasons += node_capability(host_cidrs, states.get(name), [network], macs.get(name))
        reasons = sorted(set(reasons), key=reasons.index)
        if reasons:
            not_capable.append({'node': name, 'reasons': reasons})
        else:
            capable.append(name)
    egressips = [obj for obj in snapshot.get('egressips') or [] if obj['metadata']['name'] not in set(deleted)]
    wanted = capable if present else []
    owned = set(recorded) & set(labelled)
    adopted = sorted(set(wanted) & set(labelled) - owned) if adopt and present else []
    add, remove, findings = plan_labels(labelled, wanted, matching, egressips, exclusive, force, owned | set(adopted), networks)
    for item in not_capable:
        if present:
            findings.append(catalogue_finding(
                'node_not_capable', 'node %s matches the egress node selector but cannot host egress IPs of %s: %s.'
                % (item['node'], ', '.join(networks), '; '.join(item['reasons'])), objects=[{'kind': 'Node', 'name': item['node']}]))
    after = sorted((set(labelled) - set(remove)) | set(add))
    stale = sorted(set(recorded) - set(labelled) - set(add))  # a record without its label (removed by hand): dropped
    return {'findings': findings, 'add': add, 'remove': remove, 'adopt': adopted, 'forget': stale, 'capable': capable,
            'not_capable': not_capable, 'matching': matching, 'before': labelled, 'after': after,
            'hand_made': sorted(set(after) - owned - set(adopted) - set(add)),
            'recorded_before': sorted(recorded), 'recorded_after': sorted((set(recorded) - set(remove) - set(stale)) | set(add) | set(adopted)),
            # the remediations' record (egressip.ocp/remediated-at, the guard's hold-down) goes with the collection (absent)
            'remediated_before': remediated, 'remediated_after': remediated if present else []}


def label_changes(plan):
    """[(node, merge patch)] of an egress_nodes plan: label with its record, label removal with it, record alone; and,
    when the collection goes (state absent), the remediated-at annotation with them or alone."""
    changes = ([(name, label_patch(True)) for name in plan['add']] + [(name, label_patch(False)) for name in plan['remove']]
               + [(name, record_patch(True)) for name in plan['adopt']] + [(name, record_patch(False)) for name in plan['forget']])
    cleared = sorted(set(plan.get('remediated_before') or []) - set(plan.get('remediated_after') or []))
    for name, body in changes:
        if name in cleared:
            body['metadata']['annotations'][REMEDIATED_ANNOTATION] = None
    patched = set(name for name, _body in changes)
    return changes + [(name, {'metadata': {'annotations': {REMEDIATED_ANNOTATION: None}}}) for name in cleared if name not in patched]


def label_patch(add):
    """Merge patch of a Node: the egress-assignable label ('') with the record that this collection set it, or both removed (null)."""
    return {'metadata': {'labels': {EGRESS_ASSIGNABLE_LABEL: '' if add else None},
                         'annotations': {LABEL_RECORD_ANNOTATION: MANAGED_BY_VALUE if add else None}}}


def record_patch(add):
    """Merge patch of a Node: the record alone (a hand-made label handed over, or a record whose label is gone)."""
    return {'metadata': {'annotations': {LABEL_RECORD_ANNOTATION: MANAGED_BY_VALUE if add else None}}}


def _template_metadata(machineset):
    return (((machineset.get('spec') or {}).get('template') or {}).get('spec') or {}).get('metadata') or {}


def machineset_template_labels(machineset):
    """The labels a MachineSet puts on the Nodes of its new Machines (spec.template.spec.metadata.labels)."""
    return _template_metadata(machineset).get('labels') or {}


def plan_machineset_labels(capable, rows, machinesets, present=True, force=False):
    """MachineSets whose template gets (present) or loses (absent) the egress-assignable label.

    capable: the capable nodes. rows: _machine_api.node_machines() output (node -> MachineSet).
    Present: the MachineSets that build capable nodes, so their next Machines arrive labelled;
    absent: every MachineSet whose template carries the label with this collection's record (the
    template's annotations, which Machine API passes on to the Nodes with the label); a template
    labelled by hand keeps it unless force. Returns ([(name, add)], before, after).
    """
    labelled = sorted(item['metadata']['name'] for item in machinesets
                      if EGRESS_ASSIGNABLE_LABEL in machineset_template_labels(item))
    if present:
        wanted = sorted(set(row['machineset'] for row in rows if row['node'] in set(capable) and row['machineset']))
        changes = [(name, True) for name in wanted if name not in labelled]
        after = sorted(set(labelled) | set(wanted))
    else:
        ours = [item['metadata']['name'] for item in machinesets if force or label_recorded({'metadata': _template_metadata(item)})]
        changes = [(name, False) for name in labelled if name in ours]
        after = sorted(set(labelled) - set(ours))
    return changes, labelled, after


def machineset_label_patch(add):
    """Merge patch of a MachineSet template: the label with its record (Machine API copies both to new Nodes), or both removed."""
    return {'spec': {'template': {'spec': {'metadata': label_patch(add)['metadata']}}}}
