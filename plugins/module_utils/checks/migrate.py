# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Migrate: describe an egress setup made by hand as the collection's variables file (pure, no I/O).

Input: one snapshot as preflight reads it (`_preflight_snapshot.read_cluster` plus `read_vcenter`)
and optional hints (what the user already knows). Output: the public variables (docs/variables.md)
that make `enable` describe exactly what exists, the role variables adoption needs, a table per
node and per EgressIP object, and findings (this module's and preflight's, in plan mode over the
discovered variables: the findings enable will meet).

How each value is found (DOMAIN.md sections 2-8):
- secondary subnet: the nodes' `k8s.ovn.org/host-cidrs` minus the primary network; the one holding the
  EgressIP objects' addresses (or the only one);
- each node's NIC: the NodeNetworkState interface holding the base address gives the MAC, the MAC gives
  the VM NIC (never names); its backing gives the port group, standard or distributed, and its VLAN;
- gateway and metric: the default route through that interface (NodeNetworkState, else the NMState policy);
- node address range: the smallest range holding every base address (extended, where nodes still need an
  address, over addresses nobody in the cluster holds), refused when it would hold an egress IP or the gateway;
- egress nodes: a label that selects exactly the nodes with a NIC or an address, else their hostnames;
- forwarding: `ipForwarding: Global`, else the Tuned profile the Node Tuning Operator gives each egress node;
- EgressIP objects: those whose every IP is in the subnet, copied exactly (spec order kept); objects of the
  SDN to OVN-Kubernetes migration (`egressip-<namespace>` selecting `kubernetes.io/metadata.name: <namespace>`,
  as the openshift/release migration checks expect) are named as such.
Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json
import re

try:
    import netaddr
except ImportError:  # the module reports it through _address_plan.NETADDR_IMPORT_ERROR
    netaddr = None

from ansible_collections.ocp.egressip.plugins.module_utils.model import lifecycle as _lifecycle
from ansible_collections.ocp.egressip.plugins.module_utils.plan import machine_api as _machine_api
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import (
    classify_ip_on_nodes,
    is_global_unicast,
    node_networks_from_node,
    parse_ip,
    PRIMARY,
)
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING, summarize
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_context import PLAN
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight import run_checks
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import normalize_uuid, vm_uuid_from_provider_id
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, meta as _meta, name as _name, node_ready
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import host_cidr_holds
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egress_labels as el
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.plan import hand_made as hm
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips

HINT_KEYS = ('datacenter', 'cluster', 'portgroup', 'cidr', 'gateway', 'node_address_range')
DEFAULT_ROUTE_METRIC = 200
DEFAULT_INTERFACE_NAME = 'egressip0'
PROFILE_NAME_MAX = 15
NIC_ADAPTER = 'vmxnet3'
NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name'
SDN_CONVERTED_PREFIX = 'egressip-'
# Labels that say nothing about a node's role: never used as the egress node selector.
GENERIC_LABELS = (nn.HOSTNAME_LABEL, nn.EGRESS_ASSIGNABLE_LABEL, 'kubernetes.io/os', 'kubernetes.io/arch', 'beta.kubernetes.io/os',
                  'beta.kubernetes.io/arch', 'node.openshift.io/os_id', 'node.kubernetes.io/instance-type',
                  'beta.kubernetes.io/instance-type', 'topology.kubernetes.io/region', 'topology.kubernetes.io/zone',
                  'failure-domain.beta.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/zone')
ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/'
TUNED_NAMESPACE = nn.TUNED_NAMESPACE
STOCK_PARENTS = ('openshift-node', 'openshift-control-plane')
FORWARDING_KEY = re.compile(r'^net\.ipv[46]\.conf\.(?P<interface>[^.]+(?:/[^.]+)?)\.forwarding$')
MAX_LISTED = 20


# --- small readers -----------------------------------------------------------------------------

def _names(items, limit=MAX_LISTED):
    items = sorted(set(items))
    text = ', '.join(items[:limit])
    if len(items) > limit:
        text += ', ... (and %d more)' % (len(items) - limit)
    return text or 'none'


def _most_common(values):
    """The most frequent value (ties: the smallest), or None."""
    counts = collections.Counter(value for value in values if value is not None)
    if not counts:
        return None
    best = max(counts.values())
    return sorted((value for value, count in counts.items() if count == best), key=str)[0]


# --- vCenter target ------------------------------------------------------------------------------

def vsphere_target(infrastructure, hints):
    """(datacenter, cluster, findings): the hints, else the Infrastructure's one failure domain topology."""
    datacenter, cluster = hints.get('datacenter'), hints.get('cluster')
    if datacenter and cluster:
        return datacenter, cluster, []
    pairs = set()
    for domain in _dig(infrastructure, 'spec', 'platformSpec', 'vsphere', 'failureDomains') or []:
        topology = domain.get('topology') or {}
        compute = (topology.get('computeCluster') or '').rstrip('/')
        if topology.get('datacenter') and compute:
            pairs.add((topology['datacenter'], compute.split('/')[-1]))
    if datacenter:
        pairs = set(pair for pair in pairs if pair[0] == datacenter)
    if cluster:
        pairs = set(pair for pair in pairs if pair[1] == cluster)
    if len(pairs) == 1:
        found = pairs.pop()
        return datacenter or found[0], cluster or found[1], []
    why = ('names no failure domain' if not pairs else 'has %d failure domains (%s)' % (
        len(pairs), ', '.join('%s/%s' % pair for pair in sorted(pairs))))
    return None, None, [catalogue_finding(
        'migrate_vsphere_target_unknown', 'Infrastructure cluster %s, so the vCenter datacenter and vSphere cluster of the nodes are '
        'unknown; the port group, NICs and VLAN cannot be discovered.' % why, objects=[{'kind': 'Infrastructure', 'name': 'cluster'}])]


def primary_network_names(infrastructure):
    names = set()
    for domain in _dig(infrastructure, 'spec', 'platformSpec', 'vsphere', 'failureDomains') or []:
        names.update((domain.get('topology') or {}).get('networks') or [])
    return names


# --- nodes and their secondary addresses ----------------------------------------------------------

def secondary_addresses(node):
    """host-cidrs entries (IPNetwork, host address kept) outside the primary subnets, global unicast only."""
    networks = node_networks_from_node(node)
    primary = [cidr.cidr for cidr in networks.primary_ifaddrs]
    return [cidr for cidr in networks.host_cidrs
            if is_global_unicast(cidr.ip) and not any(cidr.version == net.version and cidr.ip in net for net in primary)]


def spec_ips(egressip):
    return [str(ip) for ip in _dig(egressip, 'spec', 'egressIPs') or []]


def choose_cidr(nodes, egressips, hint):
    """(cidr text, findings): the hint, else the secondary subnet of the egress IPs, else the only one."""
    if hint:
        return str(hint), []
    subnets = {}
    for node in nodes:
        for cidr in secondary_addresses(node):
            if cidr.prefixlen < (32 if cidr.version == 4 else 128):
                subnets.setdefault(str(cidr.cidr), set()).add(_name(node))
    addresses = [parse_ip(ip) for egressip in egressips for ip in spec_ips(egressip)]
    addresses = [address for address in addresses if address is not None]
    holding = sorted(subnet for subnet in subnets if any(address in netaddr.IPNetwork(subnet) for address in addresses))
    if len(holding) == 1:
        return holding[0], []
    if not holding and len(subnets) == 1:
        return list(subnets)[0], []
    if not subnets:
        return None, [catalogue_finding(
            'migrate_no_secondary_network', 'No node has an address outside its primary network in k8s.ovn.org/host-cidrs (%d node(s) read).'
            % len(nodes), objects=[{'kind': 'Node', 'name': _name(node)} for node in nodes[:MAX_LISTED]])]
    candidates = holding or sorted(subnets)
    return None, [catalogue_finding(
        'migrate_network_ambiguous', 'Secondary subnets %s: %s.' % (
            'holding egress IPs' if holding else 'on the nodes',
            '; '.join('%s (nodes %s)' % (subnet, _names(subnets[subnet], 5)) for subnet in candidates)),
        objects=[{'kind': 'option', 'name': 'migrate_hints.cidr'}])]


def base_address(node, cidr):
    """The node's base address in `cidr` ('ip/prefix', same prefix length), or None; several: the lowest."""
    held = sorted((entry for entry in secondary_addresses(node) if host_cidr_holds(entry, cidr)), key=lambda entry: int(entry.ip))
    return str(held[0]) if held else None


def interface_holding(nns, address):
    """The NodeNetworkState ethernet interface that holds `address` ('ip/prefix'), or None."""
    for interface in nn.nns_interfaces(nns):
        if interface.get('type', 'ethernet') == 'ethernet' and address in nn.interface_addresses(interface):
            return interface
    return None


def _vm_index(vsphere):
    return dict((normalize_uuid(vm.get('uuid')), vm) for vm in (vsphere or {}).get('vms') or [] if vm.get('uuid'))


def _node_vm(node, vms):
    uuid = vm_uuid_from_provider_id(_dig(node, 'spec', 'providerID'))
    return vms.get(uuid) if uuid else None


def _nic_by_mac(vm, mac):
    wanted = nn.normalize_mac(mac)
    return next((nic for nic in (vm or {}).get('nics') or [] if nn.normalize_mac(nic.get('mac')) == wanted), None)


def _on_portgroup(nic, portgroup):
    """Whether a NIC is on the port group: its name, and for a distributed one the same switch."""
    if nic.get('network') != portgroup['name']:
        return False
    return not portgroup.get('switch_uuid') or nic.get('switch_uuid') == portgroup['switch_uuid']


# --- the port group ------------------------------------------------------------------------------

def _standard_portgroup(name, vsphere):
    hosts = (vsphere or {}).get('hosts') or []
    found = [(host['name'], entry) for host in hosts for entry in host.get('standard_portgroups') or [] if entry.get('name') == name]
    if not found:
        return None
    return {'name': name, 'switch_type': 'standard', 'switch': _most_common(entry.get('vswitch') for _host, entry in found),
            'vlan_id': _most_common(entry.get('vlan_id') for _host, entry in found),
            'switches': sorted(set(entry.get('vswitch') for _host, entry in found)),
            'vlans': sorted(set(entry.get('vlan_id') for _host, entry in found if entry.get('vlan_id') is not None)),
            'hosts_missing': sorted(set(host['name'] for host in hosts) - set(host for host, _entry in found)), 'switch_uuid': None}


def _distributed_portgroup(name, vsphere, switch_uuid=None):
    for switch in (vsphere or {}).get('distributed_switches') or []:
        if switch_uuid and switch.get('uuid') != switch_uuid:
            continue
        for entry in switch.get('portgroups') or []:
            if entry.get('name') == name and not entry.get('uplink'):
                return {'name': name, 'switch_type': 'distributed', 'switch': switch.get('name'), 'switch_uuid': switch.get('uuid'),
                        'vlan_id': entry.get('vlan_id') if entry.get('vlan_type') == 'vlan' else None,
                        'vlan_type': entry.get('vlan_type'), 'switches': [switch.get('name')], 'hosts_missing': []}
    return None


def describe_portgroup(name, nics, vsphere):
    """The port group as the variables file names it, from the NICs on it (backing decides standard or distributed)."""
    switch_uuid = _most_common(nic.get('switch_uuid') for nic in nics)
    if switch_uuid or any(nic.get('portgroup_key') for nic in nics):
        return _distributed_portgroup(name, vsphere, switch_uuid)
    return _standard_portgroup(name, vsphere) or _distributed_portgroup(name, vsphere)


def portgroup_findings(portgroup):
    findings = []
    if portgroup['switch_type'] == 'standard' and len(portgroup['switches']) > 1:
        findings.append(catalogue_finding(
            'migrate_portgroup_undetermined', 'Standard port group %s is on different vSwitches (%s) on different hosts; the variables '
            'file names one switch.' % (portgroup['name'], ', '.join(portgroup['switches'])),
            objects=[{'kind': 'option', 'name': 'migrate_hints.portgroup'}], remedy=(
                'Put the port group on the same vSwitch of every host, or give migrate_hints.portgroup as a full dict '
                '(name, switch_type, switch, vlan_id).')))
    if portgroup['switch_type'] == 'distributed' and portgroup.get('vlan_type') not in (None, 'vlan'):
        findings.append(catalogue_finding(
            'migrate_portgroup_undetermined', 'Distributed port group %s uses %s VLAN tagging; the variables file can only describe a '
            'single VLAN, so vlan_id is left out (the VLAN is then neither compared nor changed).' % (portgroup['name'], portgroup['vlan_type']),
            objects=[{'kind': 'DistributedVirtualPortgroup', 'name': portgroup['name']}], severity=WARNING,
            remedy='Nothing to do unless you want the collection to check the VLAN.'))
    return findings


# --- gateway, metric, node address range ----------------------------------------------------------

def default_routes(nns, interface, version=4):
    """(gateway, metric) of each default route through `interface` in the NodeNetworkState (configured, then running)."""
    destination = '0.0.0.0/0' if version == 4 else '::/0'
    routes = _dig(nns, 'status', 'currentState', 'routes') or {}
    found = []
    for route in (routes.get('config') or []) + (routes.get('running') or []):
        if route.get('destination') == destination and route.get('next-hop-interface') == interface and route.get('next-hop-address'):
            found.append((route['next-hop-address'], route.get('metric')))
    return found


def policy_default_routes(policy, names, version=4):
    destination = '0.0.0.0/0' if version == 4 else '::/0'
    return [(route['next-hop-address'], route.get('metric'))
            for route in _dig(policy, 'spec', 'desiredState', 'routes', 'config') or []
            if route.get('destination') == destination and route.get('next-hop-interface') in names and route.get('next-hop-address')]


def address_range(cidr, bases, blockers, used, need):
    """(first-last text, extended by, findings) holding every base address and `need` free addresses.

    bases: the base addresses (IPAddress). blockers: addresses the range must not hold (egress IPs, gateway).
    used: every address any node holds (host-cidrs); a new node gets the lowest free one.
    """
    network = netaddr.IPNetwork(cidr)
    blocked = set(int(address) for address in blockers) | set([network.first, network.last])
    first, last = min(int(address) for address in bases), max(int(address) for address in bases)
    inside = sorted(str(netaddr.IPAddress(value)) for value in blocked if first <= value <= last)
    if inside:
        return None, 0, [catalogue_finding(
            'migrate_address_range_conflict', 'The node base addresses %s..%s of %s enclose %s.' % (
                netaddr.IPAddress(first), netaddr.IPAddress(last), cidr, ', '.join(inside)),
            objects=[{'kind': 'option', 'name': 'migrate_hints.node_address_range'}])]
    taken = set(int(address) for address in used)
    missing = max(0, need - len([value for value in range(first, last + 1) if value not in taken]))
    extended = 0
    for step in (1, -1):
        value = (last if step == 1 else first) + step
        while missing and network.first < value < network.last and value not in blocked:
            if value not in taken:
                missing -= 1
                extended += 1
            if step == 1:
                last = value
            else:
                first = value
            value += step
    if missing:
        return None, 0, [catalogue_finding(
            'migrate_address_range_conflict', '%d node(s) need a base address but no free address next to the ones in use (%s..%s) '
            'fits before an egress IP, the gateway or the end of %s.' % (need, netaddr.IPAddress(first), netaddr.IPAddress(last), cidr),
            objects=[{'kind': 'option', 'name': 'migrate_hints.node_address_range'}])]
    return '%s-%s' % (netaddr.IPAddress(first), netaddr.IPAddress(last)), extended, []


# --- egress node selector ------------------------------------------------------------------------

def exact_selector(nodes, wanted):
    """(selector, by hostname?): a label selecting exactly `wanted` (node names), else their hostnames."""
    wanted = set(wanted)
    chosen = [node for node in nodes if _name(node) in wanted]
    if not chosen:
        return {}, False
    shared = set(_labels(chosen[0]).items())
    for node in chosen[1:]:
        shared &= set(_labels(node).items())
    candidates = []
    for key, value in shared:
        if key in GENERIC_LABELS:
            continue
        matching = set(_name(node) for node in nodes if _labels(node).get(key) == value)
        if matching == wanted:
            candidates.append((0 if key.startswith(ROLE_LABEL_PREFIX) else 1, key, value))
    if candidates:
        _rank, key, value = sorted(candidates)[0]
        return {key: value}, False
    hostnames = sorted(_labels(node).get(nn.HOSTNAME_LABEL) or _name(node) for node in chosen)
    return {'matchExpressions': [{'key': nn.HOSTNAME_LABEL, 'operator': 'In', 'values': hostnames}]}, True


# --- NMState policies ----------------------------------------------------------------------------

def policies_for(node, mac, interface_name, policies):
    """[(policy, profile name)] of the NMState policies that configure this NIC of this node (by MAC or kernel name)."""
    found = []
    for policy in policies:
        item = hm.policy_nic_interface(policy, _labels(node), mac, interface_name)
        if item is not None:
            found.append((policy, item.get('name')))
    return found


# --- IP forwarding (Node Tuning Operator) ----------------------------------------------------------

def _profile_sections(data):
    """{section: [(key, value)]} of a TuneD profile text (ini: [section], key=value)."""
    sections, current = {}, None
    for line in (data or '').splitlines():
        text = line.strip()
        if not text or text.startswith('#'):
            continue
        if text.startswith('[') and text.endswith(']'):
            current = text[1:-1].strip()
            sections.setdefault(current, [])
            continue
        key, sep, value = text.partition('=')
        if sep and current is not None:
            sections[current].append((key.strip(), value.strip()))
    return sections


def profile_effect(name, profiles, seen=None):
    """(sysctls, other settings?, includes) of a custom profile, its custom includes loaded first."""
    seen = set() if seen is None else seen
    if name in seen or name not in profiles:
        return {}, False, ([name] if name not in profiles else [])
    seen.add(name)
    sections = _profile_sections(profiles[name])
    sysctls, other, includes = {}, False, []
    for key, value in sections.get('main') or []:
        if key == 'include':
            for parent in [item.strip().lstrip('-') for item in value.split(',') if item.strip()]:
                parent_sysctls, parent_other, parent_includes = profile_effect(parent, profiles, seen)
                sysctls.update(parent_sysctls)
                other = other or parent_other
                includes += parent_includes
        elif key != 'summary':
            other = True
    for key, value in sections.get('sysctl') or []:
        sysctls[key] = value
        if not FORWARDING_KEY.match(key):
            other = True
    other = other or any(section not in ('main', 'sysctl') for section in sections)
    return sysctls, other, includes


def forwards(sysctls, interface):
    if not interface:
        return False
    keys = ('net.ipv4.conf.%s.forwarding' % fw.sysctl_interface(interface), 'net.ipv4.conf.all.forwarding', 'net.ipv4.ip_forward')
    return any(str(sysctls.get(key, '')).strip() == '1' for key in keys)


def _match_item(item, labels):
    if (item.get('type') or 'node') != 'node':
        return False  # pod labels are not read: such a rule is taken as not matching
    key = item.get('label')
    if key not in labels or ('value' in item and item.get('value') is not None and labels[key] != str(item['value'])):
        return False
    return _match_list(item.get('match'), labels) if item.get('match') else True


def _match_list(items, labels):
    return any(_match_item(item, labels) for item in items or [])


def effective_profile(node, tuneds):
    """(Tuned, profile name) the Node Tuning Operator gives the node: lowest priority number among matching rules.

    Rules with machineConfigLabels (MachineConfigPool selection) or pod matches are not evaluated.
    """
    rules = []
    for tuned in tuneds:
        if _meta(tuned).get('namespace') not in (None, TUNED_NAMESPACE):
            continue
        for index, rule in enumerate(_dig(tuned, 'spec', 'recommend') or []):
            if rule.get('machineConfigLabels'):
                continue
            rules.append((rule.get('priority', 0), _name(tuned) or '', index, tuned, rule))
    for _priority, _tuned_name, _index, tuned, rule in sorted(rules, key=lambda entry: entry[:3]):
        if not rule.get('match') or _match_list(rule.get('match'), _labels(node)):
            return tuned, rule.get('profile')
    return None, None


def forwarding_choice(snapshot, rows):
    """(ip_forwarding value, findings, {node: how forwarding is on now})."""
    mode = fw.cluster_ip_forwarding(snapshot.get('network_operator')) or 'Restricted'
    if mode == 'Global':
        return fw.GLOBAL, [], dict((row['node'], 'gatewayConfig.ipForwarding Global') for row in rows)
    tuneds = snapshot.get('tuneds') or []
    profiles = {}
    for tuned in tuneds:
        for profile in _dig(tuned, 'spec', 'profile') or []:
            profiles.setdefault(profile.get('name'), profile.get('data') or '')
    nodes = dict((_name(node), node) for node in snapshot.get('nodes') or [])
    state, by_hand, by_hand_other = {}, [], []
    for row in rows:
        tuned, profile = effective_profile(nodes[row['node']], tuneds)
        sysctls, other, includes = profile_effect(profile, profiles) if profile else ({}, False, [])
        other = other or any(parent not in STOCK_PARENTS + (profile,) for parent in includes)
        if not forwards(sysctls, row.get('interface')):
            state[row['node']] = 'off'
            continue
        where = '%s/%s' % (_name(tuned), profile)
        state[row['node']] = 'Tuned %s' % where
        if not nn.is_managed(tuned):
            (by_hand_other if other else by_hand).append((row['node'], where))
    findings = []
    if by_hand_other:
        findings.append(catalogue_finding(
            'migrate_forwarding_by_hand', 'IP forwarding on the secondary NIC of %s comes from Tuned profile(s) %s made by hand, which also '
            'tune other things. The collection\'s Tuned (priority 20, one profile per node) would replace them on these nodes and drop '
            'that tuning, so the variables file says ip_forwarding: external: the collection leaves forwarding to you.' % (
                _names(node for node, _where in by_hand_other), _names(where for _node, where in by_hand_other)),
            objects=[{'kind': 'Tuned', 'name': where.split('/')[0], 'namespace': TUNED_NAMESPACE} for where in
                     sorted(set(where for _node, where in by_hand_other))]))
        return 'external', findings, state
    if by_hand:
        findings.append(catalogue_finding(
            'migrate_forwarding_by_hand', 'IP forwarding on the secondary NIC of %s comes from Tuned profile(s) %s made by hand that only '
            'set forwarding. The collection\'s Tuned takes over for these nodes (ip_forwarding: per_interface, the same sysctl); remove '
            'the forwarding from your profile afterwards so one object decides.' % (
                _names(node for node, _where in by_hand), _names(where for _node, where in by_hand)),
            objects=[{'kind': 'Tuned', 'name': where.split('/')[0], 'namespace': TUNED_NAMESPACE} for where in
                     sorted(set(where for _node, where in by_hand))]))
    return fw.PER_INTERFACE, findings, state


# --- EgressIP objects ----------------------------------------------------------------------------

def sdn_converted_namespace(egressip):
    """The namespace an object of the SDN to OVN-Kubernetes migration was made for, or None."""
    name = _name(egressip) or ''
    selector = _dig(egressip, 'spec', 'namespaceSelector') or {}
    labels = selector.get('matchLabels') or {}
    if not name.startswith(SDN_CONVERTED_PREFIX) or selector.get('matchExpressions') or list(labels) != [NAMESPACE_NAME_LABEL]:
        return None
    namespace = labels[NAMESPACE_NAME_LABEL]
    return namespace if name == SDN_CONVERTED_PREFIX + str(namespace) else None


def egressip_entry(egressip):
    spec = egressip.get('spec') or {}
    entry = {'name': _name(egressip), 'egress_ips': spec_ips(egressip), 'namespace_selector': spec.get('namespaceSelector') or {}}
    if 'podSelector' in spec and spec['podSelector'] is not None:
        entry['pod_selector'] = spec['podSelector']
    return entry


def classify_objects(egressips, nodes, cidr):
    """(entries for the variables file, rows for the report, findings)."""
    network = netaddr.IPNetwork(cidr)
    networks = [node_networks_from_node(node) for node in nodes]
    entries, rows, findings = [], [], []
    for egressip in sorted(egressips, key=_name):
        name, ips = _name(egressip), spec_ips(egressip)
        kinds = []
        for ip in ips:
            address = parse_ip(ip)
            if address is not None and address.version == network.version and address in network:
                kinds.append('secondary')
            elif address is not None and classify_ip_on_nodes(address, networks).network == PRIMARY:
                kinds.append('primary')
            else:
                kinds.append('other')
        converted = sdn_converted_namespace(egressip)
        row = {'name': name, 'egress_ips': ips, 'owned': nn.is_managed(egressip), 'sdn_converted_namespace': converted,
               'network': kinds[0] if kinds and len(set(kinds)) == 1 else ('mixed' if kinds else 'none')}
        if converted:
            findings.append(catalogue_finding(
                'migrate_egressip_sdn_converted', 'EgressIP %s (%s) was created by the OpenShift SDN migration for namespace %s; it keeps '
                'its name.' % (name, ', '.join(ips), converted), objects=[{'kind': 'EgressIP', 'name': name}]))
        reason = None
        if row['network'] == 'secondary' and not (_dig(egressip, 'spec', 'namespaceSelector') or {}):
            reason = 'its namespaceSelector is empty, which selects every namespace; the EgressIP step refuses that'
        elif row['network'] in ('mixed', 'other'):
            reason = 'its IPs %s are not all in %s (%s)' % (', '.join(ips), cidr, ', '.join(kinds))
        elif row['network'] == 'none':
            reason = 'it has no egress IPs'
        if row['network'] == 'secondary' and reason is None:
            entries.append(egressip_entry(egressip))
            row['action'] = 'managed' if row['owned'] else 'adopt'
        elif row['network'] == 'primary':
            row['action'] = 'left alone (primary network)'
        else:
            row['action'] = 'left alone'
            findings.append(catalogue_finding('migrate_egressip_not_adoptable', 'EgressIP %s is left as it is: %s.' % (name, reason),
                                              objects=[{'kind': 'EgressIP', 'name': name}]))
        rows.append(row)
    return entries, rows, findings


# --- putting it together ---------------------------------------------------------------------------

class Discovery(object):
    """One discovery over one snapshot; `run()` returns the result dict."""

    def __init__(self, snapshot, hints=None, acknowledge_unsupported=False):
        self.snapshot = snapshot
        self.hints = dict((key, value) for key, value in (hints or {}).items() if key in HINT_KEYS and value not in (None, '', {}))
        self.acknowledge = bool(acknowledge_unsupported)
        self.nodes = sorted(snapshot.get('nodes') or [], key=_name)
        self.nodes_by_name = dict((_name(node), node) for node in self.nodes)
        self.states = dict((_name(item), item) for item in snapshot.get('nns') or [])
        self.egressips = snapshot.get('egressips') or []
        self.policies = snapshot.get('nncps') or []
        self.vms = _vm_index(snapshot.get('vsphere'))
        self.findings = []
        self.plan = []

    # each step adds to self.findings; a None return stops the discovery (an error finding says why)

    def node_rows(self, cidr):
        rows = []
        for node in self.nodes:
            address = base_address(node, cidr)
            if address is None:
                continue
            interface = interface_holding(self.states.get(_name(node)), address)
            vm = _node_vm(node, self.vms)
            mac = nn.normalize_mac(interface.get('mac-address')) if interface else None
            rows.append(self._row(node, vm, address, interface.get('name') if interface else None, mac, _nic_by_mac(vm, mac) if mac else None))
        return rows

    def _row(self, node, vm, address, interface, mac, nic):
        hosted = hosted_egress_ips(self.egressips).get(_name(node), [])
        return {'node': _name(node), 'hostname': _labels(node).get(nn.HOSTNAME_LABEL) or _name(node), 'ready': node_ready(node),
                'vm': (vm or {}).get('name'), 'host': (vm or {}).get('host'), 'power_state': (vm or {}).get('power_state'),
                'address': address, 'interface': interface, 'mac': mac,
                'network': (nic or {}).get('network'), 'switch_uuid': (nic or {}).get('switch_uuid'),
                'portgroup_key': (nic or {}).get('portgroup_key'), 'adapter': (nic or {}).get('adapter'),
                'connected': (nic or {}).get('connected'), 'start_connected': (nic or {}).get('start_connected'),
                'egress_assignable': nn.EGRESS_ASSIGNABLE_LABEL in _labels(node),
                'egress_ips': sorted('%s %s' % item for item in hosted)}

    def networks_with_node_nics(self):
        """Every network a node VM has a NIC on, with the nodes (the primary one included, marked)."""
        primary = primary_network_names(self.snapshot.get('infrastructure'))
        found = {}
        for node in self.nodes:
            for nic in (_node_vm(node, self.vms) or {}).get('nics') or []:
                found.setdefault(nic.get('network') or nic.get('opaque_network_id') or '?', set()).add(_name(node))
        return [{'network': name, 'primary': name in primary, 'nodes': sorted(nodes)} for name, nodes in sorted(found.items())]

    def portgroup(self, rows):
        hint = self.hints.get('portgroup')
        if isinstance(hint, dict) and hint.get('name'):
            return dict(hint, switches=[hint.get('switch')], hosts_missing=[], switch_uuid=None), []
        primary = primary_network_names(self.snapshot.get('infrastructure'))
        name = hint or _most_common(row['network'] for row in rows if row['network'] not in primary)
        names = sorted(set(row['network'] for row in rows if row['network'] and row['network'] not in primary))
        if not name or (not hint and len(names) > 1):
            what = ('the NICs holding the base addresses are on %s' % ', '.join(names) if names else
                    'no NIC holding a base address was found in vCenter (VMs read: %d)' % len(self.vms))
            return None, [catalogue_finding('migrate_portgroup_undetermined', 'Migrate cannot tell the egress port group: %s.' % what,
                                            objects=[{'kind': 'option', 'name': 'migrate_hints.portgroup'}])]
        nics = [row for row in rows if row['network'] == name]
        portgroup = describe_portgroup(name, nics, self.snapshot.get('vsphere'))
        if portgroup is None:
            return None, [catalogue_finding('migrate_portgroup_undetermined', 'Port group %s exists on no host and no distributed switch of '
                                            'the vSphere cluster read.' % name, objects=[{'kind': 'Network', 'name': name}])]
        return portgroup, portgroup_findings(portgroup)

    def add_nic_only_nodes(self, rows, portgroup):
        """Nodes whose VM has a NIC on the port group but no base address in the subnet."""
        known = set(row['node'] for row in rows)
        for node in self.nodes:
            vm = _node_vm(node, self.vms)
            if _name(node) in known or vm is None:
                continue
            nics = [nic for nic in vm.get('nics') or [] if _on_portgroup(nic, portgroup)]
            if nics:
                interface = nn.interface_by_mac(self.states.get(_name(node)), nics[0].get('mac'))
                rows.append(self._row(node, vm, None, (interface or {}).get('name'), nn.normalize_mac(nics[0].get('mac')), nics[0]))
        return sorted(rows, key=lambda row: row['node'])

    def nic_findings(self, rows, portgroup):
        findings = []
        incomplete, disconnected, bad = [], [], []
        for row in rows:
            vm = self.vms.get(vm_uuid_from_provider_id(_dig(self.nodes_by_name[row['node']], 'spec', 'providerID')) or '')
            on_pg = [nic for nic in (vm or {}).get('nics') or [] if _on_portgroup(nic, portgroup)]
            if row['address'] is None:
                incomplete.append('%s (NIC %s, no address)' % (row['node'], row['mac']))
            elif row['network'] != portgroup['name']:
                incomplete.append('%s (address %s on %s, not on port group %s)' % (
                    row['node'], row['address'], 'NIC %s' % row['mac'] if row['mac'] else 'an interface vCenter does not show', portgroup['name']))
            if len(on_pg) > 1:
                bad.append('%s has %d NICs on %s' % (row['node'], len(on_pg), portgroup['name']))
            if row['network'] == portgroup['name'] and row['adapter'] != NIC_ADAPTER:
                bad.append('%s has a %s NIC' % (row['node'], row['adapter']))
            if row['network'] == portgroup['name'] and row['power_state'] == 'poweredOn' and not (row['connected'] and row['start_connected']):
                disconnected.append('%s (%s)' % (row['node'], 'disconnected' if not row['connected'] else 'not connected at power-on'))
        if incomplete:
            findings.append(catalogue_finding('migrate_node_incomplete', 'Egress node(s) with a missing part: %s. Enable adds the NIC or '
                                              'the base address.' % '; '.join(incomplete),
                                              objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in incomplete]))
        if disconnected:
            findings.append(catalogue_finding('migrate_nic_disconnected', 'Secondary NIC of %s.' % '; '.join(disconnected),
                                              objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in disconnected]))
            self.plan.append('connects the secondary NIC of %s' % ', '.join(text.split(' ')[0] for text in disconnected))
        if bad:
            findings.append(catalogue_finding('migrate_nic_not_adoptable', '%s.' % '; '.join(bad),
                                              objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in bad]))
        if portgroup.get('hosts_missing'):
            self.plan.append('creates port group %s on host(s) %s' % (portgroup['name'], ', '.join(portgroup['hosts_missing'])))
        return findings

    def gateway(self, rows, cidr):
        routes = []
        for row in rows:
            if not row['interface']:
                continue
            found = default_routes(self.states.get(row['node']), row['interface'])
            if not found:
                for policy, profile in policies_for(self.nodes_by_name[row['node']], row['mac'], row['interface'], self.policies):
                    found += policy_default_routes(policy, (profile, row['interface']))
            routes += found
        network = netaddr.IPNetwork(cidr)
        routes = [(gateway, metric) for gateway, metric in routes if parse_ip(gateway) is not None and parse_ip(gateway) in network]
        gateway = self.hints.get('gateway') or _most_common(gateway for gateway, _metric in routes)
        if not gateway:
            return None, None, [catalogue_finding(
                'migrate_gateway_unknown', 'No default route through the secondary NIC of %s names a gateway in %s.' % (
                    _names(row['node'] for row in rows), cidr), objects=[{'kind': 'option', 'name': 'migrate_hints.gateway'}])]
        metric = _most_common(metric for found, metric in routes if found == str(gateway) and metric is not None)
        if metric is None:
            self.plan.append('adds a default route through %s with metric %d on the secondary NIC of every egress node' % (
                gateway, DEFAULT_ROUTE_METRIC))
        return str(gateway), int(metric) if metric is not None else DEFAULT_ROUTE_METRIC, []

    def node_address_range(self, rows, cidr, gateway, egress_ips):
        hint = self.hints.get('node_address_range')
        if hint:
            return str(hint), []
        bases = [netaddr.IPNetwork(row['address']).ip for row in rows if row['address']]
        if not bases:
            return None, [catalogue_finding('migrate_address_range_conflict', 'No egress node has a base address in %s to derive the '
                                            'range from.' % cidr, objects=[{'kind': 'option', 'name': 'migrate_hints.node_address_range'}])]
        used = [cidr_entry.ip for node in self.nodes for cidr_entry in node_networks_from_node(node).host_cidrs]
        blockers = [parse_ip(ip) for ip in egress_ips] + [parse_ip(gateway)]
        text, extended, findings = address_range(cidr, bases, [item for item in blockers if item is not None], used,
                                                 len([row for row in rows if not row['address']]))
        if extended:
            findings.append(catalogue_finding(
                'migrate_address_range_extended', 'node_address_range %s holds %d address(es) beyond the ones in use, for the egress '
                'node(s) without a base address.' % (text, extended), objects=[{'kind': 'option', 'name': 'egressip_network.node_address_range'}]))
        return text, findings

    def policy_findings(self, rows):
        """Hand-made NMState policies: duplicates after adoption, names taken, profile names; addresses from elsewhere."""
        findings, names, duplicates, outside = [], [], [], []
        for row in rows:
            node = self.nodes_by_name[row['node']]
            found = policies_for(node, row['mac'], row['interface'], self.policies) if row['mac'] else []
            row['policies'] = sorted(_name(policy) for policy, _profile in found)
            hand_made = [(policy, profile) for policy, profile in found if not nn.is_managed(policy)]
            taken = next((policy for policy in self.policies if _name(policy) == nn.policy_name(row['node'])), None)
            if taken is not None and not nn.is_managed(taken):
                findings.append(catalogue_finding(
                    'migrate_object_name_taken', 'NodeNetworkConfigurationPolicy %s exists without the label %s=%s; enable (node_nic_address) '
                    'refuses to change it.' % (_name(taken), nn.MANAGED_BY_LABEL, nn.MANAGED_BY_VALUE),
                    objects=[{'kind': 'NodeNetworkConfigurationPolicy', 'name': _name(taken)}]))
            # once enable replaced the hand-made policies, the collection's keeps the profile name: the file stays the same
            names += [profile for _policy, profile in (hand_made or found) if profile]
            if hand_made:
                duplicates.append('%s (%s)' % (row['node'], ', '.join(sorted(_name(policy) for policy, _profile in hand_made))))
            if row['address'] and not found:
                outside.append('%s (%s on %s)' % (row['node'], row['address'], row['interface'] or 'an unknown interface'))
            if not any(nn.is_managed(policy) for policy, _profile in found):
                self.plan.append('creates NMState policy %s for %s (%s)' % (
                    nn.policy_name(row['node']), row['node'], 'same address %s' % row['address'] if row['address'] else 'a new address'))
        if duplicates:
            findings.append(catalogue_finding(
                'migrate_policy_duplicate', 'Hand-made NMState policies configure the secondary NIC of %s. After adoption the collection\'s '
                'policy egressip-<node> describes the same NIC with the same address.' % '; '.join(duplicates),
                objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in duplicates]))
        if outside:
            findings.append(catalogue_finding(
                'migrate_address_not_from_nmstate', 'No NMState policy configures the base address of %s.' % '; '.join(outside),
                objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in outside]))
        overrides, reasons = {}, {}
        if duplicates:
            overrides['node_network_replace_hand_made'] = False
            reasons['node_network_replace_hand_made'] = (
                'hand-made NMState policies configure the secondary NIC of %s; set true once the adoption check passed and run '
                'enable: it deletes those that configure only that NIC (same address, routes through it) after the collection\'s '
                'policy is Available, and reports the others (deleting a policy never changes the node)'
                % _names(text.split(' ')[0] for text in duplicates))
        profile = _most_common(names)
        if len(set(names)) > 1:
            findings.append(catalogue_finding(
                'migrate_interface_names_differ', 'The hand-made policies name the NIC %s; the variables file keeps %s.' % (
                    ', '.join('%s (%d)' % (name, count) for name, count in sorted(collections.Counter(names).items())), profile),
                objects=[{'kind': 'option', 'name': 'node_network_interface_name'}]))
        if profile and profile != DEFAULT_INTERFACE_NAME and 0 < len(profile) <= PROFILE_NAME_MAX:
            overrides['node_network_interface_name'] = profile
            reasons['node_network_interface_name'] = ('the hand-made NMState policies name the NIC profile %s; the collection\'s policy '
                                                      'keeps that NetworkManager profile instead of adding another' % profile)
        return findings, overrides, reasons

    def label_findings(self, rows, cidr):
        findings, overrides, reasons = [], {}, {}
        chosen = set(row['node'] for row in rows)
        outside = sorted(_name(node) for node in self.nodes if nn.EGRESS_ASSIGNABLE_LABEL in _labels(node) and _name(node) not in chosen)
        if outside:
            overrides['egress_nodes_exclusive'] = False
            reasons['egress_nodes_exclusive'] = ('node(s) %s carry the egress-assignable label but are not egress nodes of the secondary '
                                                 'network (primary-network egress IPs may use them): enable keeps their label' % ', '.join(outside))
            findings.append(catalogue_finding('migrate_labelled_outside_selection', 'Node(s) %s carry %s without a secondary NIC or address.'
                                              % (_names(outside), nn.EGRESS_ASSIGNABLE_LABEL),
                                              objects=[{'kind': 'Node', 'name': name} for name in outside[:MAX_LISTED]]))
        add, remove, blocked, by_hand = [], [], [], []
        for row in rows:
            node = self.nodes_by_name[row['node']]
            reasons_now = el.node_capability([str(entry) for entry in node_networks_from_node(node).host_cidrs],
                                             self.states.get(row['node']), [cidr], row['mac'])
            row['capable'] = not reasons_now
            row['not_capable_because'] = reasons_now
            if row['egress_assignable'] and not reasons_now:
                by_hand.append((row['node'], el.label_recorded(node)))
            if row['egress_assignable'] and reasons_now and row['egress_ips']:
                blocked.append('%s (%s; hosts %s)' % (row['node'], '; '.join(reasons_now), ', '.join(row['egress_ips'])))
            elif row['egress_assignable'] and reasons_now:
                remove.append(row['node'])
            elif not row['egress_assignable'] and not reasons_now:
                add.append(row['node'])
        if blocked:
            findings.append(catalogue_finding('migrate_label_would_be_removed', 'Labelled egress node(s) that are not capable: %s.'
                                              % '; '.join(blocked), objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in blocked]))
        if by_hand:
            # without the hand-over enable keeps hand-set labels unmanaged (egress_label_set_by_hand) and disable leaves them
            overrides['egress_nodes_adopt'] = True
            # no node names here: enable labels more nodes, and the file must stay the same after the adoption
            reasons['egress_nodes_adopt'] = ('egress nodes carry the egress-assignable label: a label set by hand is handed over to the '
                                             'collection (the record %s is written beside it; the label stays, nothing moves), so later '
                                             'runs and disable manage it; kept true so the file stays the same after the adoption'
                                             % nn.LABEL_RECORD_ANNOTATION)
            unrecorded = [name for name, recorded in by_hand if not recorded]
            if unrecorded:
                self.plan.append('hands over the hand-made %s label of %s (record %s; the label stays)'
                                 % (nn.EGRESS_ASSIGNABLE_LABEL, ', '.join(unrecorded), nn.LABEL_RECORD_ANNOTATION))
        if add:
            self.plan.append('labels %s with %s' % (', '.join(add), nn.EGRESS_ASSIGNABLE_LABEL))
        if remove:
            self.plan.append('removes %s from %s (not capable, hosting no egress IP)' % (nn.EGRESS_ASSIGNABLE_LABEL, ', '.join(remove)))
        return findings, overrides, reasons

    def machineset_rows(self, rows, portgroup):
        nodes = [self.nodes_by_name[row['node']] for row in rows]
        machinesets = self.snapshot.get('machinesets') or []
        backing = _machine_api.node_machines(nodes, self.snapshot.get('machines') or [], machinesets)
        names = sorted(set(row['machineset'] for row in backing if row['machineset']))
        result = []
        for machineset in sorted(machinesets, key=_name):
            if _name(machineset) not in names:
                continue
            devices = _dig(machineset, *_machine_api.TEMPLATE_DEVICES_PATH) or []
            has = any(_machine_api.device_matches(device, portgroup['name']) for device in devices)
            result.append({'name': _name(machineset), 'devices': [device.get('networkName') for device in devices], 'has_portgroup': has})
        missing = [row['name'] for row in result if not row['has_portgroup']]
        if missing:
            self.plan.append('appends port group %s to the devices of MachineSet(s) %s' % (portgroup['name'], ', '.join(missing)))
        return result

    def forwarding(self, rows):
        choice, findings, state = forwarding_choice(self.snapshot, rows)
        for row in rows:
            row['forwarding'] = state.get(row['node'])
        if choice == fw.PER_INTERFACE:
            tuned = next((item for item in self.snapshot.get('tuneds') or []
                          if _name(item) == nn.TUNED_NAME and _meta(item).get('namespace') == TUNED_NAMESPACE), None)
            if tuned is not None and not nn.is_managed(tuned):
                findings.append(catalogue_finding(
                    'migrate_object_name_taken', 'Tuned %s/%s exists without the label %s=%s; enable (ip_forwarding) refuses to change it.'
                    % (TUNED_NAMESPACE, nn.TUNED_NAME, nn.MANAGED_BY_LABEL, nn.MANAGED_BY_VALUE),
                    objects=[{'kind': 'Tuned', 'name': nn.TUNED_NAME, 'namespace': TUNED_NAMESPACE}]))
            covered = fw.forwarded_interfaces(tuned) if nn.is_managed(tuned) else {}
            todo = [row['node'] for row in rows if row['interface'] not in covered.get(row['hostname'], set())]
            if todo:
                self.plan.append('sets IP forwarding on the secondary NIC of %s (Tuned %s)' % (', '.join(todo), nn.TUNED_NAME))
        return choice, findings

    def run(self):
        result = {'variables': None, 'overrides': {}, 'override_reasons': {}, 'nodes': [], 'egressips': [], 'portgroup': None,
                  'machinesets': [], 'adoption_plan': [], 'record': _lifecycle.record(self.snapshot),
                  'networks': self.networks_with_node_nics()}
        datacenter, cluster, findings = vsphere_target(self.snapshot.get('infrastructure'), self.hints)
        self.findings += findings
        cidr, findings = choose_cidr(self.nodes, self.egressips, self.hints.get('cidr'))
        self.findings += findings
        if cidr is None or datacenter is None:
            return self._finish(result)
        rows = self.node_rows(cidr)
        portgroup, findings = self.portgroup(rows)
        self.findings += findings
        if portgroup is None:
            return self._finish(result)
        rows = self.add_nic_only_nodes(rows, portgroup)
        self.findings += self.nic_findings(rows, portgroup)
        entries, object_rows, findings = classify_objects(self.egressips, self.nodes, cidr)
        self.findings += findings
        gateway, metric, findings = self.gateway(rows, cidr)
        self.findings += findings
        egress_ips = [ip for entry in entries for ip in entry['egress_ips']]
        address_range_text, findings = self.node_address_range(rows, cidr, gateway, egress_ips) if gateway else (None, [])
        self.findings += findings
        policy_findings, overrides, reasons = self.policy_findings(rows)
        label_findings, label_overrides, label_reasons = self.label_findings(rows, cidr)
        self.findings += policy_findings + label_findings
        overrides.update(label_overrides)
        reasons.update(label_reasons)
        choice, findings = self.forwarding(rows)
        self.findings += findings
        result['machinesets'] = self.machineset_rows(rows, portgroup)
        adopt = [row['name'] for row in object_rows if row.get('action') == 'adopt']
        if adopt:
            self.plan.append('adopts EgressIP object(s) %s (ownership label; spec unchanged)' % ', '.join(adopt))
        if entries:
            overrides['egressips_adopt'] = True
            reasons['egressips_adopt'] = ('EgressIP objects made by hand are taken over by name (the ownership label is added, the spec is '
                                          'the one they have); kept true so the file stays the same after the adoption')
        selector, by_hostname = exact_selector(self.nodes, [row['node'] for row in rows])
        if by_hostname:
            self.findings.append(catalogue_finding('migrate_selector_by_hostname', 'No label selects exactly %s.' % _names(
                row['node'] for row in rows), objects=[{'kind': 'option', 'name': 'egressip_nodes.selector'}]))
        vsphere_portgroup = dict((key, portgroup[key]) for key in ('name', 'switch_type', 'switch', 'vlan_id') if portgroup.get(key) is not None)
        network = {'cidr': cidr, 'ip_forwarding': choice}
        if gateway:
            network.update(gateway=gateway, route_metric=metric)
        if address_range_text:
            network['node_address_range'] = address_range_text
        result['variables'] = {
            'egressip_acknowledge_unsupported': self.acknowledge,
            'egressip_vsphere': {'datacenter': datacenter, 'cluster': cluster, 'portgroup': vsphere_portgroup},
            'egressip_network': network,
            'egressip_nodes': {'selector': selector},
            'egressip_objects': entries,
        }
        result.update(overrides=overrides, override_reasons=reasons, nodes=rows, egressips=object_rows,
                      portgroup=dict((key, value) for key, value in portgroup.items() if key != 'switch_uuid'))
        return self._finish(result, complete=bool(gateway and address_range_text))

    def _finish(self, result, complete=False):
        findings = list(self.findings)
        if complete:
            if self.plan:
                findings.append(catalogue_finding('migrate_adoption_plan', 'Enable with the discovered variables %s.' % '; '.join(self.plan),
                                                  objects=[{'kind': 'option', 'name': 'migrate_adopt'}]))
            findings += run_checks(dict(self.snapshot, config=preflight_config(result['variables'])), PLAN)
        result['adoption_plan'] = list(self.plan) if complete else []
        result['findings'] = dedupe(findings)
        summary = summarize(result['findings'])
        summary.update(ok=summary[ERROR] == 0, complete=complete, nodes=len(result['nodes']), egressip_objects=len(result['egressips']))
        result['summary'] = summary
        return result


def preflight_config(variables):
    """The discovered variables in the shape preflight's checks read (the public schema without the prefix)."""
    vsphere = dict(variables['egressip_vsphere'], accept_untested_nsx=False)
    return {'acknowledge_unsupported': variables['egressip_acknowledge_unsupported'], 'vsphere': vsphere,
            'network': variables['egressip_network'], 'nodes': variables['egressip_nodes'], 'objects': variables['egressip_objects']}


SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


def dedupe(findings):
    seen, result = set(), []
    for item in findings:
        if (item['id'], item['message']) not in seen:
            seen.add((item['id'], item['message']))
            result.append(item)
    return sorted(result, key=lambda item: SEVERITY_ORDER[item['severity']])


def discover(snapshot, hints=None, acknowledge_unsupported=False):
    """Everything migrate reports about one snapshot; see the module docstring."""
    return Discovery(snapshot, hints, acknowledge_unsupported).run()


# --- the report -----------------------------------------------------------------------------------

CHECK_KEYS = ('ok', 'moved', 'unassigned', 'removed', 'dropped_addresses', 'nodes_gone')
REPORT_KEYS = ('summary', 'variables', 'overrides', 'override_reasons', 'networks', 'nodes', 'egressips', 'portgroup', 'machinesets',
               'adoption_plan', 'findings')


def report_data(result):
    """What the migrate report files hold: the discovery and, after an adoption, its check (problems only).

    Deterministic, and without what only one run sees (new assignments, labels added), so a rerun that
    changes nothing writes the same bytes.
    """
    data = dict((key, result.get(key)) for key in REPORT_KEYS)
    data['kind'] = 'migrate'
    comparison = result.get('comparison')
    if comparison is not None:
        data['adoption_check'] = dict((key, comparison[key]) for key in CHECK_KEYS)
    return data


def _node_table(rows):
    return _report.table(
        ['Node', 'VM (host)', 'NIC (interface)', 'Port group', 'Connected', 'Base address', 'Policies', 'Forwarding', 'Label', 'Egress IPs'],
        [(row['node'], '%s (%s)' % (row.get('vm') or '-', row.get('host') or '-'), '%s (%s)' % (row.get('mac') or '-', row.get('interface') or '-'),
          row.get('network'), row.get('connected'), row.get('address'), row.get('policies'), row.get('forwarding'),
          row.get('egress_assignable'), row.get('egress_ips')) for row in rows])


def render_markdown(result):
    """The migrate report for people."""
    data = report_data(result)
    summary = data['summary'] or {}
    verdict = 'complete' if summary.get('complete') else 'INCOMPLETE (see the errors)'
    sections = [['Discovery %s: %d egress node(s), %d EgressIP object(s); %d error(s), %d warning(s), %d info.' % (
        verdict, summary.get('nodes', 0), summary.get('egressip_objects', 0), summary.get(ERROR, 0), summary.get(WARNING, 0),
        summary.get(INFO, 0))]]
    if data.get('adoption_check') is not None:
        check = data['adoption_check']
        lines = ['## Adoption check', '',
                 'No egress IP moved and no node address was dropped.' if check['ok'] else
                 'FAILED: %d moved, %d unassigned, %d removed egress IP(s); %d dropped address(es).' % (
                     len(check['moved']), len(check['unassigned']), len(check['removed']), len(check['dropped_addresses']))]
        sections.append(lines)
    variables = data.get('variables')
    if variables:
        network, portgroup = variables['egressip_network'], variables['egressip_vsphere']['portgroup']
        sections.append(['## Discovered settings', ''] + _report.table(['Setting', 'Value'], [
            ('vCenter', '%s / %s' % (variables['egressip_vsphere']['datacenter'], variables['egressip_vsphere']['cluster'])),
            ('Port group', '%s (%s %s, VLAN %s)' % (
                portgroup.get('name'), portgroup.get('switch_type'), portgroup.get('switch'), portgroup.get('vlan_id', 'not compared'))),
            ('Subnet', network.get('cidr')), ('Gateway (metric)', '%s (%s)' % (network.get('gateway'), network.get('route_metric'))),
            ('Node address range', network.get('node_address_range')), ('IP forwarding', network.get('ip_forwarding')),
            ('Egress node selector', json.dumps(variables['egressip_nodes']['selector'], sort_keys=True))]
            + [(key, '%s - %s' % (json.dumps(value), (data.get('override_reasons') or {}).get(key, '')))
               for key, value in sorted((data.get('overrides') or {}).items())]))
    if data.get('networks'):
        sections.append(['## Networks with node NICs', ''] + _report.table(
            ['Network', 'Primary', 'Nodes'], [(row['network'], row['primary'], row['nodes']) for row in data['networks']]))
    if data.get('nodes'):
        sections.append(['## Egress nodes', ''] + _node_table(data['nodes']))
    if data.get('egressips'):
        sections.append(['## EgressIP objects', ''] + _report.table(
            ['Object', 'Egress IPs', 'Network', 'Owned', 'SDN migration', 'Action'],
            [(row['name'], row['egress_ips'], row['network'], row['owned'], row.get('sdn_converted_namespace'), row['action'])
             for row in data['egressips']]))
    if data.get('machinesets'):
        sections.append(['## MachineSets', ''] + _report.table(
            ['MachineSet', 'Devices', 'Lists the port group'], [(row['name'], row['devices'], row['has_portgroup']) for row in data['machinesets']]))
    if data.get('adoption_plan'):
        sections.append(['## What enable changes', ''] + ['- %s' % item for item in data['adoption_plan']])
    sections.append(_report.findings_section(data.get('findings')))
    return _report.document('Migrate: EgressIP on the secondary network', sections)
