# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of ocp.egressip.node_nic_address, as pure functions (no I/O): the NIC entries and their checks, the address
allocation per family, the writes (parked claims first), what a pending NIC means, and the release plan.
"""


from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import (
    ADDRESSES_ANNOTATION,
    HOSTNAME_LABEL,
    is_managed,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    NODE_ANNOTATION,
)
from ansible_collections.ocp.egressip.plugins.module_utils.plan import address_plan as _address_plan
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import node_networks_from_node
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn


# --- node_nic_address: the plan ------------------------------------------------------------------

NIC_ENTRY_KEYS = ('node', 'mac', 'address', 'ipv6_address')


def nic_entries(raw, keys=NIC_ENTRY_KEYS):
    """The `nodes` option as [{node, mac, ...}] and the refusals for entries that are not mappings.

    Keys other than `keys` are ignored, so the `vms` list that vsphere_vm_nic returns (node, mac,
    uuid, action, ...) can be passed as it is. Values are stripped strings or None.
    """
    entries, findings = [], []
    for index, item in enumerate(raw or []):
        if not isinstance(item, dict):
            findings.append(nn.input_invalid('nodes[%d]' % index, item, 'is not a mapping', 'give {node: <name>, mac: <MAC>}.'))
            continue
        entry = {}
        for key in keys:
            value = item.get(key)
            entry[key] = str(value).strip() or None if value is not None else None
        entries.append(entry)
    return entries, findings


def check_interface_name(name):
    """The NetworkManager profile name of the secondary NIC (interface_name): at most 15 characters, no spaces or /."""
    if not name or len(name) > 15 or '/' in name or ' ' in name:
        return [catalogue_finding('node_network_input_invalid', 'interface_name %r is not a valid interface name.' % name,
                                  objects=[{'kind': 'option', 'name': 'interface_name'}],
                                  remedy='use at most 15 characters without spaces or /, e.g. egressip0.')]
    return []


def validate_nic_entries(entries, need_mac=True):
    """Refusals for the `nodes` option: missing or repeated node names, malformed or repeated MACs."""
    findings = []
    seen_nodes, seen_macs = {}, {}
    for index, entry in enumerate(entries):
        field = 'nodes[%d]' % index
        node, mac = entry.get('node'), entry.get('mac')
        if not node:
            findings.append(nn.input_invalid('%s.node' % field, node, 'is empty', 'give the name of the Node.'))
        elif node in seen_nodes:
            findings.append(nn.input_invalid('%s.node' % field, node, 'repeats nodes[%d]' % seen_nodes[node], 'list each node once.'))
        else:
            seen_nodes[node] = index
        if not mac:
            if need_mac:
                findings.append(nn.input_invalid('%s.mac' % field, mac, 'is empty',
                                                 'give the MAC of the secondary NIC (vsphere_vm_nic returns it per node).'))
            continue
        if not nn.valid_mac(mac):
            findings.append(nn.input_invalid('%s.mac' % field, mac, 'is not a MAC address', 'write it as 00:50:56:aa:bb:cc.'))
        elif nn.normalize_mac(mac) in seen_macs:
            findings.append(nn.input_invalid('%s.mac' % field, mac, 'is also the MAC of nodes[%d]' % seen_macs[nn.normalize_mac(mac)],
                                             'each node has its own NIC; check the NIC list.'))
        else:
            seen_macs[nn.normalize_mac(mac)] = index
    return findings


def address_uses(node_networks, egressips):
    """Every address held by a node (host-cidrs, primary) or claimed by an EgressIP object."""
    uses = []
    for node in node_networks:
        for cidr in tuple(node.host_cidrs) + tuple(node.primary_ifaddrs):
            uses.append(_address_plan.AddressUse(str(cidr.ip), 'node', node.name))
    for obj in egressips or []:
        for address in (obj.get('spec') or {}).get('egressIPs') or []:
            uses.append(_address_plan.AddressUse(address, 'egressip', obj['metadata']['name']))
    return uses


def host_subnet_inputs(node_networks):
    """(primary, host) lists of (subnet text, owner) for check_host_subnets."""
    primary, host = [], []
    for node in node_networks:
        for cidr in node.primary_ifaddrs:
            primary.append((str(cidr), 'node %s primary address' % node.name))
        for cidr in node.host_cidrs:
            if not any(cidr.ip == other.ip for other in node.primary_ifaddrs):
                host.append((str(cidr), 'node %s' % node.name))
    return primary, host


def _input_findings(entries, nodes, policies, networks, node_networks):
    """Refusals of the input against the cluster: unknown nodes, host subnets in the way, policies not ours."""
    findings = []
    for index, entry in enumerate(entries):
        if entry['node'] not in nodes:
            findings.append(nn.input_invalid('nodes[%d].node' % index, entry['node'], 'is not a Node of the cluster',
                                             'give the name of an existing Node (oc get nodes).'))
    primary, host = host_subnet_inputs(node_networks)
    for network in networks:
        findings += _address_plan.check_host_subnets(network, primary, host)
    for name in [entry['node'] for entry in entries if entry['node'] in nodes]:
        existing_policy = policies.get(nn.policy_name(name))
        if existing_policy is not None and not is_managed(existing_policy):
            findings.append(catalogue_finding(
                'node_object_not_owned',
                'NodeNetworkConfigurationPolicy %s exists without the label %s=%s; it was not created by this collection.'
                % (nn.policy_name(name), MANAGED_BY_LABEL, MANAGED_BY_VALUE),
                objects=[{'kind': nn.POLICY_KIND, 'name': nn.policy_name(name)}, {'kind': 'Node', 'name': name}]))
    return findings


def _settled_allocations(policies, unsettled, nodes):
    """(allocations of the policies that settled their claim, findings for those whose node is gone)."""
    allocations = [nn.policy_allocation(policy) for name, policy in policies.items() if name not in unsettled]
    allocations = [item for item in allocations if item]
    findings = []
    for item in allocations:
        if item['node'] not in nodes:
            findings.append(catalogue_finding(
                'node_policy_orphaned',
                'NodeNetworkConfigurationPolicy %s keeps %s reserved for node %s, which no longer exists.'
                % (item['name'], ', '.join(item['addresses'][v] for v in sorted(item['addresses'])), item['node']),
                objects=[{'kind': nn.POLICY_KIND, 'name': item['name']}]))
    return allocations, findings


def _plan_families(networks, names, entry_by_node, allocations_by_policy, node_networks, uses):
    """(planned {node: {version: address}}, sources {node: {version: source}}, findings): one address plan per family."""
    networks_by_name = dict((node.name, node) for node in node_networks)
    planned = dict((name, {}) for name in names)
    sources = dict((name, {}) for name in names)
    findings = []
    for network in networks:
        existing = dict((item['node'], item['addresses'][network.version]) for item in allocations_by_policy
                        if network.version in item['addresses'])
        key = 'address' if network.version == 4 or len(networks) == 1 else 'ipv6_address'
        requested = dict((name, entry_by_node[name].get(key)) for name in names if entry_by_node[name].get(key))
        current = {}
        for name in names:
            held = [str(cidr) for cidr in networks_by_name[name].host_cidrs if network.held_by(cidr)]
            if held:
                current[name] = held
        allocations, plan_findings = _address_plan.plan_addresses(network, names, existing, requested, current, uses)
        findings += plan_findings
        for item in allocations:
            planned[item['node']][network.version] = item['address']
            sources[item['node']][network.version] = item['source']
    return planned, sources, findings


def _secondary_interfaces(names, entry_by_node, states):
    """({node: kernel name of the NIC with the entry's MAC}, [pending: nodes whose NodeNetworkState lacks that NIC])."""
    ifnames, pending = {}, []
    for name in names:
        interface = nn.interface_by_mac(states.get(name), entry_by_node[name]['mac'])
        if interface is not None:
            ifnames[name] = interface.get('name')
        else:
            pending.append(pending_interface(name, entry_by_node[name]['mac'], states.get(name)))
    return ifnames, pending


def _allocation(entry, name, plan_inputs, current, desired):
    """The allocation row of one node: its addresses, policy, interface and the policy's progress."""
    planned, sources, ifnames, enactments = plan_inputs
    progress, message = (nn.PROGRESSING, 'policy not created yet')
    if current is not None and not nn.owned_patch(current, desired):
        progress, message = nn.policy_progress(current, enactments.get(nn.enactment_name(name, current['metadata']['name'])))
    return {'node': name, 'mac': nn.normalize_mac(entry['mac']), 'policy': desired['metadata']['name'],
            'address': planned[name].get(4) or planned[name].get(6),
            'ipv6_address': planned[name].get(6) if 4 in planned[name] else None,
            'source': sources[name].get(4) or sources[name].get(6),
            'interface': ifnames.get(name), 'status': progress, 'message': message}


def plan_nic_addresses(entries, networks, route_metric, profile_name, snapshot, reserve_contested=False):
    """Desired policies for `entries` ([{node, mac, address, ipv6_address}]) on the secondary `networks`.

    networks: validated model/network.py Family objects, one per family (IPv4 first when both).
    snapshot: {'nodes', 'nncps', 'nnces', 'nns', 'egressips'} as listed from the API (snapshot/kubernetes.py).
    reserve_contested: the addresses of parked policies that lost their claim are reserved too. A run's plan leaves them
      free (a parked loser configures no node, its writer moves it); the re-allocation of a lost claim must not: when
      three writers claimed one address at once, the other two still hold it and both lose, and taking it as free would
      send every writer back to the same address again and again.
    Returns a dict: findings, allocations (per entry), writes ({'create'|'patch': ...}), diff sides.
    """
    nodes = nn.by_name(snapshot['nodes'])
    policies = nn.by_name(snapshot['nncps'])
    states = nn.by_name(snapshot['nns'])
    node_networks = [node_networks_from_node(node) for node in snapshot['nodes']]
    findings = _input_findings(entries, nodes, policies, networks, node_networks)
    names = [entry['node'] for entry in entries if entry['node'] in nodes]
    unsettled = set(nn.unsettled_claims(policies.values()))
    allocations_by_policy, orphaned = _settled_allocations(policies, set() if reserve_contested else unsettled, nodes)
    findings += orphaned
    entry_by_node = dict((entry['node'], entry) for entry in entries)
    planned, sources, family_findings = _plan_families(networks, names, entry_by_node, allocations_by_policy, node_networks,
                                                       address_uses(node_networks, snapshot.get('egressips')))
    findings += family_findings
    secondary_ifnames, pending = _secondary_interfaces(names, entry_by_node, states)
    findings += nn.route_metric_findings(dict((name, states[name]) for name in names if name in states), route_metric,
                                         secondary_ifnames, versions=[network.version for network in networks])

    gateways = dict((network.version, str(network.gateway)) for network in networks)
    plan_inputs = (planned, sources, secondary_ifnames, nn.by_name(snapshot.get('nnces')))
    plan = {'findings': findings, 'allocations': [], 'create': [], 'patch': [], 'before': {}, 'after': {}, 'pending': pending,
            'reclaim': [nn.policy_name(name) for name in names if nn.policy_name(name) in unsettled]}
    for entry in entries:
        name = entry['node']
        if name not in planned or len(planned[name]) != len(networks):
            continue
        hostname = ((nodes[name].get('metadata') or {}).get('labels') or {}).get(HOSTNAME_LABEL) or name
        route_interface = secondary_ifnames.get(name) or unknown_interface(entry['mac'])
        desired = nn.desired_policy(name, hostname, entry['mac'], planned[name], gateways, route_metric, profile_name, route_interface)
        current = policies.get(desired['metadata']['name'])
        _add_write(plan, current, desired, park=desired['metadata']['name'] in plan['reclaim'])
        plan['allocations'].append(_allocation(entry, name, plan_inputs, current, desired))
    return plan


def _add_write(plan, current, desired, park=False):
    """A create or a patch of the owned part; `park` keeps a re-allocated policy parked until its claim is checked."""
    name = desired['metadata']['name']
    if current is None:
        plan['create'].append(desired)
    else:
        patch = nn.owned_patch(current, nn.parked(desired) if park else desired)
        if not patch:
            return
        plan['patch'].append((name, patch))
        plan['before'][name] = nn.owned_view(current, desired)
    plan['after'][name] = nn.owned_view(desired, desired)


def pending_interface(node, mac, nns):
    """A node whose NodeNetworkState lists no NIC with `mac` yet: what it lists instead, for the message."""
    listed = ['%s %s' % (item.get('name'), nn.normalize_mac(item.get('mac-address'))) for item in nn.nns_interfaces(nns)
              if item.get('type', 'ethernet') == 'ethernet' and item.get('mac-address')]
    return {'node': node, 'mac': nn.normalize_mac(mac), 'state_found': nns is not None, 'listed': listed}


def unknown_interface(mac):
    """Stands for the kernel name in a policy shown before NodeNetworkState lists the NIC (check mode only)."""
    return '<kernel name of %s>' % nn.normalize_mac(mac)


def pending_findings(pending, waited, severity='error'):
    """node_nic_not_in_state for each node whose NodeNetworkState has not listed the NIC (after `waited` s)."""
    findings = []
    for item in pending:
        seen = ('it lists %s' % ', '.join(item['listed'])) if item['listed'] else (
            'it lists no ethernet interface' if item['state_found'] else 'the node has no NodeNetworkState')
        findings.append(catalogue_finding(
            'node_nic_not_in_state',
            'The NodeNetworkState of node %s lists no interface with MAC %s%s (%s). The gateway route must name the NIC\'s '
            'kernel interface, which only NodeNetworkState tells.' % (
                item['node'], item['mac'], ' after waiting %d s' % waited if waited else '', seen),
            objects=[{'kind': 'Node', 'name': item['node']}, {'kind': 'NodeNetworkState', 'name': item['node']}],
            severity=severity))
    return findings


def cleanup_state(allocation, profile_name, route_interface=None):
    """desiredState that removes the secondary addresses and gateway routes before the policy is deleted.

    Deleting a policy never rolls a node back (nmstate keeps the configuration), so the
    address goes first: the NIC stays up with IP disabled (deleting its profile would let
    NetworkManager start DHCP on it), the routes of the policy are marked absent. An absent
    route matches by its next-hop interface's kernel name (no release resolves a profile name
    there); disabling IP removes the NIC's routes anyway when the kernel name is not known.
    """
    interface = {'name': profile_name, 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address',
                 'mac-address': nn.normalize_mac(allocation['mac']).upper(),
                 'ipv4': {'enabled': False}, 'ipv6': {'enabled': False}}
    routes = [{'destination': '0.0.0.0/0' if version == 4 else '::/0', 'next-hop-interface': route_interface or profile_name,
               'state': 'absent'}
              for version in sorted(allocation['addresses'])]
    return {'interfaces': [interface], 'routes': {'config': routes}}


def egress_ips_in(hosted, addresses):
    """The (object, ip) pairs of `hosted` inside the subnets of `addresses` ('ip/prefix')."""
    subnets = [netaddr.IPNetwork(text).cidr for text in addresses]
    inside = []
    for name, ip in hosted:
        address = netaddr.IPAddress(ip)
        if any(subnet.version == address.version and address in subnet for subnet in subnets):
            inside.append((name, ip))
    return inside


def plan_nic_release(node_names, snapshot, force):
    """Policies to remove for `node_names` (state: absent) and whether each needs the address cleanup first.

    Returns {'findings', 'release': [{'node', 'policy', 'allocation', 'cleanup': bool, 'interface'}], 'before'}
    (interface: the NIC's kernel name when the NodeNetworkState lists it).
    A node that hosts egress IPs in the released subnets is refused unless force.
    """
    nodes = nn.by_name(snapshot['nodes'])
    states = nn.by_name(snapshot['nns'])
    hosted = hosted_egress_ips(snapshot.get('egressips'))
    plan = {'findings': [], 'release': [], 'before': {}}
    for policy in snapshot['nncps']:
        allocation = nn.policy_allocation(policy)
        if allocation is None or allocation['node'] not in node_names:
            continue
        stranded = egress_ips_in(hosted.get(allocation['node'], []), allocation['addresses'].values())
        if stranded and not force:
            plan['findings'].append(catalogue_finding(
                'node_hosts_egress_ips',
                'releasing the secondary address of node %s would strand egress IP(s) %s it hosts.'
                % (allocation['node'], ', '.join('%s (EgressIP %s)' % (ip, name) for name, ip in stranded)),
                objects=[{'kind': 'Node', 'name': allocation['node']}]))
            continue
        interface = nn.interface_by_mac(states.get(allocation['node']), allocation['mac']) if allocation['node'] in nodes else None
        plan['release'].append({'node': allocation['node'], 'policy': policy['metadata']['name'], 'allocation': allocation,
                                'cleanup': interface is not None, 'current': policy,
                                'interface': (interface or {}).get('name')})
        plan['before'][policy['metadata']['name']] = nn.owned_view(policy, {'metadata': {'labels': {MANAGED_BY_LABEL: None},
                                                                                         'annotations': {NODE_ANNOTATION: None,
                                                                                                         ADDRESSES_ANNOTATION: None}},
                                                                            'spec': {'nodeSelector': None, 'desiredState': None}})
    return plan
