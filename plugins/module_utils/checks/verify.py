# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verification of egress IPs on the secondary network: one snapshot in, findings and per-IP rows out.

Pure code: no I/O. DOMAIN.md sections 3, 4, 6, 7 and 9. For every egress IP of the verified
EgressIP objects:

1. it is assigned (``status.items``) to a node that exists and whose ``host-cidrs`` hold its
   network (``_placement.assignment_gaps``: what OVN-Kubernetes itself requires);
2. that node is still Ready and egress-assignable (otherwise OVN-K is about to move it);
3. for a secondary-network IP, the node's secondary path works: its VM is powered on, has a
   vNIC backed by the egress port group, the vNIC is connected, a standard port group exists
   on the ESXi host the VM runs on **now** (DRS/vMotion may have moved it) with the network's VLAN,
   its standard vSwitch there has a physical uplink whose link is up, and the node holds
   its base address on that NIC, up (NodeNetworkState, through ``_node_network.node_capability``);
4. optionally, the wire: an echo target off the cluster saw an IP of the object as the source
   of a probe pod's traffic.

An IP that passes 1 and 2 but fails 3 is a **blackhole**: OVN-K keeps it where it is (its
reachability probe runs over the primary network), and its traffic is dropped. Remediation
removes the ``k8s.ovn.org/egress-assignable`` label of the broken nodes so OVN-K moves the IPs,
but only when ``_placement`` predicts that every moved IP still has a node to go to.
The wire's pure parts are in checks/wire.py, the remediation plan in checks/remediation.py.

Snapshot (``build_snapshot``, from one list per kind and one batched vCenter read)::

    {'nodes': [Node], 'egressips': [EgressIP], 'placement': _placement.snapshot of both,
     'nns': {node name: NodeNetworkState} or None (not read),
     'vsphere': None (not read) or vsphere_facts(...) of the preflight vCenter read:
         {'portgroup': name, 'switch_type': 'standard'|'distributed', 'switch': name,
          'network': {'type', 'name', 'portgroup_key', 'switch_uuid'} or None (not found),
          'hosts': {ESXi host name of the vSphere cluster: [standard port group names]},
          'portgroup_uplinks': {ESXi host name: {'vswitch', 'uplinks': [vmnic], 'down': [vmnic]}} of the port group's vSwitch,
          'switch_hosts': [member hosts of the distributed switch] or None,
          'vms': {node name: {'name', 'moid', 'host', 'power_state', 'nics': [nic facts]}},
          'findings': [findings of the vCenter read: port group missing, node without VM]}}

Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING, errors, summarize
from ansible_collections.ocp.egressip.plugins.module_utils.plan.node_network import TUNED_NAMESPACE, interface_addresses, interface_by_mac
from ansible_collections.ocp.egressip.plugins.module_utils.plan.forwarding import (
    cluster_ip_forwarding,
    forwarding_in_profile,
    sysctl_interface,
)
from ansible_collections.ocp.egressip.plugins.module_utils.plan.egress_labels import in_network, node_capability
from ansible_collections.ocp.egressip.plugins.module_utils.plan.vsphere_network import nic_on_network

# Row status, worst first: the first problem found decides it.
OK = 'ok'
UNASSIGNED = 'unassigned'
NODE_MISSING = 'node_missing'
NODE_LACKS_NETWORK = 'node_lacks_network'
UNHEALTHY_NODE = 'unhealthy_node'
BLACKHOLE = 'blackhole'
WIRE_FAILED = 'wire_failed'
UNKNOWN = 'path_not_checked'

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

def _node_index(nodes):
    return dict(((node.get('metadata') or {}).get('name'), node) for node in nodes)


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


def vsphere_path(node_name, vsphere):
    """What vCenter says about a node's secondary path: {'vm', 'esxi_host', 'power_state', 'nic', 'problems', 'notes', 'checked'}."""
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
    """With network.gateway given: the NIC needs a route via that gateway in NodeNetworkState (else on-link ARP, dropped)."""
    if not gateway or not row.get('interface') or row['address'] is None:
        return
    routes = (((nns or {}).get('status') or {}).get('currentState') or {}).get('routes') or {}
    for route in (routes.get('config') or []) + (routes.get('running') or []):
        if route.get('next-hop-interface') == row['interface'] and _placement.normal_ip(route.get('next-hop-address')) == \
                _placement.normal_ip(gateway):
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


def node_forwarding(facts, node_name, interface):
    """(True | False | None, why) for IPv4 forwarding on a node's NIC: Global, else the profile TuneD reports applied
    (Profile status) and whether its text in the Tuned objects sets forwarding on that interface. None: cannot tell."""
    if facts['global']:
        return True, 'gatewayConfig.ipForwarding is Global'
    profile = facts['profiles'].get(node_name)
    if profile is None:
        return None, 'node %s has no Profile in %s' % (node_name, TUNED_NAMESPACE)
    status = profile.get('status') or {}
    running = status.get('tunedProfile')
    conditions = dict((item.get('type'), item) for item in status.get('conditions') or [])
    if (conditions.get('Degraded') or {}).get('status') == 'True':
        return False, 'Profile %s is Degraded (TuneD running %s): %s' % (node_name, running, conditions['Degraded'].get('message'))
    if (conditions.get('Applied') or {}).get('status') != 'True':
        return False, 'TuneD has not applied profile %s on node %s (Applied: %s)' % (
            running, node_name, (conditions.get('Applied') or {}).get('message') or 'not reported')
    if forwarding_in_profile(running, facts['tuneds'], interface):
        return True, 'Tuned profile %s' % running
    return False, ('gatewayConfig.ipForwarding is not Global and profile %s, which TuneD runs on node %s, does not set '
                   'net.ipv4.conf.%s.forwarding=1' % (running, node_name, sysctl_interface(interface)))


def apply_forwarding(facts, node_rows):
    """Forwarding off on the secondary NIC breaks the node's path (the kernel drops the egress IP's traffic): a blackhole kind."""
    if facts is None:
        return
    for name, row in node_rows.items():
        if not row['exists'] or not row.get('interface') or row['path'] == PATH_NO_ADDRESS:
            continue
        row['forwarding'], why = node_forwarding(facts, name, row['interface'])
        if row['forwarding'] is False:
            row['problems'].append('IP forwarding is off on %s: %s' % (row['interface'], why))
            row.setdefault('blackhole_kinds', []).append(FORWARDING_OFF)
            row['path'] = PATH_BROKEN
        elif row['forwarding'] is None:
            row['notes'].append('IP forwarding on %s not checked: %s' % (row['interface'], why))


# --- per IP ---------------------------------------------------------------------------------------

def build_snapshot(nodes, egressips, nns=None, vsphere=None, owner_label=None):
    """The verify snapshot from the API lists (and the optional NodeNetworkStates and vCenter facts)."""
    return {'nodes': list(nodes), 'egressips': list(egressips), 'nns': nns, 'vsphere': vsphere,
            'placement': _placement.snapshot(nodes, egressips, owner_label=owner_label)}


def _wanted_objects(snapshot, names):
    if names is None:
        return sorted(snapshot['placement']['egressips'])
    return [name for name in names if name in snapshot['placement']['egressips']]


def _row(name, ip, node, snap):
    network = _placement.holds_network(snap, node, ip) if node else None
    if network is None and not node:
        network = _cluster_network(snap, ip)
    return {'egressip': name, 'ip': ip, 'node': node, 'network': network, 'status': OK, 'problems': [], 'wire': None}


def _cluster_network(snap, ip):
    kinds = set(_placement.holds_network(snap, name, ip) for name in snap['nodes'])
    for kind in ('primary', 'secondary'):
        if kind in kinds:
            return kind
    return None


def _subnet_of(node, ip):
    classification = _egress_network.classify_ip(ip, _egress_network.node_networks_from_node(node))
    return str(classification.subnet) if classification.network == _egress_network.SECONDARY else None


def evaluate(snapshot, cidr=None, names=None, expected=None, gateway=None):
    """Verify every egress IP of the objects named (all when None) against the snapshot.

    cidr: the secondary network (str) or None (then each node is checked for the subnets of the
    IPs it hosts). expected: {object name: [IPs]} from the variables file, or None. gateway: the secondary
    network's router; given, each NIC must have a route via it in NodeNetworkState.
    Returns {'egress_ips': [row], 'nodes': [row], 'findings': [finding], 'broken_nodes': [names]}.
    """
    nodes = _node_index(snapshot['nodes'])
    snap = snapshot['placement']
    wanted = _wanted_objects(snapshot, names)
    findings = _missing_objects(snap, names, expected)
    gaps = dict(((gap['egressip'], gap['ip']), gap) for gap in _placement.assignment_gaps(snap, wanted, str(cidr) if cidr else None))
    rows = []
    for name in wanted:
        entry = snap['egressips'][name]
        status = dict((_placement.normal_ip(item.get('egressIP')), item.get('node')) for item in entry['status'])
        for raw in entry['egress_ips']:
            ip = _placement.normal_ip(raw) or raw
            row = _row(name, ip, status.get(ip), snap)
            if (name, ip) in gaps:
                row['status'] = gaps[(name, ip)]['problem']
            rows.append(row)
    node_names = sorted(set([row['node'] for row in rows if row['node']] + [node for node, item in snap['nodes'].items() if item['labelled']]))
    node_rows = {}
    for node_name in node_names:
        node = nodes.get(node_name)
        subnets = [str(cidr)] if cidr else sorted(set(
            subnet for subnet in (_subnet_of(node, row['ip']) for row in rows if row['node'] == node_name and node is not None) if subnet))
        node_rows[node_name] = node_path(node_name, node, snapshot, subnets, gateway)
    apply_forwarding(snapshot.get('forwarding'), node_rows)
    for row in rows:
        if row['node'] in node_rows:
            node_rows[row['node']]['egress_ips'].append(row['ip'])
        _judge(row, node_rows.get(row['node']), snap)
    findings += _row_findings(rows, node_rows)
    broken = sorted(name for name, row in node_rows.items() if row['exists'] and row['labelled'] and row['path'] == PATH_BROKEN)
    findings += _broken_idle_findings(node_rows, broken)
    findings += blackhole_kind_findings(node_rows)
    findings += _vsphere_findings(snapshot, node_rows)
    findings += resilience_findings(snap, wanted)
    return {'egress_ips': rows, 'nodes': [node_rows[name] for name in node_names], 'findings': findings, 'broken_nodes': broken}


def resilience_findings(snap, names):
    """A warning per egress node whose failure may leave an IP of the verified objects unassigned (the prediction's view)."""
    findings = []
    for point in _placement.single_points_of_failure(_placement.what_if_all(snap, 'unlabel')):
        gaps = [gap for gap in point['ips'] if gap['egressip'] in names]
        if not gaps:
            continue
        findings.append(catalogue_finding(
            'egressip_single_point_of_failure', 'If node %s fails, %s.' % (point['node'], '; '.join(
                '%s %s %s unassigned' % (gap['egressip'], gap['ip'], 'stays' if gap['certain'] else 'may stay') for gap in gaps)),
            objects=[{'kind': 'Node', 'name': point['node']}] + [{'kind': 'EgressIP', 'name': name}
                                                                 for name in sorted(set(gap['egressip'] for gap in gaps))]))
    return findings


def _judge(row, node_row, snap):
    if row['status'] != OK:
        row['problems'].append(_gap_text(row))
        return
    node = snap['nodes'][row['node']]
    if not (node['labelled'] and node['ready']):
        row['status'] = UNHEALTHY_NODE
        row['problems'].append('node %s is %s' % (row['node'], ' and '.join(
            word for word, bad in (('not Ready', not node['ready']), ('not egress-assignable', not node['labelled'])) if bad)))
        return
    if row['network'] != 'secondary':
        return  # a primary-network egress IP rides br-ex: the secondary path does not matter
    if node_row['path'] == PATH_BROKEN:
        row['status'] = BLACKHOLE
        row['problems'] += node_row['problems']
    elif node_row['path'] == PATH_UNKNOWN:
        row['status'] = UNKNOWN


def _gap_text(row):
    if row['status'] == UNASSIGNED:
        return '%s is not assigned to any node' % row['ip']
    if row['status'] == NODE_MISSING:
        return '%s is assigned to node %s, which does not exist' % (row['ip'], row['node'])
    return "%s is assigned to node %s, whose host-cidrs do not hold its network" % (row['ip'], row['node'])


def _objects(row, node_row=None):
    objects = [{'kind': 'EgressIP', 'name': row['egressip']}]
    if row['node']:
        objects.append({'kind': 'Node', 'name': row['node']})
    if node_row and node_row.get('vm'):
        objects.append({'kind': 'VirtualMachine', 'name': node_row['vm']})
    return objects


def _row_findings(rows, node_rows):
    findings = []
    for row in rows:
        subject = 'EgressIP %s: %s' % (row['egressip'], row['ip'])
        node_row = node_rows.get(row['node'])
        if row['status'] in (UNASSIGNED, NODE_MISSING, NODE_LACKS_NETWORK):
            findings.append(catalogue_finding('egressip_unassigned', 'EgressIP %s: %s.' % (row['egressip'], row['problems'][0]),
                                              objects=_objects(row)))
        elif row['status'] == UNHEALTHY_NODE:
            findings.append(catalogue_finding('egressip_on_unhealthy_node', '%s is on %s.' % (subject, row['problems'][0]),
                                              objects=_objects(row)))
        elif row['status'] == BLACKHOLE:
            findings.append(catalogue_finding('egressip_blackhole', '%s is assigned to node %s, but its secondary path is broken: %s.'
                                              % (subject, row['node'], '; '.join(row['problems'])), objects=_objects(row, node_row)))
    return findings


def _broken_idle_findings(node_rows, broken):
    findings = []
    for name in broken:
        row = node_rows[name]
        if row['egress_ips']:
            continue
        objects = [{'kind': 'Node', 'name': name}] + ([{'kind': 'VirtualMachine', 'name': row['vm']}] if row['vm'] else [])
        findings.append(catalogue_finding('egressip_node_path_broken', 'node %s is egress-assignable but its secondary path is broken: %s.'
                                          % (name, '; '.join(row['problems'])), objects=objects))
    return findings


def blackhole_kind_findings(node_rows):
    """One finding per node and blackhole kind (error when the node hosts IPs, else warning); capacity losses as warnings."""
    findings = []
    for name, row in sorted(node_rows.items()):
        objects = [{'kind': 'Node', 'name': name}] + ([{'kind': 'VirtualMachine', 'name': row['vm']}] if row['vm'] else [])
        if row['path'] == PATH_NO_ADDRESS and row['labelled']:
            findings.append(catalogue_finding('egressip_node_capacity_lost', 'node %s: its vNIC %s is disconnected and NetworkManager '
                                              'removed its address, so OVN-Kubernetes places no egress IP there (%s).'
                                              % (name, (row['nic'] or {}).get('mac'), row['notes'][-1]), objects=objects))
        if not (row['labelled'] or row['egress_ips']):
            continue
        hosting = ', hosting %s' % ', '.join(row['egress_ips']) if row['egress_ips'] else ' (no egress IP yet)'
        for kind in sorted(set(row['blackhole_kinds'])):
            findings.append(catalogue_finding(kind, 'node %s%s: %s.' % (name, hosting, '; '.join(row['problems'])), objects=objects,
                                              severity=None if row['egress_ips'] else WARNING))
    return findings


def _vsphere_findings(snapshot, node_rows):
    """The vCenter read's own findings (port group missing...), and node-without-VM only for nodes that matter here."""
    vsphere = snapshot.get('vsphere')
    if vsphere is None:
        return []
    findings = []
    for item in vsphere.get('findings') or []:
        nodes = [obj.get('name') for obj in item.get('objects') or [] if obj.get('kind') == 'Node']
        if nodes and not any(name in node_rows for name in nodes):
            continue
        findings.append(item)
    return findings


def _missing_objects(snap, names, expected):
    findings = []
    for name in names or []:
        if name not in snap['egressips']:
            findings.append(catalogue_finding('egressip_object_missing', 'EgressIP %s does not exist in the cluster.' % name,
                                              objects=[{'kind': 'EgressIP', 'name': name}]))
    for name, ips in sorted((expected or {}).items()):
        entry = snap['egressips'].get(name)
        if entry is None or not ips:
            continue
        have = set(_placement.normal_ip(ip) or ip for ip in entry['egress_ips'])
        lacking = [ip for ip in (_placement.normal_ip(ip) or ip for ip in ips) if ip not in have]
        if lacking:
            findings.append(catalogue_finding('egressip_object_missing', 'EgressIP %s lacks %s in spec.egressIPs (it has %s).'
                                              % (name, ', '.join(lacking), ', '.join(sorted(have)) or 'none'),
                                              objects=[{'kind': 'EgressIP', 'name': name}]))
    return findings


# --- summary and report ------------------------------------------------------------------------------

def summary(result):
    rows = result['egress_ips']
    counts = summarize(result['findings'])
    counted = {'ok': not errors(result['findings']), 'egress_ips': len(rows), 'assigned': len([row for row in rows if row['node']]),
               'healthy': len([row for row in rows if row['status'] == OK]),
               'blackholed': len([row for row in rows if row['status'] == BLACKHOLE]),
               'errors': counts[ERROR], 'warnings': counts[WARNING], 'info': counts[INFO]}
    if 'wire' in result:  # the wire probe's own API writes (pods, namespaces): a changed=0 run is not a 0-write run
        counted['wire_writes'] = sum(probe.get('writes') or 0 for probe in result['wire'])
    return counted


def report(result, network=None, portgroup=None, remediation=None, initial=None):
    """The verify report (kind ``verify``) for _report: JSON as is, Markdown through render_markdown."""
    # probe pod names are random: left out so that an unchanged cluster gives an unchanged report
    wire = [dict((key, value) for key, value in probe.items() if key != 'pod') for probe in result['wire']] if 'wire' in result else None
    findings = [dict(item, objects=[obj for obj in item['objects'] if obj.get('kind') != 'Pod']) for item in result['findings']]
    return {'kind': 'verify', 'summary': summary(result), 'network': {'cidr': str(network) if network else None, 'portgroup': portgroup},
            'egress_ips': result['egress_ips'], 'nodes': result['nodes'], 'findings': findings,
            'wire': wire, 'remediation': remediation, 'initial': initial}
