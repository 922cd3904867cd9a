#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: vsphere_network_info
short_description: Read the networking of a vSphere cluster and the NICs of OpenShift node VMs
version_added: 0.1.0
description:
  - Reads, for one datacenter and one vSphere cluster, every ESXi host of the cluster with its standard
    switches and port groups, the distributed switches of the datacenter with their port groups, and,
    for the VMs asked for, every virtual NIC with its MAC address, adapter type and network backing.
  - VMs are chosen by name, BIOS UUID or moid, or through the OpenShift/Kubernetes nodes they back
    (the Node C(spec.providerID) is C(vsphere://<BIOS UUID>)); the node options need the Kubernetes
    connection in O(kubernetes).
  - The reads are batched, so the number of vCenter requests is the same for one VM or five hundred.
  - Read-only; this module never changes anything in vCenter or in the cluster.
requirements:
  - pyvmomi >= 9.0.0
options:
  cluster:
    description:
      - Name (or moid) of the vSphere cluster in O(datacenter) whose hosts are read.
    type: str
    required: true
  vm_names:
    description:
      - Names of VMs in O(datacenter) to report the NICs of.
      - A name shared by several VMs (in different folders) reports each of them.
    type: list
    elements: str
    default: []
  vm_uuids:
    description:
      - BIOS UUIDs (C(config.uuid), the UUID in a Node C(spec.providerID)) of VMs to report the NICs of. Case does not matter.
    type: list
    elements: str
    default: []
  vm_moids:
    description:
      - Managed object IDs (for example C(vm-42)) of VMs to report the NICs of.
    type: list
    elements: str
    default: []
  node_names:
    description:
      - Names of Kubernetes nodes whose VMs to report the NICs of, found through each node's C(spec.providerID).
      - Needs the Kubernetes connection (O(kubernetes)); mutually exclusive with O(node_selector).
    type: list
    elements: str
    default: []
  node_selector:
    description:
      - A Kubernetes label selector (for example C(node-role.kubernetes.io/worker)); the VMs of every matching node are reported.
      - Needs the Kubernetes connection (O(kubernetes)); mutually exclusive with O(node_names).
    type: str
extends_documentation_fragment:
  - ocp.egressip.vsphere_datacenter
  - ocp.egressip.vsphere_auth
  - ocp.egressip.k8s_auth.nested
  - ocp.egressip.common
  - ocp.egressip.common.read_only
notes:
  - Standard port groups are read from each host's network system (C(networkInfo)), which lists port groups
    added after the host joined the cluster.
  - A VM whose NIC is on a distributed port group reports the port group name as RV(vms[].nics[].network)
    with its C(portgroup_key) and C(switch_uuid); compare NIC backings by those two, not by name.
seealso:
  - module: ocp.egressip.egressip_info
'''

EXAMPLES = r'''
- name: Hosts, switches and port groups of a cluster
  ocp.egressip.vsphere_network_info:
    datacenter: DC1
    cluster: Cluster1
  register: vsphere_net

- name: NICs of the VMs behind the worker nodes (vCenter from VMWARE_*, cluster from K8S_AUTH_* or ~/.kube/config)
  ocp.egressip.vsphere_network_info:
    datacenter: DC1
    cluster: Cluster1
    node_selector: node-role.kubernetes.io/worker
  register: workers

- name: NICs of given VMs, connection options in the task
  ocp.egressip.vsphere_network_info:
    hostname: vcenter.example.com
    username: administrator@vsphere.local
    password: "{{ vcenter_password }}"
    datacenter: DC1
    cluster: Cluster1
    vm_names: [ocp1-worker-0]
    vm_uuids: [4237a1b2-0c1d-2e3f-4a5b-6c7d8e9f0a1b]
    node_names: [ocp1-worker-1]
    kubernetes:
      kubeconfig: /home/admin/cluster-a/kubeconfig

- name: MAC addresses of the NICs on the egress port group
  ansible.builtin.debug:
    msg: "{{ workers.vms | map(attribute='nics') | flatten | selectattr('network', 'eq', 'ocp-egress-120') | map(attribute='mac') }}"
'''

RETURN = r'''
datacenter:
  description: The datacenter read.
  returned: success
  type: dict
  contains:
    name:
      description: Datacenter name.
      type: str
      sample: DC1
    moid:
      description: Datacenter managed object ID.
      type: str
      sample: datacenter-2
cluster:
  description: The vSphere cluster read.
  returned: success
  type: dict
  contains:
    name:
      description: Cluster name.
      type: str
      sample: Cluster1
    moid:
      description: Cluster managed object ID.
      type: str
      sample: domain-c7
hosts:
  description: The ESXi hosts of the cluster, sorted by name.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: Host name as vCenter shows it.
      type: str
      sample: esxi-01.example.com
    moid:
      description: Host managed object ID.
      type: str
      sample: host-34
    connection_state:
      description: C(connected), C(disconnected) or C(notResponding).
      type: str
      sample: connected
    in_maintenance_mode:
      description: Whether the host is in maintenance mode.
      type: bool
      sample: false
    standard_switches:
      description: Standard vSwitches of the host, sorted by name.
      type: list
      elements: dict
      contains:
        name:
          description: vSwitch name.
          type: str
          sample: vSwitch1
        mtu:
          description: MTU, when vCenter reports it.
          type: int
          sample: 1500
        num_ports:
          description: Number of ports.
          type: int
          sample: 128
        uplinks:
          description: Physical NICs bridged to the vSwitch.
          type: list
          elements: str
          sample: [vmnic1]
        uplinks_down:
          description:
            - The uplinks whose link is down (the host reports no C(linkSpeed) for that physical NIC).
            - A vSwitch whose C(uplinks) is empty or all down carries nothing off the host (verify's C(blackhole_vswitch_no_uplink)).
          type: list
          elements: str
          sample: []
        portgroups:
          description: Names of the port groups on this vSwitch.
          type: list
          elements: str
          sample: [ocp-egress-120]
        security:
          description: Security policy of the vSwitch; C(null) values are not set.
          type: dict
          sample: {allow_promiscuous: false, mac_changes: false, forged_transmits: false}
    standard_portgroups:
      description: Standard port groups of the host, sorted by name.
      type: list
      elements: dict
      contains:
        name:
          description: Port group name.
          type: str
          sample: ocp-egress-120
        vswitch:
          description: vSwitch the port group is on.
          type: str
          sample: vSwitch1
        vlan_id:
          description: VLAN ID (0 none, 4095 all VLANs).
          type: int
          sample: 120
        security:
          description: Effective security policy (inherited from the vSwitch where the port group sets nothing).
          type: dict
          sample: {allow_promiscuous: false, mac_changes: false, forged_transmits: false}
distributed_switches:
  description: Distributed switches of the datacenter, sorted by name.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: Switch name.
      type: str
      sample: DSwitch1
    uuid:
      description: Switch UUID (the C(switch_uuid) of NICs on its port groups).
      type: str
      sample: 50 1c 2e 3d 4f 5a 6b 7c-8d 9e 0f 1a 2b 3c 4d 5e
    moid:
      description: Switch managed object ID.
      type: str
      sample: dvs-21
    hosts:
      description: Names of the member hosts.
      type: list
      elements: str
      sample: [esxi-01.example.com, esxi-02.example.com]
    portgroups:
      description: Port groups of the switch, sorted by name.
      type: list
      elements: dict
      contains:
        name:
          description: Port group name.
          type: str
          sample: ocp-egress-120
        key:
          description: Port group key (the C(portgroup_key) of NICs on it).
          type: str
          sample: dvportgroup-44
        moid:
          description: Port group managed object ID.
          type: str
          sample: dvportgroup-44
        num_ports:
          description: Number of ports.
          type: int
          sample: 8
        binding:
          description: Port binding, C(static), C(dynamic) or C(ephemeral); C(null) when vCenter reports none.
          type: str
          sample: static
        uplink:
          description: Whether this is the switch's uplink port group.
          type: bool
          sample: false
        config_version:
          description: Configuration version, to send with a reconfiguration.
          type: str
          sample: "3"
        vlan_type:
          description: C(vlan), C(trunk) or C(pvlan).
          type: str
          sample: vlan
        vlan_id:
          description: VLAN ID (or private VLAN ID); C(null) for a trunk.
          type: int
          sample: 120
        vlan_ranges:
          description: VLAN ranges of a trunk, for example C(0-4094).
          type: list
          elements: str
          sample: []
        security:
          description: Security policy; C(null) values are not set.
          type: dict
          sample: {allow_promiscuous: false, mac_changes: false, forged_transmits: false}
vms:
  description:
    - The VMs asked for, each once, in the order of O(vm_names), O(vm_uuids), O(vm_moids), then the nodes.
    - Empty when no VM was asked for.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: VM name.
      type: str
      sample: ocp1-worker-0
    moid:
      description: VM managed object ID.
      type: str
      sample: vm-63
    uuid:
      description: BIOS UUID (C(config.uuid)), lower case.
      type: str
      sample: 4237a1b2-0c1d-2e3f-4a5b-6c7d8e9f0a1b
    node:
      description: The Kubernetes node that selected this VM, C(null) when the VM was chosen otherwise.
      type: str
      sample: ocp1-worker-0
    host:
      description: Name of the ESXi host running the VM.
      type: str
      sample: esxi-01.example.com
    power_state:
      description: C(poweredOn), C(poweredOff) or C(suspended).
      type: str
      sample: poweredOn
    nics:
      description: Virtual NICs in device order.
      type: list
      elements: dict
      contains:
        key:
          description: Device key.
          type: int
          sample: 4000
        label:
          description: Device label; do not rely on it to identify a NIC.
          type: str
          sample: Network adapter 1
        mac:
          description: MAC address, lower case.
          type: str
          sample: 00:50:56:aa:bb:01
        adapter:
          description: Adapter type (C(vmxnet3), C(e1000e), C(e1000), ...).
          type: str
          sample: vmxnet3
        network:
          description: Name of the standard or distributed port group; C(null) for an NSX opaque network.
          type: str
          sample: VM Network
        network_moid:
          description: Managed object ID of the network or distributed port group.
          type: str
          sample: network-7
        portgroup_key:
          description: Distributed port group key; C(null) on a standard port group.
          type: str
          sample: dvportgroup-44
        switch_uuid:
          description: Distributed switch UUID; C(null) on a standard port group.
          type: str
          sample: 50 1c 2e 3d 4f 5a 6b 7c-8d 9e 0f 1a 2b 3c 4d 5e
        opaque_network_id:
          description: NSX opaque network ID, C(null) otherwise.
          type: str
          sample: null
        connected:
          description: Whether the NIC is connected now.
          type: bool
          sample: true
        start_connected:
          description: Whether the NIC connects when the VM powers on.
          type: bool
          sample: true
'''

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import k8s_nested_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import VSPHERE, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import node_vm_selectors
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vcenter import (
    find_datacenter,
    index_vms,
    missing_vms_message,
    read_cluster_network,
    read_vm_nics,
    select_vms,
)


def argument_spec():
    spec = dict(
        datacenter=dict(type='str', required=True),
        cluster=dict(type='str', required=True),
        vm_names=dict(type='list', elements='str', default=[]),
        vm_uuids=dict(type='list', elements='str', default=[]),
        vm_moids=dict(type='list', elements='str', default=[]),
        node_names=dict(type='list', elements='str', default=[]),
        node_selector=dict(type='str'),
    )
    spec.update(k8s_nested_argument_spec())
    return spec


def vm_selectors(module):
    """Selectors for the VMs asked for; reads the Nodes (one list) when nodes were asked for."""
    params = module.params
    selectors = [dict(by='name', value=value) for value in params['vm_names']]
    selectors += [dict(by='uuid', value=value) for value in params['vm_uuids']]
    selectors += [dict(by='moid', value=value) for value in params['vm_moids']]
    if params['node_names'] or params['node_selector']:
        k8s = module.k8s
        nodes = kube.list_objects(k8s, kube.NODES, label_selector=params['node_selector'])
        if params['node_selector'] and not nodes:
            module.warn('node_selector %r matches no node on %s' % (params['node_selector'], k8s.host))
        selectors += node_vm_selectors(nodes, params['node_names'] or None, k8s.host)
    return selectors


def run(module, _result=None):
    params = module.params
    selectors = vm_selectors(module)
    client = module.vsphere
    datacenter = find_datacenter(client, params['datacenter'])
    network = read_cluster_network(client, datacenter, params['cluster'])
    vms = []
    if selectors:
        index = index_vms(client, datacenter)
        selected, missing = select_vms(index, selectors)
        if missing:
            raise ModuleFailure(missing_vms_message(missing, datacenter.props.get('name'), index), reason='not_found')
        vms = read_vm_nics(client, datacenter, selected, network['portgroups_by_key'], network['host_names'])
    return dict(
        datacenter=dict(name=datacenter.props.get('name'), moid=datacenter.moid),
        cluster=network['cluster'],
        hosts=network['hosts'],
        distributed_switches=network['distributed_switches'],
        vms=vms,
    )


def main():
    module = EgressModule(
        'vsphere_network_info', connection=VSPHERE, argument_spec=argument_spec(),
        mutually_exclusive=[('node_names', 'node_selector')],
        libraries=('pyvmomi',), supports_check_mode=True,
    )
    module.run(run)


if __name__ == '__main__':
    main()
