# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight checks of the secondary network and the egress side: overlaps, the address plan, the route metric,
reachability, the egress nodes and capacity, the selected namespaces and pods, EgressIPs already on the primary
network, and the EgressIP plan. Pure: each takes the PreflightContext and returns findings.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json


from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.plan import address_plan as _address_plan
from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network_model
from ansible_collections.ocp.egressip.plugins.module_utils.checks import egressip_validation as _egressip_validation
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as _node_network
from ansible_collections.ocp.egressip.plugins.module_utils.checks import variables_schema as _variables_schema
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as _vsphere_network
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, name as _name
from ansible_collections.ocp.egressip.plugins.module_utils.plan import nic_addresses as na
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_context as pc


# --- secondary subnet, address plan, route metric --------------------------------------------

def cluster_internal_networks(snapshot):
    """[(subnet, owner)] of the cluster, service and OVN-Kubernetes internal networks."""
    networks = []
    network = snapshot.get('network_config') or {}
    for source in ('status', 'spec'):
        entries = [(entry.get('cidr'), 'cluster network') for entry in _dig(network, source, 'clusterNetwork') or []]
        entries += [(text, 'service network') for text in _dig(network, source, 'serviceNetwork') or []]
        if entries:
            networks.extend(entries)
            break
    ovn = _dig(snapshot.get('network_operator'), 'spec', 'defaultNetwork', 'ovnKubernetesConfig') or {}
    for default, path, owner in pc.OVN_INTERNAL_SUBNETS:
        override = _dig(ovn, *path)
        networks.append((override, owner + ' (as configured)') if override else (default, owner + ' (default)'))
    return [(subnet, owner) for subnet, owner in ((pc.network_of(text), owner) for text, owner in networks) if subnet is not None]


def _cluster_families(snapshot):
    """{IP version: [cluster network texts]} of the Network config (status, else spec); {} when it was not read."""
    network = snapshot.get('network_config') or {}
    for source in ('status', 'spec'):
        cidrs = [pc.network_of(entry.get('cidr')) for entry in _dig(network, source, 'clusterNetwork') or []]
        if any(cidrs):
            families = {}
            for cidr in cidrs:
                if cidr is not None:
                    families.setdefault(cidr.version, []).append(str(cidr))
            return families
    return {}


def _family_not_in_cluster(ctx, family, families):
    ips = [ip for entry in ctx.objects for ip in entry.get('egress_ips') or []
           if pc.address_of(ip) is not None and pc.address_of(ip).version == family.version]
    other = sorted(families)[0]
    requested = ' (%s requested)' % pc.names_text(ips, 5) if ips else ''
    return catalogue_finding(
        'secondary_family_not_in_cluster',
        '%scidr %s is IPv%d but the cluster runs IPv%d only (clusterNetwork %s): pods have no IPv%d address, so no traffic '
        'would ever leave through an IPv%d egress IP%s.'
        % (family.field, family.cidr, family.version, other, ', '.join(families[other]), family.version, family.version, requested),
        objects=[{'kind': 'option', 'name': family.field + 'cidr'}], severity=ERROR if ips else WARNING)


def check_cluster_network_overlap(ctx):
    """Each family of the secondary network against the cluster: outside its cluster, service and OVN-K internal
    networks, and a family the cluster runs (Network config clusterNetwork)."""
    findings = []
    families = _cluster_families(ctx.snapshot)
    internal = cluster_internal_networks(ctx.snapshot)
    for family in _families_or_cidrs(ctx):
        if families and family.version not in families and ctx.network is not None:
            findings.append(_family_not_in_cluster(ctx, family, families))
        findings += [catalogue_finding(
            'secondary_cidr_overlaps_cluster_network',
            '%scidr %s overlaps the %s %s: traffic to the secondary subnet would be routed inside the cluster.'
            % (family.field, family.cidr, owner, subnet), objects=[{'kind': 'option', 'name': family.field + 'cidr'}])
            for subnet, owner in internal if pc.overlaps(subnet, family.cidr)]
    return findings


def _families_or_cidrs(ctx):
    """The families of the parsed network or, when another rule refused it (a link-local cidr), each cidr that parses,
    so an overlap is still reported beside that refusal."""
    if ctx.network is not None:
        return ctx.network.families
    parts = [('egressip_network.', ctx.network_config), ('egressip_network.ipv6.', ctx.network_config.get('ipv6') or {})]
    return [_network_model.Family(cidr, None, None, field) for field, cidr in
            ((field, _network_model.parse_cidr(field + 'cidr', part.get('cidr'))[0]) for field, part in parts if part.get('cidr'))
            if cidr is not None]


def _primary_and_host_subnets(ctx):
    """(primary, host) lists of (subnet text, owner) for the address plan's overlap check."""
    primary = [(subnet, 'primary address of node %s' % pc.names_text(nodes, 3)) for subnet, nodes in sorted(ctx.primary_networks().items())]
    vsphere_spec = _dig(ctx.kind('infrastructure'), 'spec', 'platformSpec', 'vsphere') or {}
    primary += [(text, 'Infrastructure machineNetworks') for text in vsphere_spec.get('machineNetworks') or [] if pc.network_of(text)]
    host = [(subnet, 'host-cidrs of node %s' % name) for name in sorted(ctx.networks) for subnet in ctx.networks[name][1]]
    return primary, host


def check_address_plan(ctx):
    """The address plan's own validation (`plan/address_plan.py`): cidr, gateway, range (both families of a dual-stack
    network), host subnet overlaps; in plan mode also the node step's allocation for the selected nodes."""
    if not ctx.network_config.get('cidr'):
        return []
    networks = ctx.network.families if ctx.network is not None else []
    findings = list(ctx.network_findings)
    primary, host = _primary_and_host_subnets(ctx)
    for network in networks:
        findings += _address_plan.check_host_subnets(network, primary, host)
    if findings or ctx.mode != pc.PLAN or not ctx.selected_nodes:
        return findings
    return findings + _node_address_plan(ctx, networks)


# found by other checks of preflight from the same rules (route_metric_findings, check_host_subnets)
_NODE_PLAN_OWN_CHECKS = ('node_route_metric_too_low', 'node_network_overlaps_host_subnet')


def _node_address_plan(ctx, networks):
    """The refusals of the node address step (`na.plan_nic_addresses`) for the nodes enable will address:
    range too small, address in use, allocation fixed, policy not owned. The MACs are not known before the NICs exist."""
    snapshot = {'nodes': ctx.nodes, 'nncps': ctx.kind('nncps') or [], 'nnces': [], 'nns': ctx.kind('nns') or [],
                'egressips': ctx.kind('egressips') or []}
    entries = [{'node': _name(node), 'mac': None, 'address': None, 'ipv6_address': None} for node in ctx.selected_nodes]
    plan = na.plan_nic_addresses(entries, networks, ctx.network.route_metrics(), 'egressip0', snapshot)
    return [item for item in plan['findings'] if item['severity'] == ERROR and item['id'] not in _NODE_PLAN_OWN_CHECKS]


def check_variables(ctx):
    """The variables file against the public schema (`variables_schema.py`): unknown keys, types, bounds.
    config['variables'] holds the egressip_* variables as the role passes them; absent for module options."""
    if ctx.config.get('variables') is None:
        return []
    normalized, findings = _variables_schema.check(ctx.config['variables'])
    portgroup = (normalized.get('egressip_vsphere') or {}).get('portgroup')
    if findings or not portgroup:
        return findings
    # the vSphere network step's own option rules (vsphere_portgroup), for the keys only that step reads
    options = dict((key, portgroup.get(key)) for key in ('vlan_id', 'port_binding', 'num_ports', 'elastic'))
    return [catalogue_finding('variables_invalid', 'egressip_vsphere.portgroup.%s' % problem,
                              objects=[{'kind': 'option', 'name': 'egressip_vsphere.portgroup'}])
            for problem in _vsphere_network.validate_portgroup_options(portgroup.get('switch_type') or 'standard', options)]


def check_bounds(ctx):
    """Bounds and formats of the public schema (`variables_schema.py`) for values given as module options."""
    values = (('egressip_network.route_metric', ctx.network_config.get('route_metric')),
              ('egressip_vsphere.portgroup.name', ctx.portgroup_config.get('name')),
              ('egressip_vsphere.portgroup.vlan_id', ctx.portgroup_config.get('vlan_id')))
    return [item for path, value in values if value is not None for item in _variables_schema.field_findings(path, value)]


def check_route_metric(ctx):
    """The gateway route via the secondary NIC must have a higher metric than the primary default route."""
    metric = ctx.network_config.get('route_metric')
    if metric is None or not ctx.requested():
        return []
    try:
        metric = int(metric)
    except (TypeError, ValueError):
        return []
    if not 0 <= metric <= _variables_schema.ROUTE_METRIC_MAX:
        return []  # check_bounds
    versions = [family.version for family in ctx.network.families] if ctx.network is not None else [4]
    metrics = ctx.network.route_metrics() if ctx.network is not None else metric
    selected = set(_name(node) for node in ctx.selected_nodes)
    nns_by_node = dict((_name(nns), nns) for nns in ctx.kind('nns') or [] if _name(nns) in selected)
    if nns_by_node:
        return _node_network.route_metric_findings(nns_by_node, metrics, {}, versions)
    if metric > pc.PRIMARY_DEFAULT_ROUTE_METRIC:
        return []
    return [catalogue_finding(
        'node_route_metric_too_low',
        'egressip_network.route_metric %d is not above the metric %d that configure-ovs gives the primary default route via '
        'br-ex: the secondary gateway would take over the default route, which OVN-Kubernetes does not support.'
        % (metric, pc.PRIMARY_DEFAULT_ROUTE_METRIC), objects=[{'kind': 'option', 'name': 'egressip_network.route_metric'}])]


def check_reachability(ctx):
    if not ctx.requested() or ctx.kind('network_operator') is None:
        return []
    config = _dig(ctx.kind('network_operator'), 'spec', 'defaultNetwork', 'ovnKubernetesConfig', 'egressIPConfig') or {}
    if config.get('reachabilityTotalTimeoutSeconds') != 0:
        return []
    return [catalogue_finding(
        'egress_reachability_check_disabled',
        'egressIPConfig.reachabilityTotalTimeoutSeconds is 0: OVN-Kubernetes does not probe egress nodes, so an unreachable '
        'node keeps its egress IPs until its Ready condition turns false.',
        objects=[{'kind': 'Network', 'apiVersion': 'operator.openshift.io/v1', 'name': 'cluster'}])]


# --- egress nodes and capacity ---------------------------------------------------------------

def check_node_selector(ctx):
    """The egress node selector is well formed (the shared LabelSelector rules) and not empty when egress is requested."""
    problems = _variables_schema.node_selector_problems('egressip_nodes.selector', ctx.selector if ctx.selector is not None else {})
    if problems or not ctx.requested() or ctx.selector:
        return problems
    return [catalogue_finding(
        'egress_nodes_selector_empty',
        'egressip_nodes.selector is %s: it would select every node of the cluster, control plane included, and give each a '
        'secondary NIC, an address and the %s label.' % ('empty ({})' if ctx.selector == {} else 'missing', EGRESS_ASSIGNABLE_LABEL),
        objects=[{'kind': 'option', 'name': 'egressip_nodes.selector'}])]


def check_egress_nodes(ctx):
    if not ctx.requested() or ctx.kind('nodes') is None or ctx.selected_nodes or not ctx.selector_ok or not ctx.selector:
        return []
    selector = (ctx.config.get('nodes') or {}).get('selector') or {}
    return [catalogue_finding(
        'egress_nodes_none_selected',
        'egressip_nodes.selector %s matches none of the %d nodes.' % (json.dumps(selector, sort_keys=True), len(ctx.nodes)),
        objects=[{'kind': 'option', 'name': 'egressip_nodes.selector'}])]


def check_capacity(ctx):
    if not ctx.objects or ctx.kind('nodes') is None or (ctx.mode == pc.PLAN and not (ctx.selector_ok and ctx.selector)):
        return []  # plan mode counts the selected nodes: a selector finding comes first
    capable = ctx.capable_nodes()
    if ctx.mode == pc.AUDIT:
        how = 'capable node(s) (labelled %s, Ready, holding %s in host-cidrs)' % (EGRESS_ASSIGNABLE_LABEL, ctx.cidr)
    else:
        how = 'Ready node(s) selected by egressip_nodes.selector%s' % (' with a VM' if ctx.vsphere_cluster_read() else '')
    findings = []
    for egress_object in ctx.objects:
        count = len(egress_object.get('egress_ips') or [])
        if count == 0 or len(capable) >= count + 1:
            continue
        if len(capable) < count:
            consequence = '%d of its IPs cannot be assigned at all' % (count - len(capable))
        else:
            consequence = 'one node failure leaves an IP unassigned (a node never hosts two IPs of one EgressIP)'
        single = ' This is a single-node cluster: there is no second node to fail over to.' if len(ctx.nodes) == 1 else ''
        findings.append(catalogue_finding(
            'egress_nodes_capacity_insufficient',
            'EgressIP %s has %d IP(s) but there are only %d %s: %s; at least %d are needed.%s'
            % (egress_object.get('name'), count, len(capable), how, consequence, count + 1, single),
            objects=[{'kind': 'EgressIP', 'name': egress_object.get('name')}] + [pc.node_ref(node) for node in capable][:20]))
    return findings


# --- selected namespaces and pods ------------------------------------------------------------

def check_udn_namespaces(ctx):
    findings = []
    for egress_object in ctx.objects:
        udn = [_name(namespace) for namespace in ctx.selected_namespaces(egress_object) if pc.PRIMARY_UDN_LABEL in _labels(namespace)]
        if udn:
            findings.append(catalogue_finding(
                'namespace_primary_udn',
                'EgressIP %s selects namespace(s) %s, which use a user-defined primary network (label %s): the secondary-interface '
                'egress path this collection configures serves pods on the default cluster network.'
                % (egress_object.get('name'), pc.names_text(udn), pc.PRIMARY_UDN_LABEL),
                objects=[{'kind': 'Namespace', 'name': name} for name in udn[:20]]))
    return findings


def check_host_network_pods(ctx):
    pods = ctx.kind('pods')
    if not pods:
        return []
    findings = []
    for egress_object in ctx.objects:
        namespaces = set(_name(namespace) for namespace in ctx.selected_namespaces(egress_object))
        pod_selector = egress_object.get('pod_selector')
        selected = sorted((_dig(pod, 'metadata', 'namespace'), _name(pod)) for pod in pods
                          if _dig(pod, 'metadata', 'namespace') in namespaces and _dig(pod, 'spec', 'hostNetwork')
                          and (pod_selector is None or selector_matches(pod_selector, _labels(pod))))
        if selected:
            findings.append(catalogue_finding(
                'host_network_pods_selected',
                'EgressIP %s selects host-networked pod(s) %s: their traffic leaves with the node address, never with an egress IP.'
                % (egress_object.get('name'), pc.names_text('%s/%s' % item for item in selected)),
                objects=[{'kind': 'Pod', 'namespace': namespace, 'name': name} for namespace, name in selected[:20]]))
    return findings


# --- EgressIPs already on the primary network -------------------------------------------------

def primary_egressips(snapshot):
    """Every egress IP of the cluster's EgressIP objects that lies on the primary network (DOMAIN.md section 3).

    [{'name', 'egress_ip', 'node' (assigned node or None), 'subnet'}] sorted by object and IP:
    the record later runs compare with, to prove these were not changed.
    """
    nodes = [_egress_network.node_networks_from_node(node) for node in snapshot.get('nodes') or []]
    records = []
    for egressip in snapshot.get('egressips') or []:
        assigned = dict((str(pc.address_of(item.get('egressIP'))), item.get('node')) for item in _dig(egressip, 'status', 'items') or [])
        for ip in _dig(egressip, 'spec', 'egressIPs') or []:
            address = pc.address_of(ip)
            if address is None:
                continue
            where = _egress_network.classify_ip_on_nodes(address, nodes)
            if where.network == _egress_network.PRIMARY:
                records.append({'name': _name(egressip), 'egress_ip': str(address), 'node': assigned.get(str(address)),
                                'subnet': str(where.subnet)})
    return sorted(records, key=lambda record: (record['name'], record['egress_ip']))


def check_primary_egressips(ctx):
    records = primary_egressips(ctx.snapshot)
    if not records:
        return []
    findings = [catalogue_finding(
        'primary_egressips_present',
        '%d egress IP(s) on the primary network exist and are recorded: %s. This collection does not change them.'
        % (len(records), pc.names_text('%s %s on %s' % (record['name'], record['egress_ip'], record['node'] or 'no node')
                                       for record in records)),
        objects=[{'kind': 'EgressIP', 'name': name} for name in sorted(set(record['name'] for record in records))])]
    if ctx.mode != pc.PLAN:
        return findings
    newly = [node for node in ctx.selected_nodes if EGRESS_ASSIGNABLE_LABEL not in _labels(node)]
    affected = []
    for record in records:
        candidates = [_name(node) for node in newly if record['subnet'] in ctx.networks[_name(node)][0]]
        if candidates:
            affected.append((record, candidates))
    if affected:
        lines = ['%s %s (%s; candidates: %s)' % (record['name'], record['egress_ip'],
                                                 'unassigned now, may be placed on a new node at once' if record['node'] is None
                                                 else 'on %s now, may move to a new node after a failover' % record['node'],
                                                 pc.names_text(candidates, 5))
                 for record, candidates in affected]
        findings.append(catalogue_finding(
            'primary_egressips_affected_by_labels',
            'The %s label is shared by primary and secondary egress IPs: labelling %d new node(s) also makes them candidates '
            'for primary-network egress IPs: %s.' % (EGRESS_ASSIGNABLE_LABEL, len(newly), '; '.join(lines)),
            objects=[{'kind': 'EgressIP', 'name': name} for name in sorted(set(record['name'] for record, _nodes in affected))],
            severity=WARNING if any(record['node'] is None for record, _nodes in affected) else INFO))
    return findings


# --- EgressIP plan validation (owned by the EgressIP step) -------------------------------------

def check_egressip_plan(ctx):
    """The EgressIP step's own validation (`egressip_validation.py`): shape, each IP inside the cidr and
    not reserved, not in the node address range, not a node address, not claimed by another object, no
    duplicates. Capacity is checked here instead (plan mode counts the nodes about to be labelled)."""
    if not ctx.objects:
        return []
    return _egressip_validation.validate_config(ctx.config, ctx.nodes, ctx.kind('egressips') or [], check_capacity_rule=False,
                                                network=ctx.network)
