# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Batched snapshot reads of the vSphere inventory the collection works on.

Each reader costs a fixed number of vCenter calls whatever the number of hosts or VMs:
one ContainerView read per object family, one read by reference for details. Objects are
found by name, moid or BIOS UUID from those reads, never one object at a time.
Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    from pyVmomi import vim
except ImportError:
    pass  # VsphereModule reports the missing library before any reader runs

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, library_versions
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import (
    distributed_portgroup_facts,
    distributed_switch_facts,
    host_network_facts,
    names_text,
    normalize_uuid,
    not_found_message,
    vm_nics,
)

HOST_PATHS = ['name', 'configManager.networkSystem', 'runtime.connectionState', 'runtime.inMaintenanceMode']
CLUSTER_PATHS = ['name', 'host']
DVS_PATHS = ['name', 'uuid', 'config.host', 'config.uplinkPortgroup', 'summary.hostMember']
DVPG_PATHS = ['name', 'config']
NETWORK_SYSTEM_PATHS = ['networkInfo.vswitch', 'networkInfo.portgroup', 'networkInfo.pnic']
VM_INDEX_PATHS = ['name', 'config.uuid']
VM_DETAIL_PATHS = ['config.hardware.device', 'runtime.host', 'runtime.powerState']


def _failure(msg, **details):
    details.update(library_versions('pyvmomi'))
    return ModuleFailure(msg, **details)


def _pick_one(records, wanted, kind, scope):
    """The record named (or with moid) ``wanted``; a failure naming what exists otherwise."""
    matches = [record for record in records if wanted in (record.props.get('name'), record.moid)]
    if not matches:
        raise _failure(not_found_message(kind, wanted, scope, [record.props.get('name') for record in records]), reason='not_found')
    if len(matches) > 1:
        raise _failure("%s name '%s' is ambiguous in %s: %s; use the moid" % (kind, wanted, scope, ', '.join(record.moid for record in matches)),
                       reason='ambiguous')
    return matches[0]


def find_datacenter(client, name):
    """The datacenter record (by name or moid) or a failure listing the datacenters."""
    records = client.retrieve_view(client.content.rootFolder, [(vim.Datacenter, ['name'])], 'reading the datacenters')
    return _pick_one(records, name, 'datacenter', 'vCenter %s' % client.endpoint)


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

    cluster = _pick_one(clusters, cluster_name, 'vSphere cluster', 'datacenter %s' % dc_name)
    host_names = dict((host.moid, host.props.get('name')) for host in hosts)
    cluster_host_moids = [ref._moId for ref in cluster.props.get('host') or []]  # pylint: disable=protected-access
    cluster_hosts = [host for host in hosts if host.moid in cluster_host_moids]

    network_refs = [host.props['configManager.networkSystem'] for host in cluster_hosts if host.props.get('configManager.networkSystem') is not None]
    network_info = dict((record.moid, record.props) for record in client.retrieve_objects(
        network_refs, vim.host.NetworkSystem, NETWORK_SYSTEM_PATHS,
        'reading the network configuration of the hosts of cluster %s' % cluster.props.get('name')))

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

    return dict(
        cluster=dict(name=cluster.props.get('name'), moid=cluster.moid),
        hosts=host_facts,
        distributed_switches=switch_facts,
        portgroups_by_key=portgroups_by_key,
        host_names=host_names,
    )


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


def index_vms(client, datacenter):
    """Name, moid and BIOS UUID of every VM in the datacenter, in one read: ``[{name, moid, uuid, ref}]``."""
    records = client.retrieve_view(datacenter.ref, [(vim.VirtualMachine, VM_INDEX_PATHS)],
                                   'reading the VM index of datacenter %s' % datacenter.props.get('name'))
    return [dict(name=r.props.get('name'), moid=r.moid, uuid=normalize_uuid(r.props.get('config.uuid')) or None, ref=r.ref) for r in records]


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
    for selector in selectors:
        by, value = selector['by'], selector['value']
        if by == 'uuid':
            matches = [vm for vm in vms if vm['uuid'] and vm['uuid'] == normalize_uuid(value)]
        else:
            matches = [vm for vm in vms if vm[by] == value]
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
    """Devices, host and power state of the given VMs in one read; returns VM facts with their NICs."""
    records = client.retrieve_objects([vm['ref'] for vm in vms], vim.VirtualMachine, VM_DETAIL_PATHS,
                                      'reading the devices of %d VM(s) in datacenter %s' % (len(vms), datacenter.props.get('name')))
    details = dict((record.moid, record.props) for record in records)
    result = []
    for vm in vms:
        props = details.get(vm['moid'], {})
        host = props.get('runtime.host')
        result.append(dict(
            name=vm['name'],
            moid=vm['moid'],
            uuid=vm['uuid'],
            node=vm.get('node'),
            host=host_names.get(getattr(host, '_moId', None)) if host is not None else None,
            power_state=props.get('runtime.powerState'),
            nics=vm_nics(props.get('config.hardware.device'), portgroups_by_key),
        ))
    return result
