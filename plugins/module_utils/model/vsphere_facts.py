# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure conversions of vSphere data objects into plain facts, and node/VM matching.

No I/O and no pyVmomi import: the functions read attributes of the data objects the
PropertyCollector returned (or of any object shaped like them, as in the unit tests).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure

# WSDL name of the virtual NIC class -> adapter type as users and vmware.vmware name it.
ADAPTER_TYPES = {
    'VirtualVmxnet3': 'vmxnet3',
    'VirtualVmxnet3Vrdma': 'vmxnet3vrdma',
    'VirtualVmxnet2': 'vmxnet2',
    'VirtualVmxnet': 'vmxnet',
    'VirtualE1000e': 'e1000e',
    'VirtualE1000': 'e1000',
    'VirtualPCNet32': 'pcnet32',
    'VirtualSriovEthernetCard': 'sriov',
}

# The network types the vCenter reader reports and the plans compare.
STANDARD = 'standard'
DISTRIBUTED = 'distributed'

# DistributedVirtualPortgroup config.type -> port binding as the vSphere Client names it.
PORT_BINDINGS = {
    'earlyBinding': 'static',
    'lateBinding': 'dynamic',
    'ephemeral': 'ephemeral',
}

_PROVIDER_ID = re.compile(r'^vsphere://(?P<uuid>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})/?$')

# How many names a "not found" message lists before it says "and N more".
MAX_NAMES_IN_MESSAGE = 20


def _wsdl_name(data_object):
    return getattr(data_object, '_wsdlName', None) or type(data_object).__name__


def vm_uuid_from_provider_id(provider_id):
    """The VM BIOS UUID (lower case) in a Node ``spec.providerID`` ``vsphere://<uuid>``, else None."""
    match = _PROVIDER_ID.match((provider_id or '').strip())
    return match.group('uuid').lower() if match else None


def normalize_uuid(uuid):
    """BIOS UUIDs compare case-insensitively."""
    return (uuid or '').strip().lower()


def is_ethernet_card(device):
    """True for virtual NICs (every VirtualEthernetCard has a macAddress property)."""
    try:
        getattr(device, 'macAddress')
    except AttributeError:
        return False
    return True


def adapter_type(device):
    """``vmxnet3``, ``e1000e``, ... for a virtual NIC."""
    name = _wsdl_name(device)
    return ADAPTER_TYPES.get(name, name[len('Virtual'):].lower() if name.startswith('Virtual') else name.lower())


def nic_facts(device, portgroups_by_key=None):
    """One virtual NIC as a plain dict.

    ``portgroups_by_key`` maps a distributed port group key to its name, so a NIC on a
    distributed port group reports the port group's name as ``network``.
    """
    backing = getattr(device, 'backing', None)
    connectable = getattr(device, 'connectable', None)
    device_info = getattr(device, 'deviceInfo', None)
    facts = dict(
        key=getattr(device, 'key', None),
        label=getattr(device_info, 'label', None),
        mac=(getattr(device, 'macAddress', None) or '').lower() or None,
        adapter=adapter_type(device),
        network=None,
        network_moid=None,
        portgroup_key=None,
        switch_uuid=None,
        opaque_network_id=None,
        connected=bool(getattr(connectable, 'connected', False)),
        start_connected=bool(getattr(connectable, 'startConnected', False)),
    )
    port = getattr(backing, 'port', None)
    if port is not None:
        facts['portgroup_key'] = getattr(port, 'portgroupKey', None)
        facts['switch_uuid'] = getattr(port, 'switchUuid', None)
        facts['network'] = (portgroups_by_key or {}).get(facts['portgroup_key'])
        facts['network_moid'] = facts['portgroup_key'] if facts['portgroup_key'] in (portgroups_by_key or {}) else None
    elif getattr(backing, 'opaqueNetworkId', None):
        facts['opaque_network_id'] = backing.opaqueNetworkId
    elif backing is not None:
        facts['network'] = getattr(backing, 'deviceName', None)
        network = getattr(backing, 'network', None)
        facts['network_moid'] = _moid(network)
    return facts


def vm_nics(devices, portgroups_by_key=None):
    """Every virtual NIC of a VM's ``config.hardware.device`` list, in device order."""
    return [nic_facts(device, portgroups_by_key) for device in devices or [] if is_ethernet_card(device)]


def _moid(ref):
    if ref is None:
        return None
    return getattr(ref, '_moId', None)


def vlan_facts(vlan):
    """VLAN of a distributed port group: ``vlan_type`` (vlan/trunk/pvlan), ``vlan_id``, ``vlan_ranges``."""
    if vlan is None:
        return dict(vlan_type=None, vlan_id=None, vlan_ranges=[])
    pvlan_id = getattr(vlan, 'pvlanId', None)
    if pvlan_id is not None:
        return dict(vlan_type='pvlan', vlan_id=pvlan_id, vlan_ranges=[])
    vlan_id = getattr(vlan, 'vlanId', None)
    if isinstance(vlan_id, int):
        return dict(vlan_type='vlan', vlan_id=vlan_id, vlan_ranges=[])
    ranges = ['%s-%s' % (item.start, item.end) if item.start != item.end else str(item.start) for item in vlan_id or []]
    return dict(vlan_type='trunk', vlan_id=None, vlan_ranges=ranges)


def _bool_policy(policy):
    """A DVS BoolPolicy's value, or a plain bool as standard switches have it."""
    if policy is None or isinstance(policy, bool):
        return policy
    return getattr(policy, 'value', None)


def security_facts(security):
    """Security policy as ``allow_promiscuous``, ``mac_changes``, ``forged_transmits`` (None = not set)."""
    return dict(
        allow_promiscuous=_bool_policy(getattr(security, 'allowPromiscuous', None)),
        mac_changes=_bool_policy(getattr(security, 'macChanges', None)),
        forged_transmits=_bool_policy(getattr(security, 'forgedTransmits', None)),
    )


def standard_switch_facts(vswitch, portgroup_names):
    """A host's standard vSwitch (from ``networkInfo.vswitch``) and the names of its port groups."""
    spec = getattr(vswitch, 'spec', None)
    bridge = getattr(spec, 'bridge', None)
    return dict(
        name=vswitch.name,
        mtu=getattr(vswitch, 'mtu', None),
        num_ports=getattr(vswitch, 'numPorts', None),
        uplinks=list(getattr(bridge, 'nicDevice', None) or []),
        portgroups=sorted(portgroup_names),
        security=security_facts(getattr(getattr(spec, 'policy', None), 'security', None)),
    )


def standard_portgroup_facts(portgroup):
    """A host's standard port group (from ``networkInfo.portgroup``).

    The effective security policy comes from ``computedPolicy`` (what the host applies,
    inherited from the vSwitch where the port group sets nothing).
    """
    spec = portgroup.spec
    policy = getattr(portgroup, 'computedPolicy', None) or getattr(spec, 'policy', None)
    return dict(
        name=spec.name,
        vswitch=spec.vswitchName,
        vlan_id=spec.vlanId,
        security=security_facts(getattr(policy, 'security', None)),
    )


def host_network_facts(name, moid, vswitches, portgroups, connection_state=None, in_maintenance_mode=None):
    """One ESXi host with its standard switches and port groups (names sorted)."""
    portgroup_facts = sorted((standard_portgroup_facts(pg) for pg in portgroups or []), key=lambda pg: pg['name'])
    switches = []
    for vswitch in sorted(vswitches or [], key=lambda item: item.name):
        names = [pg['name'] for pg in portgroup_facts if pg['vswitch'] == vswitch.name]
        switches.append(standard_switch_facts(vswitch, names))
    return dict(
        name=name,
        moid=moid,
        connection_state=connection_state,
        in_maintenance_mode=in_maintenance_mode,
        standard_switches=switches,
        standard_portgroups=portgroup_facts,
    )


def distributed_portgroup_facts(moid, config, uplink_moids=()):
    """A distributed port group from its ``config``."""
    port_config = getattr(config, 'defaultPortConfig', None)
    facts = dict(
        name=config.name,
        key=config.key,
        moid=moid,
        num_ports=getattr(config, 'numPorts', None),
        binding=PORT_BINDINGS.get(getattr(config, 'type', None) or '', getattr(config, 'type', None) or None),
        uplink=bool(getattr(config, 'uplink', None)) or moid in uplink_moids,
        config_version=getattr(config, 'configVersion', None),
        security=security_facts(getattr(port_config, 'securityPolicy', None)),
    )
    facts.update(vlan_facts(getattr(port_config, 'vlan', None)))
    return facts


def distributed_switch_facts(name, uuid, moid, portgroups, host_names):
    """A distributed switch with its port groups (sorted by name) and member hosts."""
    return dict(
        name=name,
        uuid=uuid,
        moid=moid,
        hosts=sorted(host_names),
        portgroups=sorted(portgroups, key=lambda pg: pg['name']),
    )


def names_text(names, limit=MAX_NAMES_IN_MESSAGE):
    """``a, b, c`` or ``a, b, ... (and 480 more)`` or ``none`` for a failure message."""
    names = sorted(set(names))
    if not names:
        return 'none'
    text = ', '.join(names[:limit])
    if len(names) > limit:
        text += ', ... (and %d more)' % (len(names) - limit)
    return text


def not_found_message(kind, wanted, scope, existing):
    """``<kind> 'x' not found in <scope>; <kind>s there: a, b``."""
    if isinstance(wanted, (list, tuple)):
        wanted_text = ', '.join("'%s'" % item for item in wanted)
        plural = len(wanted) > 1
    else:
        wanted_text = "'%s'" % wanted
        plural = False
    return "%s %s not found in %s; %s there: %s" % (kind + ('s' if plural else ''), wanted_text, scope, kind + 's', names_text(existing))


def node_vm_selectors(nodes, names, api_host):
    """VM selectors (``{'by': 'uuid', 'value', 'node'}``) for Kubernetes nodes, through ``spec.providerID``.

    ``nodes`` are Node dicts as the API returns them; ``names`` restricts to those nodes (all
    nodes when None). Raises ModuleFailure naming unknown nodes, and nodes that are not vSphere VMs.
    """
    by_name = dict(((node.get('metadata') or {}).get('name'), node) for node in nodes)
    wanted = list(names) if names is not None else sorted(by_name)
    unknown = [name for name in wanted if name not in by_name]
    if unknown:
        raise ModuleFailure(not_found_message('node', unknown if len(unknown) > 1 else unknown[0], 'the Kubernetes API %s' % api_host, by_name),
                            reason='not_found')
    selectors = []
    not_vsphere = []
    for name in wanted:
        provider_id = (by_name[name].get('spec') or {}).get('providerID')
        uuid = vm_uuid_from_provider_id(provider_id)
        if uuid is None:
            not_vsphere.append("%s (spec.providerID %r)" % (name, provider_id))
        else:
            selectors.append(dict(by='uuid', value=uuid, node=name))
    if not_vsphere:
        raise ModuleFailure('Node(s) without a vSphere providerID (vsphere://<BIOS UUID>), so no VM can be found for them: %s'
                            % ', '.join(not_vsphere), reason='not_vsphere')
    return selectors
