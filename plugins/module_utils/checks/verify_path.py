# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify, per node: whether the node's secondary path works (point 3 of verify.py's list), as pure functions.

The vSphere part of the verify snapshot (``vsphere_facts``) and what it says about one node (``vsphere_path``: VM
power, the vNIC on the egress port group and its connection, the port group, its VLAN and its vSwitch's uplinks on
the ESXi host the VM runs on now); the node's base address on that NIC (``address_path``, NodeNetworkState); the
carrier loss of a disconnected vNIC (what NetworkManager did, and the what-if choice ``carrier_loss_choice``); the
route via the gateway; IP forwarding per family (IPv4 on the NIC by the Node Tuning Operator Profiles, IPv6 node-wide). ``node_path`` puts them together
into one node row, with ``path`` one of the PATH_* values and the blackhole kinds found. No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress

from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import normal_ip
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.plan.node_network import TUNED_NAMESPACE, interface_addresses, interface_by_mac
from ansible_collections.ocp.egressip.plugins.module_utils.plan.forwarding import (
    cluster_ip_forwarding,
    forwarding_in_profile,
    forwarding_sysctl,
    ipv6_all_forwarding_in_profile,
)
from ansible_collections.ocp.egressip.plugins.module_utils.plan.egress_labels import in_network, node_capability
from ansible_collections.ocp.egressip.plugins.module_utils.plan.vsphere_network import nic_on_network

PATH_OK = 'ok'
PATH_BROKEN = 'broken'
PATH_UNKNOWN = 'not_checked'
PATH_NOT_APPLICABLE = 'n/a'
PATH_NO_ADDRESS = 'no_address'  # the vNIC lost its carrier and NetworkManager removed the address: capacity lost, not a blackhole

# The blackhole kinds verify names (one finding per node and kind, besides egressip_blackhole per IP).
NIC_DISCONNECTED = 'blackhole_nic_disconnected'
PORTGROUP_MISSING_ON_HOST = 'blackhole_portgroup_missing_on_host'
PORTGROUP_VLAN_MISMATCH = 'blackhole_portgroup_vlan_mismatch'
GATEWAY_ROUTE_MISSING = 'blackhole_gateway_route_missing'
VSWITCH_NO_UPLINK = 'blackhole_vswitch_no_uplink'
FORWARDING_OFF = 'blackhole_forwarding_off'


# --- per node: the secondary path ------------------------------------------------------------------

def _host_cidrs(node):
    return _egress_network.node_networks_from_node(node).annotations.get(_egress_network.HOST_CIDRS_ANNOTATION) or []


def secondary_nic(vm, vsphere):
    """(the VM's vNIC on the egress port group or None, note) - the connected one first when there are several."""
    nics = [nic for nic in vm.get('nics') or [] if _nic_matches(nic, vsphere)]
    nics.sort(key=lambda nic: not nic.get('connected'))
    note = None
    if len(nics) > 1:
        note = 'VM %s has %d vNICs on port group %s (%s); checked %s' % (
            vm.get('name'), len(nics), vsphere.get('portgroup'), ', '.join(nic.get('mac') or '?' for nic in nics), nics[0].get('mac'))
    return (nics[0] if nics else None), note


def vsphere_facts(vcenter, portgroup, cluster_nodes):
    """The vSphere part of the verify snapshot from ``_preflight_snapshot.read_vcenter`` (one batched read).

    portgroup: {'name', 'switch_type', 'switch'} as in ``egressip_vsphere.portgroup``;
    cluster_nodes: the Node objects whose VMs were read (to name nodes without a VM).
    """
    switch_type = portgroup.get('switch_type') or 'standard'
    facts = {'portgroup': portgroup['name'], 'switch_type': switch_type, 'switch': portgroup.get('switch'), 'network': None,
             'hosts': {}, 'switch_hosts': None, 'vms': {}, 'findings': [], 'cluster': vcenter.get('cluster'),
             'datacenter': vcenter.get('datacenter'), 'vlan_id': portgroup.get('vlan_id'), 'portgroup_vlans': {}, 'portgroup_uplinks': {}}
    if vcenter.get('not_found'):
        facts['findings'].append(catalogue_finding('vsphere_cluster_not_found', vcenter['not_found'],
                                                   objects=[{'kind': 'Datacenter', 'name': vcenter.get('datacenter')}]))
        facts['vms'] = None
        return facts
    for host in vcenter.get('hosts') or []:
        facts['hosts'][host['name']] = sorted(item['name'] for item in host.get('standard_portgroups') or [])
        vlans = [item.get('vlan_id') for item in host.get('standard_portgroups') or [] if item['name'] == portgroup['name']]
        if vlans and vlans[0] is not None:
            facts['portgroup_vlans'][host['name']] = vlans[0]
        uplinks = _portgroup_uplinks(host, portgroup['name'])
        if uplinks is not None:
            facts['portgroup_uplinks'][host['name']] = uplinks
    if switch_type == 'distributed':
        switch = next((item for item in vcenter.get('distributed_switches') or [] if item['name'] == portgroup.get('switch')), None)
        found = next((item for item in (switch or {}).get('portgroups') or [] if item['name'] == portgroup['name']), None)
        if found is not None:
            facts['network'] = {'type': 'distributed', 'name': found['name'], 'portgroup_key': found['key'], 'switch_uuid': switch['uuid']}
            facts['switch_hosts'] = list(switch.get('hosts') or [])
    elif any(portgroup['name'] in names for names in facts['hosts'].values()):
        facts['network'] = {'type': 'standard', 'name': portgroup['name']}
    if facts['network'] is None:
        where = ('distributed switch %s' % portgroup.get('switch')) if switch_type == 'distributed' else (
            'any host of vSphere cluster %s' % vcenter.get('cluster'))
        facts['findings'].append(catalogue_finding('portgroup_missing', 'port group %s does not exist on %s.' % (portgroup['name'], where),
                                                   objects=[{'kind': 'Network', 'name': portgroup['name']}]))
    for vm in vcenter.get('vms') or []:
        if vm.get('node'):
            facts['vms'][vm['node']] = {'name': vm.get('name'), 'moid': vm.get('moid'), 'host': vm.get('host'),
                                        'power_state': vm.get('power_state'), 'nics': vm.get('nics') or []}
    for node in cluster_nodes:
        name = (node.get('metadata') or {}).get('name')
        if name not in facts['vms']:
            facts['findings'].append(catalogue_finding(
                'vsphere_node_vm_not_found', 'node %s (spec.providerID %r) has no VM in datacenter %s.'
                % (name, (node.get('spec') or {}).get('providerID') or '', vcenter.get('datacenter')), objects=[{'kind': 'Node', 'name': name}]))
    return facts


def _portgroup_uplinks(host, name):
    """{'vswitch', 'uplinks', 'down'} of the standard vSwitch carrying port group `name` on one host, or None (not there, or not read)."""
    vswitch = next((item.get('vswitch') for item in host.get('standard_portgroups') or [] if item['name'] == name), None)
    switch = next((item for item in host.get('standard_switches') or [] if item.get('name') == vswitch), None)
    if switch is None or 'uplinks_down' not in switch:
        return None
    return {'vswitch': vswitch, 'uplinks': list(switch.get('uplinks') or []), 'down': list(switch['uplinks_down'])}


def _nic_matches(nic, vsphere):
    network = vsphere.get('network')
    if network and network['type'] == 'distributed':
        return nic_on_network(nic, network)
    return not nic.get('portgroup_key') and not nic.get('opaque_network_id') and nic.get('network') == vsphere.get('portgroup')


def domain_facts(parts, findings=()):
    """With failure domains: one vsphere part of the verify snapshot from each domain's ``vsphere_facts`` (parts:
    [(domain name, node names, facts)]); ``by_node`` gives each node its domain's facts (port group, hosts), the
    findings are every domain's plus ``findings`` (nodes mapped to no domain)."""
    if not parts:
        return None
    merged = dict(parts[0][2])
    merged['findings'] = list(findings) + [item for _domain, _nodes, facts in parts for item in facts['findings']]
    merged['vms'] = {}
    for _domain, _nodes, facts in parts:
        merged['vms'].update(facts['vms'] or {})
    merged['by_node'] = dict((node, facts) for _domain, nodes, facts in parts for node in nodes)
    merged['domains'] = dict((domain, facts) for domain, _nodes, facts in parts)
    return merged


def vsphere_path(node_name, vsphere):
    """What vCenter says about a node's secondary path: {'vm', 'esxi_host', 'power_state', 'nic', 'problems', 'notes', 'checked'}."""
    vsphere = (vsphere.get('by_node') or {}).get(node_name, vsphere)  # failure domains: the node's own domain
    facts = {'vm': None, 'esxi_host': None, 'power_state': None, 'nic': None, 'problems': [], 'notes': [], 'checked': False,
             'kinds': []}
    if vsphere.get('vms') is None:
        facts['notes'].append('vCenter was not read (datacenter or cluster not found), so the vNIC of node %s was not checked' % node_name)
        return facts
    vm = vsphere['vms'].get(node_name)
    if vm is None:
        facts['notes'].append('no VM found for node %s in vCenter (providerID), so its vNIC was not checked' % node_name)
        return facts
    facts.update(vm=vm.get('name'), esxi_host=vm.get('host'), power_state=vm.get('power_state'), checked=True)
    portgroup = vsphere.get('portgroup')
    if vm.get('power_state') not in (None, 'poweredOn'):
        facts['problems'].append('VM %s is %s' % (vm.get('name'), vm.get('power_state')))
    nic, note = secondary_nic(vm, vsphere)
    if note:
        facts['notes'].append(note)
    if nic is None:
        facts['problems'].append('VM %s has no vNIC on port group %s' % (vm.get('name'), portgroup))
        return facts
    facts['nic'] = {'mac': nic.get('mac'), 'connected': bool(nic.get('connected')), 'network': nic.get('network') or portgroup,
                    'portgroup_on_host': None}
    if vm.get('power_state') not in (None, 'poweredOn'):
        # vCenter reports every NIC of a VM that is not running disconnected: what counts is whether it connects at power-on
        if not nic.get('start_connected'):
            facts['problems'].append('vNIC %s of VM %s on port group %s will not connect when the VM powers on (startConnected false)'
                                     % (nic.get('mac'), vm.get('name'), portgroup))
    elif not nic.get('connected'):
        facts['problems'].append('vNIC %s of VM %s on port group %s is disconnected' % (nic.get('mac'), vm.get('name'), portgroup))
    on_host, problem = _portgroup_on_host(vm, vsphere)
    facts['nic']['portgroup_on_host'] = on_host
    if problem:
        facts['problems'].append(problem)
        facts['kinds'].append(PORTGROUP_MISSING_ON_HOST)
    elif on_host:
        problem = _vlan_on_host(vm, vsphere)
        if problem:
            facts['problems'].append(problem)
            facts['kinds'].append(PORTGROUP_VLAN_MISMATCH)
        problem = _uplinks_on_host(vm, vsphere)
        if problem:
            facts['problems'].append(problem)
            facts['kinds'].append(VSWITCH_NO_UPLINK)
    return facts


def _uplinks_on_host(vm, vsphere):
    """Problem text when the standard vSwitch of the port group on the VM's host has no uplink, or only uplinks whose link is down.

    A distributed port group's uplinks are the distributed switch's on each member host: not read, so not judged here.
    """
    if vsphere.get('switch_type') == 'distributed':
        return None
    uplinks = (vsphere.get('portgroup_uplinks') or {}).get(vm.get('host'))
    if uplinks is None:
        return None
    where = 'vSwitch %s of port group %s on ESXi host %s where VM %s runs now' % (
        uplinks['vswitch'], vsphere.get('portgroup'), vm.get('host'), vm.get('name'))
    if not uplinks['uplinks']:
        return '%s has no physical uplink (spec.bridge), so its frames never leave the host' % where
    if set(uplinks['uplinks']) <= set(uplinks['down']):
        return '%s has every physical uplink down (%s: no link)' % (where, ', '.join(uplinks['uplinks']))
    return None


def network_vlan(vsphere):
    """The VLAN the standard port group should carry: the configured one, else the one most hosts have (ties: lowest)."""
    if vsphere.get('vlan_id') is not None:
        return vsphere['vlan_id'], 'configured'
    counts = {}
    for vlan in (vsphere.get('portgroup_vlans') or {}).values():
        counts[vlan] = counts.get(vlan, 0) + 1
    if not counts:
        return None, None
    return min(counts, key=lambda vlan: (-counts[vlan], vlan)), 'on the other hosts'


def _vlan_on_host(vm, vsphere):
    """Problem text when the standard port group has another VLAN on the VM's current host than the network's (frames leave on the wrong segment)."""
    if vsphere.get('switch_type') == 'distributed':
        return None  # one VLAN on every member host
    here = (vsphere.get('portgroup_vlans') or {}).get(vm.get('host'))
    wanted, source = network_vlan(vsphere)
    if here is None or wanted is None or here == wanted:
        return None
    return 'port group %s has VLAN %s on ESXi host %s where VM %s runs now, VLAN %s %s' % (
        vsphere.get('portgroup'), here, vm.get('host'), vm.get('name'), wanted, source)


def _portgroup_on_host(vm, vsphere):
    """(whether the port group exists on the ESXi host the VM runs on now, the problem text or None)."""
    portgroup, host = vsphere.get('portgroup'), vm.get('host')
    if vsphere.get('switch_type') == 'distributed':
        members = vsphere.get('switch_hosts')
        if members is None or host in members:
            return members is not None, None
        return False, 'ESXi host %s where VM %s runs now is not a member of distributed switch %s' % (host, vm.get('name'), vsphere.get('switch'))
    hosts = vsphere.get('hosts') or {}
    if host not in hosts:
        return False, ('VM %s runs on ESXi host %s, outside vSphere cluster %s where the port group %s is kept'
                       % (vm.get('name'), host, vsphere.get('cluster'), portgroup))
    if portgroup not in hosts[host]:
        return False, 'port group %s does not exist on ESXi host %s where VM %s runs now' % (portgroup, host, vm.get('name'))
    return True, None


def address_path(node, nns, networks, mac):
    """What the node says about its base address: {'interface', 'interface_state', 'address', 'problems', 'checked'}."""
    facts = {'interface': None, 'interface_state': None, 'address': None, 'problems': [], 'checked': False}
    if not networks:
        return facts
    addresses = [entry for entry in _host_cidrs(node) if _safe_in_network(entry, networks)]
    facts['address'] = addresses[0] if addresses else None
    if nns is None:
        return facts
    facts['checked'] = True
    interface = interface_by_mac(nns, mac) if mac else None
    if interface is None and not mac:
        interface = next((item for item in (nns.get('status') or {}).get('currentState', {}).get('interfaces') or []
                          if any(_safe_in_network(entry, networks) for entry in interface_addresses(item))), None)
    if interface is not None:
        facts['interface'] = interface.get('name')
        facts['interface_state'] = interface.get('state')
        on_nic = [entry for entry in interface_addresses(interface) if _safe_in_network(entry, networks)]
        if on_nic:
            facts['address'] = on_nic[0]
    facts['problems'] = node_capability(_host_cidrs(node), nns, networks, mac)
    return facts


def _safe_in_network(entry, networks):
    try:
        return in_network(entry, networks)
    except Exception:  # pylint: disable=broad-except  # a malformed annotation entry is not an address in the network
        return False


def node_path(node_name, node, snapshot, networks, gateway=None):
    """One node's row: readiness, label, VM and vNIC, base address, and whether its secondary path works."""
    snap_node = snapshot['placement']['nodes'].get(node_name) or {}
    row = {'name': node_name, 'exists': node is not None, 'ready': snap_node.get('ready'), 'labelled': snap_node.get('labelled'),
           'cordoned': snap_node.get('cordoned'), 'egress_ips': [], 'vm': None, 'esxi_host': None, 'power_state': None,
           'nic': None, 'interface': None, 'interface_state': None, 'address': None, 'path': PATH_UNKNOWN,
           'problems': [], 'notes': [], 'blackhole_kinds': [], 'carrier_loss': None}
    if node is None:
        row['problems'].append('node %s does not exist' % node_name)
        row['path'] = PATH_BROKEN
        return row
    checked = False
    mac = None
    vsphere = snapshot.get('vsphere')
    if vsphere is not None:
        facts = vsphere_path(node_name, vsphere)
        row.update(vm=facts['vm'], esxi_host=facts['esxi_host'], power_state=facts['power_state'], nic=facts['nic'])
        row['problems'] += facts['problems']
        row['notes'] += facts['notes']
        row['blackhole_kinds'] += facts['kinds']
        checked = checked or facts['checked']
        mac = (facts['nic'] or {}).get('mac')
    nns_all = snapshot.get('nns')
    if nns_all is not None and networks:
        nns = nns_all.get(node_name)
        if nns is None:
            row['notes'].append('node %s has no NodeNetworkState, so its base address was checked in host-cidrs only' % node_name)
        facts = address_path(node, nns, networks, mac)
        row.update(interface=facts['interface'], interface_state=facts['interface_state'], address=facts['address'])
        if facts['checked']:
            row['problems'] += [problem for problem in facts['problems'] if problem not in row['problems']]
            checked = True
            _gateway_route(row, nns, gateway)
    elif networks:
        row['address'] = address_path(node, None, networks, None)['address']
    held = any(_safe_in_network(entry, networks) for entry in _host_cidrs(node)) if networks else None
    if _carrier_loss(row, held):
        return row
    if row['problems']:
        row['path'] = PATH_BROKEN
    elif checked:
        row['path'] = PATH_OK
    return row


def _carrier_loss(row, held):
    """Classify a disconnected vNIC by what NetworkManager did (DOMAIN.md section 6); True when the row is final.

    held: host-cidrs still hold the address (ovnkube-node's live view; NodeNetworkState may be a minute old);
    None when no network is known to look for (then the vNIC stays a broken path, not classified).
    Address gone (no ignore-carrier): OVN-K moves the IPs and places none here, a capacity loss, not a blackhole.
    Address kept (ignore-carrier, or within NetworkManager's few seconds): the IPs stay and are dropped, a blackhole.
    """
    nic = row.get('nic')
    if not nic or nic.get('connected') or held is None or row.get('power_state') not in (None, 'poweredOn'):
        return False
    if not held:
        row['carrier_loss'] = 'remove'
        row['path'] = PATH_NO_ADDRESS
        row['notes'] += row['problems'] + ['NetworkManager removed the address when the carrier went (no ignore-carrier): OVN-Kubernetes '
                                           'moves the egress IPs off node %s and places none there until the vNIC is connected '
                                           'again (autoconnect restores the address)' % row['name']]
        row['problems'] = []
        row['blackhole_kinds'] = []
        return True
    row['carrier_loss'] = 'keep'
    row['blackhole_kinds'].append(NIC_DISCONNECTED)
    row['notes'].append('node %s keeps %s on the disconnected vNIC (NetworkManager ignore-carrier, or within the seconds before it '
                        'acts): nothing moves by itself' % (row['name'], row['address']))
    return False


def _gateway_route(row, nns, gateway):
    """With network.gateway given: the NIC needs a route via that gateway in NodeNetworkState (else on-link ARP, dropped).
    A list (one gateway per family of a dual-stack network): a route via each."""
    if isinstance(gateway, (list, tuple)):
        for item in gateway:
            _gateway_route(row, nns, item)
        return
    if not gateway or not row.get('interface') or row['address'] is None:
        return
    routes = (((nns or {}).get('status') or {}).get('currentState') or {}).get('routes') or {}
    for route in (routes.get('config') or []) + (routes.get('running') or []):
        if route.get('next-hop-interface') == row['interface'] and normal_ip(route.get('next-hop-address')) == normal_ip(gateway):
            return
    row['problems'].append('no route via gateway %s on interface %s in NodeNetworkState (traffic from the egress IP goes out '
                           'on-link and is dropped)' % (gateway, row['interface']))
    row['blackhole_kinds'].append(GATEWAY_ROUTE_MISSING)


def carrier_loss_evidence(nns):
    """{node: 'keep'} for nodes whose NodeNetworkState shows an ethernet interface down that still holds an address.

    A link without carrier that keeps its address is what ignore-carrier does; one without carrier whose address went
    cannot be told from an unconfigured link without vCenter (verify reads that from the vNIC, see ``_carrier_loss``).
    """
    evidence = {}
    for name, item in sorted((nns or {}).items()):
        for interface in (((item or {}).get('status') or {}).get('currentState') or {}).get('interfaces') or []:
            if interface.get('type') == 'ethernet' and interface.get('state') == 'down' and interface_addresses(interface):
                evidence[name] = 'interface %s is down and still holds %s' % (interface.get('name'), interface_addresses(interface)[0])
    return evidence


def carrier_loss_choice(node, given=None, nns=None):
    """(behaviour, how it was chosen) for the what-if of disconnect_nic: given, read from NodeNetworkState, or assumed."""
    if given in _placement.CARRIER_LOSS:
        return given, 'given (carrier_loss=%s)' % given
    evidence = carrier_loss_evidence(nns)
    if node in evidence:
        return 'keep', 'read from node %s: %s (ignore-carrier)' % (node, evidence[node])
    if evidence:
        other = sorted(evidence)[0]
        return 'keep', 'read from node %s: %s (ignore-carrier; the same NetworkManager configuration assumed on %s)' % (
            other, evidence[other], node)
    return _placement.DEFAULT_CARRIER_LOSS, ('assumed: %s, NetworkManager\'s default without ignore-carrier (no node shows a link '
                                             'without carrier; set carrier_loss to say otherwise)' % _placement.DEFAULT_CARRIER_LOSS)


# --- per node: IP forwarding on the secondary NIC (Node Tuning Operator Profiles) -------------------

def forwarding_facts(profiles, tuneds, network_operator):
    """What verify knows about forwarding: Global or not, each node's Profile (by node name), the Tuned objects."""
    return {'global': cluster_ip_forwarding(network_operator) == 'Global',
            'profiles': dict(((item.get('metadata') or {}).get('name'), item) for item in profiles or []), 'tuneds': list(tuneds or [])}


def node_forwarding(facts, node_name, interface, version=4):
    """(True | False | None, why) for forwarding of IP family `version` (4 or 6) on a node's NIC. None: cannot tell.

    Global: OVN-Kubernetes turns it on for both families. IPv4 forwards per link: the profile TuneD reports applied
    (Profile status) must set ``net.ipv4.conf.<if>.forwarding`` (or an all switch) in its text in the Tuned objects.
    IPv6 follows ``_ipv6_forwarding``: Linux forwards it by ``net.ipv6.conf.all.forwarding`` only."""
    if facts['global']:
        return True, 'gatewayConfig.ipForwarding is Global'
    profile = facts['profiles'].get(node_name)
    if version == 6:
        return _ipv6_forwarding(facts, node_name, profile)
    if profile is None:
        return None, 'node %s has no Profile in %s' % (node_name, TUNED_NAMESPACE)
    running = (profile.get('status') or {}).get('tunedProfile')
    state = profile_state(node_name, profile)
    if state:
        return False, state
    if forwarding_in_profile(running, facts['tuneds'], interface, version):
        return True, 'Tuned profile %s' % running
    return False, ('gatewayConfig.ipForwarding is not Global and profile %s, which TuneD runs on node %s, does not set '
                   '%s=1' % (running, node_name, forwarding_sysctl(interface, version)))


def profile_state(node_name, profile):
    """Why the profile TuneD runs on the node is not (cleanly) applied: Degraded, or Applied not true; None when it is."""
    status = profile.get('status') or {}
    running = status.get('tunedProfile')
    conditions = dict((item.get('type'), item) for item in status.get('conditions') or [])
    if (conditions.get('Degraded') or {}).get('status') == 'True':
        return 'Profile %s is Degraded (TuneD running %s): %s' % (node_name, running, conditions['Degraded'].get('message'))
    if (conditions.get('Applied') or {}).get('status') != 'True':
        return 'TuneD has not applied profile %s on node %s (Applied: %s)' % (
            running, node_name, (conditions.get('Applied') or {}).get('message') or 'not reported')
    return None


IPV6_BY_OVNK = ('ovnkube-node sets net.ipv6.conf.all.forwarding=1 on clusters with IPv6, and Linux forwards IPv6 by that '
                'node-wide switch only (net.ipv6.conf.<if>.forwarding does not forward)')


def _ipv6_forwarding(facts, node_name, profile):
    """IPv6 (not Global): on unless the profile TuneD applied sets ``net.ipv6.conf.all.forwarding=0`` (ip6_forward reads
    only that switch; ovnkube-node sets it to 1 on IPv6 clusters since ovn-kubernetes 681f7ca). A Degraded or not yet
    applied profile does not turn it off; one that sets 0 but is not cleanly applied leaves the kernel's value unknown."""
    if profile is None:
        return True, '%s; node %s has no Profile in %s, so no TuneD profile turns it off' % (IPV6_BY_OVNK, node_name, TUNED_NAMESPACE)
    running = (profile.get('status') or {}).get('tunedProfile')
    state = profile_state(node_name, profile)
    if ipv6_all_forwarding_in_profile(running, facts['tuneds']) is not False:
        return True, IPV6_BY_OVNK + ('; it stays on although %s' % state if state else '')
    if state:
        return None, ('profile %s, which TuneD runs on node %s, sets net.ipv6.conf.all.forwarding=0 (the node-wide switch) but %s, '
                      'so whether the kernel has it off is not known' % (running, node_name, state))
    return False, ('profile %s, which TuneD applied on node %s, sets net.ipv6.conf.all.forwarding=0: that turns off the node-wide '
                   'switch Linux forwards IPv6 by (ovnkube-node sets it to 1); gatewayConfig.ipForwarding is not Global'
                   % (running, node_name))


def _profile_problem(facts, node_name):
    profile = facts['profiles'].get(node_name)
    return not facts['global'] and profile is not None and profile_state(node_name, profile) is not None


def subnet_families(subnets):
    """The IP versions (sorted) of the cidrs in `subnets`; unparsable entries are left out."""
    versions = set()
    for subnet in subnets or []:
        try:
            versions.add(ipaddress.ip_network(str(subnet), strict=False).version)
        except ValueError:
            continue
    return sorted(versions)


def apply_forwarding(facts, node_rows, families=None):
    """Forwarding off on the secondary NIC breaks the node's path (the kernel drops the egress IP's traffic): a blackhole kind.

    families: {node name: [IP versions]} the node must forward (its secondary subnets' families); a node not in it, or
    None, is checked for IPv4 only. row['forwarding'] is False when any family is off, None when one cannot be told,
    and row['forwarding_families'] gives each family's answer ({'ipv4': bool | None, 'ipv6': ...})."""
    if facts is None:
        return
    for name, row in node_rows.items():
        if not row['exists'] or not row.get('interface') or row['path'] == PATH_NO_ADDRESS:
            continue
        answers, wanted = {}, (families or {}).get(name) or [4]
        for version in wanted:
            answers[version], why = node_forwarding(facts, name, row['interface'], version)
            if answers[version] is False:
                where = ('node-wide on %s, so also on %s' % (name, row['interface'])) if version == 6 else ('on %s' % row['interface'])
                row['problems'].append('IP forwarding is off %s (IPv%d): %s' % (where, version, why))
                if FORWARDING_OFF not in row.setdefault('blackhole_kinds', []):
                    row['blackhole_kinds'].append(FORWARDING_OFF)
                row['path'] = PATH_BROKEN
            elif answers[version] is None:
                row['notes'].append('IP forwarding (IPv%d) on %s not checked: %s' % (version, row['interface'], why))
            elif version == 6 and 4 not in wanted and _profile_problem(facts, name):
                # no IPv4 check reports the Profile's state on an IPv6-only node: say it, as it does not break IPv6
                row['notes'].append('IP forwarding (IPv6) on %s is on: %s' % (row['interface'], why))
        values = list(answers.values())
        row['forwarding'] = False if False in values else (None if None in values else True)
        row['forwarding_families'] = dict(('ipv%d' % version, value) for version, value in answers.items())
