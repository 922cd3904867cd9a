# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one vCenter reader: datacenters, clusters, hosts and their networking, networks, the VM index and the VMs' devices.

Each read costs a fixed number of vCenter calls whatever the number of hosts or VMs: one ContainerView
retrieval per object family, one retrieval by reference for details (the hosts' network systems, the VMs'
devices). Objects are found by name, moid or BIOS UUID from those reads, never one object at a time.
Preflight, verify, the drill and the vSphere modules read through here; vsphere_network_io.py holds the writes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.clients.pyvmomi import vim  # pyVmomi on first use
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vcenter_nics import read_nics

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, library_versions
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import (
    distributed_portgroup_facts,
    distributed_switch_facts,
    host_network_facts,
    names_text,
    normalize_uuid,
    not_found_message,
    security_facts,
    standard_portgroup_facts,
    vm_nics,
    DISTRIBUTED,
    STANDARD,
)

HOST_PATHS = ['name', 'configManager.networkSystem', 'runtime.connectionState', 'runtime.inMaintenanceMode']
CLUSTER_PATHS = ['name', 'host']
DVS_PATHS = ['name', 'uuid', 'config.host', 'config.uplinkPortgroup', 'summary.hostMember']
DVPG_PATHS = ['name', 'config']
NETWORK_SYSTEM_PATHS = ['networkInfo.vswitch', 'networkInfo.portgroup', 'networkInfo.pnic']
VM_INDEX_PATHS = ['name', 'config.uuid', 'config.instanceUuid']
# the reconfigure snapshots' device read (devices by key, changeVersion); the NIC facts read less (clients/vcenter_nics.py)
VM_DEVICE_PATHS = ['config.hardware.device', 'config.changeVersion', 'runtime.host', 'runtime.powerState']


def _failure(msg, **details):
    details.update(library_versions('pyvmomi'))
    return ModuleFailure(msg, **details)


def pick_one(records, wanted, kind, scope, option=None):
    """The record named (or with moid) ``wanted``; a failure naming what exists otherwise (and the option, with its fix, when given)."""
    matches = [record for record in records if wanted in (record.props.get('name'), record.moid)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        message = not_found_message(kind, wanted, scope, [record.props.get('name') for record in records])
        raise _failure('%s=%s: %s. Fix: use one of those names.' % (option, wanted, message) if option else message, reason='not_found')
    moids = ', '.join(record.moid for record in matches)
    if option:
        raise _failure('%s=%s is ambiguous in %s (%s). Fix: give the moid instead.' % (option, wanted, scope, moids), reason='ambiguous')
    raise _failure("%s name '%s' is ambiguous in %s: %s; use the moid" % (kind, wanted, scope, moids), reason='ambiguous')


def find_datacenter(client, name, option=None):
    """The datacenter record (by name or moid) or a failure listing the datacenters."""
    records = client.retrieve_view(client.content.rootFolder, [(vim.Datacenter, ['name'])], 'reading the datacenters')
    return pick_one(records, name, 'datacenter', 'vCenter %s' % client.endpoint, option)


# --- a vSphere cluster: hosts, standard and distributed networking ------------------------------------

def read_cluster_network(client, datacenter, cluster_name):
    """Hosts of one vSphere cluster with their standard networking, and the datacenter's distributed switches.

    Two reads: one ContainerView over the datacenter (clusters, hosts, distributed switches
    and port groups), then the network systems of the cluster's hosts by reference. Standard
    port groups come from ``networkInfo`` (vcsim shows port groups added later only there).
    """
    dc_name = datacenter.props.get('name')
    records = client.retrieve_view(datacenter.ref, [
        (vim.ClusterComputeResource, CLUSTER_PATHS),
        (vim.HostSystem, HOST_PATHS),
        (vim.DistributedVirtualSwitch, DVS_PATHS),
        (vim.dvs.DistributedVirtualPortgroup, DVPG_PATHS),
    ], 'reading clusters, hosts and distributed switches of datacenter %s' % dc_name)
    clusters = [r for r in records if isinstance(r.ref, vim.ClusterComputeResource)]
    hosts = [r for r in records if isinstance(r.ref, vim.HostSystem)]
    switches = [r for r in records if isinstance(r.ref, vim.DistributedVirtualSwitch)]
    portgroups = [r for r in records if isinstance(r.ref, vim.dvs.DistributedVirtualPortgroup)]

    cluster = pick_one(clusters, cluster_name, 'vSphere cluster', 'datacenter %s' % dc_name)
    host_names = dict((host.moid, host.props.get('name')) for host in hosts)
    cluster_host_moids = [ref._moId for ref in cluster.props.get('host') or []]  # pylint: disable=protected-access
    cluster_hosts = [host for host in hosts if host.moid in cluster_host_moids]

    network_refs = [host.props['configManager.networkSystem'] for host in cluster_hosts if host.props.get('configManager.networkSystem') is not None]
    network_info = dict((record.moid, record.props) for record in client.retrieve_objects(
        network_refs, vim.host.NetworkSystem, NETWORK_SYSTEM_PATHS,
        'reading the network configuration of the hosts of cluster %s' % cluster.props.get('name')))

    switch_facts, portgroups_by_key = _switch_facts(switches, portgroups, host_names)
    return dict(
        cluster=dict(name=cluster.props.get('name'), moid=cluster.moid),
        hosts=_host_facts(cluster_hosts, network_info),
        distributed_switches=switch_facts,
        portgroups_by_key=portgroups_by_key,
        host_names=host_names,
    )


def _host_facts(cluster_hosts, network_info):
    """Each host's standard networking and uplink state, sorted by name."""
    host_facts = []
    for host in sorted(cluster_hosts, key=lambda record: record.props.get('name') or ''):
        network_system = host.props.get('configManager.networkSystem')
        info = network_info.get(getattr(network_system, '_moId', None), {})
        facts = host_network_facts(
            host.props.get('name'), host.moid,
            info.get('networkInfo.vswitch'), info.get('networkInfo.portgroup'),
            connection_state=host.props.get('runtime.connectionState'),
            in_maintenance_mode=host.props.get('runtime.inMaintenanceMode'),
        )
        add_uplink_state(facts, info.get('networkInfo.pnic'))
        host_facts.append(facts)
    return host_facts


def _switch_facts(switches, portgroups, host_names):
    """(facts of each distributed switch with its port groups, {port group key: name}), sorted by switch name."""
    portgroups_by_key = {}
    switch_facts = []
    for switch in sorted(switches, key=lambda record: record.props.get('name') or ''):
        uplink_moids = set(ref._moId for ref in switch.props.get('config.uplinkPortgroup') or [])  # pylint: disable=protected-access
        own = []
        for portgroup in portgroups:
            config = portgroup.props.get('config')
            if config is None or getattr(config.distributedVirtualSwitch, '_moId', None) != switch.moid:
                continue
            own.append(distributed_portgroup_facts(portgroup.moid, config, uplink_moids))
            portgroups_by_key[config.key] = config.name
        member_moids = _dvs_member_moids(switch.props)
        switch_facts.append(distributed_switch_facts(
            switch.props.get('name'), switch.props.get('uuid'), switch.moid, own,
            [host_names.get(moid, moid) for moid in member_moids]))
    return switch_facts, portgroups_by_key


def add_uplink_state(host_facts, pnics):
    """Each standard switch gets ``uplinks_down``: its uplinks whose physical NIC reports no ``linkSpeed`` (link down).

    ``PhysicalNic.linkSpeed`` unset means the link is down (vSphere API). A host that reports no physical NIC
    leaves the list empty: nothing is claimed about links vCenter did not show.
    """
    down = set(getattr(pnic, 'device', None) for pnic in pnics or [] if getattr(pnic, 'linkSpeed', None) is None)
    for switch in host_facts['standard_switches']:
        switch['uplinks_down'] = [device for device in switch['uplinks'] if device in down]
    return host_facts


def _dvs_member_moids(props):
    """Member hosts of a distributed switch, from config.host (vCenter) or summary.hostMember (vcsim)."""
    moids = set()
    for member in props.get('config.host') or []:
        host = getattr(getattr(member, 'config', None), 'host', None)
        if getattr(host, '_moId', None):
            moids.add(host._moId)  # pylint: disable=protected-access
    for member in props.get('summary.hostMember') or []:
        if getattr(member, '_moId', None):
            moids.add(member._moId)  # pylint: disable=protected-access
    return sorted(moids)


def read_hosts(client, datacenter, cluster=None, host_names=None):
    """The hosts to place a standard port group on, each with its vSwitches and port groups.

    Two reads: clusters and hosts of the datacenter (one view), then the hosts' network
    systems by reference. Port groups come from ``networkInfo`` (what vCenter and vcsim agree on).
    Returns [{'name', 'moid', 'network_system', 'vswitches', 'portgroups': {name: view}, 'specs': {name: raw spec}}].
    """
    dc_name = datacenter.props['name']
    records = client.retrieve_view(datacenter.ref, [(vim.ClusterComputeResource, ['name', 'host']),
                                                    (vim.HostSystem, ['name', 'configManager.networkSystem'])],
                                   'reading the clusters and hosts of datacenter %s' % dc_name)
    hosts = [record for record in records if isinstance(record.ref, vim.HostSystem)]
    if cluster:
        clusters = [record for record in records if isinstance(record.ref, vim.ClusterComputeResource)]
        members = set(ref._moId for ref in pick_one(clusters, cluster, 'vSphere cluster', 'datacenter %s' % dc_name,  # pylint: disable=protected-access
                                                    'cluster').props.get('host') or [])
        hosts = [record for record in hosts if record.moid in members]
    if host_names:
        scope = 'cluster %s' % cluster if cluster else 'datacenter %s' % dc_name
        hosts = [pick_one(hosts, name, 'host', scope, 'hosts') for name in host_names]
    systems = [host.props['configManager.networkSystem'] for host in hosts]
    info = dict((record.moid, record.props) for record in client.retrieve_objects(
        systems, vim.host.NetworkSystem, ['networkInfo.vswitch', 'networkInfo.portgroup'],
        'reading the network configuration of %d host(s)' % len(systems)))
    return [_host_network(host, info.get(host.props['configManager.networkSystem']._moId, {}))  # pylint: disable=protected-access
            for host in sorted(hosts, key=lambda record: record.props['name'])]


def _host_network(host, info):
    portgroups, specs = {}, {}
    for portgroup in info.get('networkInfo.portgroup') or []:
        facts = standard_portgroup_facts(portgroup)
        portgroups[facts['name']] = standard_view(facts)
        specs[facts['name']] = portgroup.spec
    return {'name': host.props['name'], 'moid': host.moid, 'network_system': host.props['configManager.networkSystem'],
            'vswitches': sorted(vswitch.name for vswitch in info.get('networkInfo.vswitch') or []),
            'portgroups': portgroups, 'specs': specs}


def security_view(security):
    facts = security_facts(security)
    return {'promiscuous': facts['allow_promiscuous'], 'mac_changes': facts['mac_changes'], 'forged_transmits': facts['forged_transmits']}


def standard_view(facts):
    view = {'vswitch': facts['vswitch'], 'vlan_id': facts['vlan_id']}
    view.update({'promiscuous': facts['security']['allow_promiscuous'], 'mac_changes': facts['security']['mac_changes'],
                 'forged_transmits': facts['security']['forged_transmits']})
    return view


# --- networks of a datacenter (standard networks and distributed port groups) -----------------------

def read_networks(client, datacenter):
    """Every network of the datacenter in one read, distributed port groups with their switch.

    Returns [{'type': standard|distributed|opaque, 'name', 'moid', 'ref', ...}]; distributed ones
    also carry 'portgroup_key', 'switch', 'switch_uuid', 'switch_ref', 'uplink' and the raw 'config'.
    """
    records = client.retrieve_view(datacenter.ref, [(vim.Network, ['name']),
                                                    (vim.dvs.DistributedVirtualPortgroup, ['name', 'config']),
                                                    (vim.DistributedVirtualSwitch, ['name', 'uuid'])],
                                   'reading the networks of datacenter %s' % datacenter.props['name'])
    switches = dict((record.moid, record) for record in records if isinstance(record.ref, vim.DistributedVirtualSwitch))
    networks = []
    for record in records:
        if isinstance(record.ref, vim.DistributedVirtualSwitch):
            continue
        network = {'type': STANDARD, 'name': record.props.get('name'), 'moid': record.moid, 'ref': record.ref}
        if isinstance(record.ref, vim.dvs.DistributedVirtualPortgroup):
            config = record.props['config']
            switch = switches.get(config.distributedVirtualSwitch._moId)  # pylint: disable=protected-access
            network.update(type=DISTRIBUTED, portgroup_key=config.key, config=config, uplink=bool(getattr(config, 'uplink', False)),
                           switch=switch.props['name'] if switch else None, switch_uuid=switch.props['uuid'] if switch else None,
                           switch_ref=switch.ref if switch else None)
        elif isinstance(record.ref, vim.OpaqueNetwork):
            network['type'] = 'opaque'
        networks.append(network)
    return networks


def switch_records(networks):
    """{name: ref} of the distributed switches that own at least one port group."""
    return dict((network['switch'], network['switch_ref']) for network in networks if network.get('switch'))


# --- VMs --------------------------------------------------------------------------------------------------

def index_vms(client, datacenter):
    """Name, moid, BIOS and instance UUID of every VM of the datacenter, in one read: ``[{name, moid, uuid, instance_uuid, ref}]``."""
    records = client.retrieve_view(datacenter.ref, [(vim.VirtualMachine, VM_INDEX_PATHS)],
                                   'reading the VM index of datacenter %s' % datacenter.props.get('name'))
    return [{'name': record.props.get('name'), 'moid': record.moid, 'ref': record.ref,
             'uuid': normalize_uuid(record.props.get('config.uuid')) or None,
             'instance_uuid': normalize_uuid(record.props.get('config.instanceUuid')) or None} for record in records]


def _vm_details(client, vms, scope=''):
    """{moid: props} of VM_DEVICE_PATHS for the given VMs, in one read."""
    records = client.retrieve_objects([vm['ref'] for vm in vms], vim.VirtualMachine, VM_DEVICE_PATHS,
                                      'reading the devices of %d VM(s)%s' % (len(vms), scope))
    return dict((record.moid, record.props) for record in records)


def select_vms(vms, selectors):
    """Match selectors against a VM index (pure).

    ``selectors`` are dicts ``{'by': 'name'|'uuid'|'moid', 'value': str, 'node': str or None}``.
    Returns ``(selected, missing)``: the matching VMs in selector order, each once, with the
    ``node`` of the selector that found it; and the selectors that matched nothing. A name may
    match several VMs (names are unique per folder only): all are returned.
    """
    selected = []
    seen = {}
    missing = []
    index = {}   # (by, value) -> the VMs with it, in index order: one pass over the VMs, not one per selector
    for vm in vms:
        for by in ('name', 'moid', 'uuid'):
            if by != 'uuid' or vm['uuid']:
                index.setdefault((by, vm[by]), []).append(vm)
    for selector in selectors:
        by, value = selector['by'], selector['value']
        matches = index.get((by, normalize_uuid(value) if by == 'uuid' else value), [])
        if not matches:
            missing.append(selector)
        for vm in matches:
            if vm['moid'] in seen:
                if selector.get('node') and not seen[vm['moid']].get('node'):
                    seen[vm['moid']]['node'] = selector['node']
                continue
            entry = dict(vm, node=selector.get('node'))
            seen[vm['moid']] = entry
            selected.append(entry)
    return selected, missing


def missing_vms_message(missing, datacenter_name, vms):
    """One message for every selector that found no VM, listing the VMs that exist."""
    parts = []
    for selector in missing:
        text = "%s '%s'" % ({'name': 'name', 'uuid': 'BIOS UUID', 'moid': 'moid'}[selector['by']], selector['value'])
        if selector.get('node'):
            text += " (node %s)" % selector['node']
        parts.append(text)
    return 'No VM in datacenter %s with %s; VMs there: %s' % (datacenter_name, ', '.join(parts), names_text(vm['name'] for vm in vms))


def read_vm_nics(client, datacenter, vms, portgroups_by_key, host_names):
    """NICs, host and power state of the given VMs in one read that parses only the NICs (clients/vcenter_nics.py);
    returns VM facts with their NICs."""
    details = read_nics(client, vms, 'reading the devices of %d VM(s) in datacenter %s' % (len(vms), datacenter.props.get('name')),
                        portgroups_by_key)
    result = []
    for vm in vms:
        facts = details.get(vm['moid'], {})
        result.append(dict(
            name=vm['name'],
            moid=vm['moid'],
            uuid=vm['uuid'],
            node=vm.get('node'),
            host=host_names.get(facts.get('host')) if facts.get('host') is not None else None,
            power_state=facts.get('power_state'),
            nics=facts.get('nics') or [],
        ))
    return result


def read_vm_devices(client, vms, networks):
    """Devices and power state of the given VMs in one read: the VM snapshots the plans take.

    Each snapshot keeps its raw devices by key ('devices') for edit and remove specs.
    """
    portgroups_by_key = dict((network['portgroup_key'], network['name']) for network in networks if network['type'] == DISTRIBUTED)
    details = _vm_details(client, vms)
    snapshots = []
    for vm in vms:
        if vm['moid'] not in details:
            continue  # deleted since the index was read
        devices = details[vm['moid']].get('config.hardware.device') or []
        snapshot = dict(vm, power_state=details[vm['moid']].get('runtime.powerState'), nics=vm_nics(devices, portgroups_by_key),
                        devices=dict((device.key, device) for device in devices),
                        change_version=details[vm['moid']].get('config.changeVersion') or None)
        snapshots.append(snapshot)
    return snapshots


def read_privileges(client, wanted, entities):
    """Ask vCenter (AuthorizationManager.HasPrivilegeOnEntities, for this session) about each privilege on each entity.

    entities: {'datacenter'|'host'|'vm': [(name, managed object)]}. Returns {'user', 'missing': [{'privilege', 'kind', 'entity'}]}.
    """
    content = client.content
    manager = content.sessionManager
    # one RetrievePropertiesEx, as every read of the collection (a property access would be a Fetch call)
    records = client.retrieve_objects([manager], type(manager), ['currentSession'], 'reading the current session')
    session = records[0].props.get('currentSession') if records else None
    missing = []
    for kind, privileges in sorted(wanted.items()):
        named = entities.get(kind) or []
        if not named or not privileges:
            continue
        names = dict((ref._moId, name) for name, ref in named)  # pylint: disable=protected-access
        answers = client.call('HasPrivilegeOnEntities', 'checking the privileges of the session on the %s(s)' % kind,
                              content.authorizationManager.HasPrivilegeOnEntities, entity=[ref for _name, ref in named],
                              sessionId=getattr(session, 'key', None), privId=list(privileges))
        for answer in answers or []:
            for availability in answer.privAvailability or []:
                if not availability.isGranted:
                    missing.append({'privilege': availability.privId, 'kind': kind, 'entity': names.get(answer.entity._moId, answer.entity._moId)})
    return {'user': getattr(session, 'userName', None), 'missing': missing}
