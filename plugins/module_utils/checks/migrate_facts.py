# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Migrate's readers: what one snapshot says about an egress setup made by hand, value by value (pure, no I/O).

The vCenter datacenter and cluster (Infrastructure failure domains), the secondary subnet and each node's base
address in it (host-cidrs), the NodeNetworkState interface holding it, the node's VM and the vNIC with that MAC, the
port group (standard or distributed) and its VLAN, the default routes (gateway and metric) and the node address range,
the egress node selector, the NMState policies that configure a NIC, and the EgressIP objects (which are adopted,
which are left alone, those of the SDN migration). checks/migrate.py's Discovery puts them together; upgrade reads
some of them too. IP forwarding is in migrate_forwarding.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL, HOSTNAME_LABEL, is_managed
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import (
    classify_ip_on_nodes,
    is_global_unicast,
    node_networks_from_node,
    parse_ip,
    PRIMARY,
)
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import normalize_uuid, vm_uuid_from_provider_id
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, name as _name
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import host_cidr_holds
from ansible_collections.ocp.egressip.plugins.module_utils.plan import hand_made as hm

NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name'
SDN_CONVERTED_PREFIX = 'egressip-'
# Labels that say nothing about a node's role: never used as the egress node selector.
GENERIC_LABELS = (HOSTNAME_LABEL, EGRESS_ASSIGNABLE_LABEL, 'kubernetes.io/os', 'kubernetes.io/arch', 'beta.kubernetes.io/os',
                  'beta.kubernetes.io/arch', 'node.openshift.io/os_id', 'node.kubernetes.io/instance-type',
                  'beta.kubernetes.io/instance-type', 'topology.kubernetes.io/region', 'topology.kubernetes.io/zone',
                  'failure-domain.beta.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/zone')
ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/'
MAX_LISTED = 20


# --- small readers -----------------------------------------------------------------------------

def names_text(items, limit=MAX_LISTED):
    """The names sorted, comma-separated, at most `limit` of them (then how many more); 'none' for none."""
    items = sorted(set(items))
    text = ', '.join(items[:limit])
    if len(items) > limit:
        text += ', ... (and %d more)' % (len(items) - limit)
    return text or 'none'


def most_common(values):
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


def hint_field(key, version, dual=True):
    """The migrate_hints key a finding about `key` of the IPv`version` family names (IPv6 of a dual-stack network: ipv6.<key>)."""
    return 'migrate_hints.%s%s' % ('ipv6.' if version == 6 and dual else '', key)


def is_subnet_entry(cidr):
    """Whether a host address ('ip/prefix' as IPNetwork) stands for a subnet: /32 and /128 addresses are not (OVN-K ignores them)."""
    return cidr.prefixlen < (32 if cidr.version == 4 else 128)


def secondary_subnets(nodes):
    """{version: {subnet text: set(node names)}} of the secondary subnets in the nodes' host-cidrs (no /32, /128, link-local)."""
    subnets = {4: {}, 6: {}}
    for node in nodes:
        for cidr in secondary_addresses(node):
            if is_subnet_entry(cidr):
                subnets[cidr.version].setdefault(str(cidr.cidr), set()).add(_name(node))
    return subnets


def hint_version(text):
    """The IP version of a hinted address, range or cidr ('a-b', 'ip/prefix', 'ip'), or None when it does not parse."""
    address = parse_ip(str(text or '').split('-', 1)[0].split('/', 1)[0]) if text else None
    return address.version if address is not None else None


def _egress_addresses(egressips):
    addresses = [parse_ip(ip) for egressip in egressips for ip in spec_ips(egressip)]
    return [address for address in addresses if address is not None]


def _holding(subnets, addresses):
    return sorted(subnet for subnet in subnets if any(address in netaddr.IPNetwork(subnet) for address in addresses))


def _ambiguous(subnets, candidates, holding, field):
    return catalogue_finding(
        'migrate_network_ambiguous', 'Secondary subnets %s: %s.' % (
            'holding egress IPs' if holding else 'on the nodes',
            '; '.join('%s (nodes %s)' % (subnet, names_text(subnets[subnet], 5)) for subnet in candidates)),
        objects=[{'kind': 'option', 'name': field}], remedy='Give %s (the secondary egress subnet of that family, for example %s).' % (
            field, 'fd00:20::/64' if field.endswith('ipv6.cidr') else '10.20.0.0/24'))


def choose_cidr(nodes, egressips, hint, version=None):
    """(cidr text, findings): the hint, else the secondary subnet holding the egress IPs, else the only one.

    version None: the family that carries egress IPs (IPv4 first), else IPv4 when the nodes have an IPv4 secondary subnet,
    else IPv6. Two subnets of the same family competing is migrate_network_ambiguous, naming the hint of that family.
    """
    if hint:
        return str(hint), []
    subnets, addresses = secondary_subnets(nodes), _egress_addresses(egressips)
    if version is None:
        holding = dict((family, _holding(subnets[family], addresses)) for family in (4, 6))
        version = next((family for family in (4, 6) if holding[family]), None) or (4 if subnets[4] or not subnets[6] else 6)
    subnets = subnets[version]
    holding = _holding(subnets, addresses)
    if len(holding) == 1:
        return holding[0], []
    if not holding and len(subnets) == 1:
        return list(subnets)[0], []
    if not subnets:
        return None, [catalogue_finding(
            'migrate_no_secondary_network', 'No node has an address outside its primary network in k8s.ovn.org/host-cidrs (%d node(s) read).'
            % len(nodes), objects=[{'kind': 'Node', 'name': _name(node)} for node in nodes[:MAX_LISTED]])]
    return None, [_ambiguous(subnets, holding or sorted(subnets), holding, hint_field('cidr', version))]


def companion_cidr(nodes, states, egressips, cidr, version):
    """(cidr text or None, findings): the IPv`version` subnet on the same NIC as `cidr`, the other family of a dual-stack network.

    Each node's NodeNetworkState interface holding its base address in `cidr` names the NIC; its addresses of the other family
    that are also in host-cidrs (what OVN-K places by; no /32, /128 or link-local) give the subnets. One subnet: it; several:
    the one holding egress IPs, else migrate_network_ambiguous naming the hint of that family. None: a single-family network.
    """
    subnets = {}
    for node in nodes:
        address = base_address(node, cidr)
        interface = interface_holding(states.get(_name(node)), address) if address else None
        if interface is None:
            continue
        held = set(nn.interface_addresses(interface))
        for entry in secondary_addresses(node):
            if entry.version == version and is_subnet_entry(entry) and str(entry) in held:
                subnets.setdefault(str(entry.cidr), set()).add(_name(node))
    holding = _holding(subnets, _egress_addresses(egressips))
    if len(subnets) <= 1:
        return (list(subnets)[0] if subnets else None), []
    if len(holding) == 1:
        return holding[0], []
    return None, [_ambiguous(subnets, holding or sorted(subnets), holding, hint_field('cidr', version))]


def choose_families(nodes, states, egressips, hints):
    """({version: cidr text}, findings): the secondary egress network, one subnet per family on the same NIC.

    Hints: `cidr` (IPv4, or given as IPv6 an IPv6-only network) and `ipv6.cidr` fix their family; the other family is the one
    the same NIC holds (companion_cidr).
    """
    first, ipv6 = hints.get('cidr'), (hints.get('ipv6') or {}).get('cidr')
    first_version = hint_version(first)
    if first_version == 6 and ipv6 and str(ipv6).strip() != str(first).strip():
        return {}, [catalogue_finding(
            'migrate_network_ambiguous', 'migrate_hints.cidr %s is IPv6 (an IPv6-only network) and migrate_hints.ipv6.cidr names %s.'
            % (first, ipv6), objects=[{'kind': 'option', 'name': 'migrate_hints.cidr'}],
            remedy='Give the IPv4 subnet in migrate_hints.cidr and the IPv6 one in migrate_hints.ipv6.cidr, or only the IPv6 one.')]
    if first_version == 6 or (ipv6 and not first):
        cidr, findings = choose_cidr(nodes, egressips, first or ipv6)
        families = {6: cidr}
        if cidr and first_version != 6:
            other, found = companion_cidr(nodes, states, egressips, cidr, 4)
            findings += found
            families[4] = other
    else:
        cidr, findings = choose_cidr(nodes, egressips, first)
        if cidr is None:
            return {}, findings
        version = hint_version(cidr) or 4  # an unparsable hint stays the first family: preflight refuses it
        other_version = 6 if version == 4 else 4
        other, found = (ipv6, []) if version == 4 and ipv6 else companion_cidr(nodes, states, egressips, cidr, other_version)
        families = {version: cidr, other_version: other}
        findings = findings + found
    families = dict((version, cidr) for version, cidr in families.items() if cidr)
    if any(item['id'] == 'migrate_network_ambiguous' for item in findings):
        return {}, findings
    return families, findings


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


def vm_index(vsphere):
    return dict((normalize_uuid(vm.get('uuid')), vm) for vm in (vsphere or {}).get('vms') or [] if vm.get('uuid'))


def node_vm(node, vms):
    uuid = vm_uuid_from_provider_id(_dig(node, 'spec', 'providerID'))
    return vms.get(uuid) if uuid else None


def nic_by_mac(vm, mac):
    wanted = nn.normalize_mac(mac)
    return next((nic for nic in (vm or {}).get('nics') or [] if nn.normalize_mac(nic.get('mac')) == wanted), None)


def on_portgroup(nic, portgroup):
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
    return {'name': name, 'switch_type': 'standard', 'switch': most_common(entry.get('vswitch') for _host, entry in found),
            'vlan_id': most_common(entry.get('vlan_id') for _host, entry in found),
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
    switch_uuid = most_common(nic.get('switch_uuid') for nic in nics)
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


def address_range(cidr, bases, blockers, used, need, field='migrate_hints.node_address_range'):
    """(first-last text, extended by, findings) holding every base address and `need` free addresses.

    bases: the base addresses (IPAddress). blockers: addresses the range must not hold (egress IPs, gateway).
    used: every address any node holds (host-cidrs); a new node gets the lowest free one. Addresses of the other family
    are left out. field: the hint findings name.
    """
    network = netaddr.IPNetwork(cidr)
    version = network.version
    bases, blockers, used = [[address for address in items if address.version == version] for items in (bases, blockers, used)]
    blocked = set(int(address) for address in blockers) | set([network.first, network.last])
    first, last = min(int(address) for address in bases), max(int(address) for address in bases)
    inside = sorted(str(netaddr.IPAddress(value, version)) for value in blocked if first <= value <= last)
    if inside:
        return None, 0, [catalogue_finding(
            'migrate_address_range_conflict', 'The node base addresses %s..%s of %s enclose %s.' % (
                netaddr.IPAddress(first, version), netaddr.IPAddress(last, version), cidr, ', '.join(inside)),
            objects=[{'kind': 'option', 'name': field}], remedy=_range_remedy(field))]
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
            'fits before an egress IP, the gateway or the end of %s.' % (
                need, netaddr.IPAddress(first, version), netaddr.IPAddress(last, version), cidr),
            objects=[{'kind': 'option', 'name': field}], remedy=_range_remedy(field))]
    return '%s-%s' % (netaddr.IPAddress(first, version), netaddr.IPAddress(last, version)), extended, []


def _range_remedy(field):
    return 'Give %s (first-last or a CIDR block holding every base address and no egress IP).' % field


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
    hostnames = sorted(_labels(node).get(HOSTNAME_LABEL) or _name(node) for node in chosen)
    return {'matchExpressions': [{'key': HOSTNAME_LABEL, 'operator': 'In', 'values': hostnames}]}, True


# --- NMState policies ----------------------------------------------------------------------------

def policies_for(node, mac, interface_name, policies):
    """[(policy, profile name)] of the NMState policies that configure this NIC of this node (by MAC or kernel name)."""
    found = []
    for policy in policies:
        item = hm.policy_nic_interface(policy, _labels(node), mac, interface_name)
        if item is not None:
            found.append((policy, item.get('name')))
    return found


def _canonical(entry):
    try:
        return str(netaddr.IPNetwork('%s/%s' % (entry.get('ip'), entry.get('prefix-length'))))
    except (netaddr.AddrFormatError, ValueError, TypeError, AttributeError):
        return None


def dynamic_ipv6(node, mac, interface_name, policies, address):
    """What in the hand-made NMState policies of this NIC gives it IPv6 addresses dynamically (['<policy> turns ipv6 autoconf
    on', ...]), and, when a policy configures the NIC but none lists the IPv6 base address `address` statically, that too."""
    reasons, static, configured = [], False, False
    for policy in policies:
        interface = None if is_managed(policy) else hm.policy_nic_interface(policy, _labels(node), mac, interface_name)
        if interface is None:
            continue
        configured = True
        family = interface.get('ipv6') if isinstance(interface.get('ipv6'), dict) else {}
        flags = [flag for flag in ('autoconf', 'dhcp') if family.get(flag) is True]
        if flags:
            reasons.append('%s turns ipv6 %s on' % (_name(policy), ' and '.join(flags)))
        static = static or address in [_canonical(entry) for entry in family.get('address') or [] if isinstance(entry, dict)]
    if configured and not static:
        reasons.append('no policy sets its IPv6 base address %s statically (it comes from SLAAC or DHCPv6)' % address)
    return reasons


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


def classify_objects(egressips, nodes, cidrs):
    """(entries for the variables file, rows for the report, findings). cidrs: the secondary subnet of each family (or one cidr);
    an object whose every IP is in one of them is adopted (it may mix families, as OVN-K allows)."""
    subnets = [netaddr.IPNetwork(cidr) for cidr in ([cidrs] if isinstance(cidrs, str) else cidrs)]
    cidr = ', '.join(str(subnet) for subnet in subnets)
    networks = [node_networks_from_node(node) for node in nodes]
    entries, rows, findings = [], [], []
    for egressip in sorted(egressips, key=_name):
        name, ips = _name(egressip), spec_ips(egressip)
        kinds = []
        for ip in ips:
            address = parse_ip(ip)
            if address is not None and any(address.version == network.version and address in network for network in subnets):
                kinds.append('secondary')
            elif address is not None and classify_ip_on_nodes(address, networks).network == PRIMARY:
                kinds.append('primary')
            else:
                kinds.append('other')
        converted = sdn_converted_namespace(egressip)
        row = {'name': name, 'egress_ips': ips, 'owned': is_managed(egressip), 'sdn_converted_namespace': converted,
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
