# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The EgressIP picture of a cluster, built from one list of Nodes and one list of EgressIPs.

Pure (no I/O): input is the API objects as plain dicts, output is the ``egressip_info``
result. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import (
    EGRESSIP_MARK_ANNOTATION,
    HOST_CIDRS_ANNOTATION,
    NONE,
    PRIMARY_IFADDR_ANNOTATION,
    SECONDARY_HOST_EGRESS_IPS_ANNOTATION,
    classify_ip_on_nodes,
    node_addresses,
    node_networks_from_node,
    parse_ip,
    secondary_subnets,
)


def is_egress_assignable(node):
    """The node carries the ``k8s.ovn.org/egress-assignable`` label (any value; OVN-K checks presence)."""
    return EGRESS_ASSIGNABLE_LABEL in ((node.get('metadata') or {}).get('labels') or {})


def is_ready(node):
    """The node's ``Ready`` condition is ``True``."""
    for condition in (node.get('status') or {}).get('conditions') or []:
        if condition.get('type') == 'Ready':
            return condition.get('status') == 'True'
    return False


def _same_ip(left, right):
    left_ip, right_ip = parse_ip(left), parse_ip(right)
    if left_ip is None or right_ip is None:
        return left == right
    return left_ip == right_ip


def _status_items(egressip):
    return [dict(node=item.get('node'), egress_ip=item.get('egressIP'))
            for item in ((egressip.get('status') or {}).get('items') or [])]


def _ip_facts(ip, status_items, networks, assignable, notes, egressip_name):
    address = parse_ip(ip)
    assigned_node = next((item['node'] for item in status_items if _same_ip(item['egress_ip'], ip)), None)
    if address is None:
        notes.append('EgressIP %s: %r is not an IP address' % (egressip_name, ip))
        return dict(ip=ip, network=NONE, subnet=None, assigned_node=assigned_node, candidate_nodes=[], node_address_conflicts=[])
    placement = classify_ip_on_nodes(address, networks)
    return dict(
        ip=ip,
        network=placement.network,
        subnet=str(placement.subnet) if placement.subnet is not None else None,
        assigned_node=assigned_node,
        candidate_nodes=[name for name in placement.nodes if name in assignable],
        node_address_conflicts=sorted(node.name for node in networks if address in node_addresses(node)),
    )


def egressip_object_facts(egressip, networks, assignable, notes):
    """One EgressIP object: its spec and status, and where each of its IPs falls and sits."""
    metadata = egressip.get('metadata') or {}
    spec = egressip.get('spec') or {}
    status_items = _status_items(egressip)
    ips = [_ip_facts(ip, status_items, networks, assignable, notes, metadata.get('name')) for ip in spec.get('egressIPs') or []]
    return dict(
        name=metadata.get('name'),
        resource_version=metadata.get('resourceVersion'),
        mark=(metadata.get('annotations') or {}).get(EGRESSIP_MARK_ANNOTATION),
        egress_ips=list(spec.get('egressIPs') or []),
        namespace_selector=spec.get('namespaceSelector'),
        pod_selector=spec.get('podSelector'),
        status_items=status_items,
        all_assigned=bool(ips) and all(item['assigned_node'] for item in ips),
        ips=ips,
        spec=spec,
        status=egressip.get('status') or {},
    )


def node_facts(node, networks, egressip_facts_list):
    """One node: readiness, egress label, its OVN-K network annotations (parsed) and the egress IPs it hosts."""
    metadata = node.get('metadata') or {}
    name = metadata.get('name')
    hosted = [dict(egressip=item['name'], ip=status['egress_ip'])
              for item in egressip_facts_list for status in item['status_items'] if status['node'] == name]
    return dict(
        name=name,
        egress_assignable=is_egress_assignable(node),
        ready=is_ready(node),
        provider_id=(node.get('spec') or {}).get('providerID'),
        host_cidrs=networks.annotations[HOST_CIDRS_ANNOTATION],
        primary_ifaddr=networks.annotations[PRIMARY_IFADDR_ANNOTATION],
        secondary_host_egress_ips=networks.annotations[SECONDARY_HOST_EGRESS_IPS_ANNOTATION],
        primary_subnets=[str(cidr.cidr) for cidr in networks.primary_ifaddrs],
        secondary_subnets=[str(subnet) for subnet in secondary_subnets(networks)],
        assigned_egress_ips=sorted(hosted, key=lambda item: (item['egressip'], item['ip'])),
        notes=list(networks.notes),
    )


def egressip_facts(nodes, egressips):
    """The ``egressip_info`` result from the Node and EgressIP lists (API dicts)."""
    nodes = sorted(nodes, key=lambda node: (node.get('metadata') or {}).get('name') or '')
    egressips = sorted(egressips, key=lambda item: (item.get('metadata') or {}).get('name') or '')
    networks = [node_networks_from_node(node) for node in nodes]
    assignable = [(node.get('metadata') or {}).get('name') for node in nodes if is_egress_assignable(node)]
    notes = [note for item in networks for note in item.notes]
    egressip_list = [egressip_object_facts(item, networks, assignable, notes) for item in egressips]
    return dict(
        egressips=egressip_list,
        nodes=[node_facts(node, item, egressip_list) for node, item in zip(nodes, networks)],
        egress_assignable_nodes=assignable,
        notes=notes,
    )


MANAGED_BY = ('egressip.ocp/managed-by', 'ocp.egressip')  # the label of the objects this collection creates


def unowned_on_node(node, egressips, owner=MANAGED_BY):
    """[(object, IP, why)] hosted by ``node`` that this collection does not own: a primary-network egress IP (inside the
    node's ``node-primary-ifaddr`` subnet) or one of an object without its managed-by label. Moving them is not the
    collection's call (the failover drill asks for a confirmation)."""
    name = (node.get('metadata') or {}).get('name')
    networks = node_networks_from_node(node)
    found = []
    for egressip in egressips:
        metadata = egressip.get('metadata') or {}
        owned = (metadata.get('labels') or {}).get(owner[0]) == owner[1]
        for item in _status_items(egressip):
            if item['node'] != name:
                continue
            address = parse_ip(item['egress_ip'])
            primary = address is not None and any(address.version == cidr.version and address in cidr for cidr in networks.primary_ifaddrs)
            if primary or not owned:
                found.append((metadata.get('name'), item['egress_ip'], 'primary network' if primary else 'object not created by this collection'))
    return sorted(found)
