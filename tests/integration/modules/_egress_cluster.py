"""Test arrangement for verify and the failover drill: an egress-ready twin cluster made by hand.

What the enable flow does, done here with plain pyVmomi and the kubernetes client so these
tests do not depend on the other steps' modules: the standard port group `ocp-egress-120`
(VLAN 120) on vSwitch1 of every host, one vmxnet3 NIC per worker VM on it, one NMState policy
per worker (NIC by MAC, static base address), IP forwarding (gatewayConfig.ipForwarding
Global), the egress-assignable label, an EgressIP and a namespace it selects. Then a wait until
the twin's cluster manager has assigned every IP. Also the failures the tests inject: NIC
disconnected, port group removed from a host and the VM moved there, Node Ready=False.
"""

import json

from pyVim.task import WaitForTask
from pyVmomi import vim

import _vsphere_objects as vo

CIDR = '10.20.0.0/24'
NETWORK = {'cidr': CIDR, 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99', 'route_metric': 200}
PORTGROUP = {'name': 'ocp-egress-120', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120}
DISTRIBUTED_PORTGROUP = {'name': 'ocp-egress-dpg', 'switch_type': 'distributed', 'switch': 'DSwitch1', 'vlan_id': 120}
LABEL = 'k8s.ovn.org/egress-assignable'
MANAGED = {'egressip.ocp/managed-by': 'ocp.egressip'}
ECHO_TARGET = '192.0.2.10:8080'
NNCP = dict(group='nmstate.io', version='v1', plural='nodenetworkconfigurationpolicies')
EGRESSIPS = dict(group='k8s.ovn.org', version='v1', plural='egressips')
NETWORK_OPERATOR = dict(group='operator.openshift.io', version='v1', plural='networks')


def workers(twin):
    return sorted(vm['name'] for vm in twin.vcsim_state['vms'] if vm['role'] == 'worker')


def vsphere_options(twin, portgroup=None):
    """The module options that point verify at the twin's vCenter (credentials come from VMWARE_*)."""
    return {'datacenter': twin.vcsim_state['datacenter'], 'cluster': twin.vcsim_state['cluster'], 'portgroup': dict(portgroup or PORTGROUP),
            'vsphere': {'validate_certs': False}}


inventory_vm = vo.inventory_vm


def vm_object(twin, name):
    return vo.find(twin, vim.VirtualMachine, name)


def host_object(twin, name):
    return vo.find(twin, vim.HostSystem, name)


def add_portgroup(twin, hosts=None):
    """The standard port group on vSwitch1 of the given hosts (default: every host)."""
    for host in vo.objects(twin, vim.HostSystem):
        if hosts is not None and host.name not in hosts:
            continue
        spec = vim.host.PortGroup.Specification(name=PORTGROUP['name'], vlanId=PORTGROUP['vlan_id'], vswitchName=PORTGROUP['switch'],
                                                policy=vim.host.NetworkPolicy())
        host.configManager.networkSystem.AddPortGroup(portgrp=spec)


def add_distributed_portgroup(twin):
    """The distributed port group on DSwitch1 (every host of the cluster is a member); returns it with its key and switch UUID."""
    return vo.add_distributed_portgroup(twin, DISTRIBUTED_PORTGROUP['name'], vlan=DISTRIBUTED_PORTGROUP['vlan_id'],
                                        switch=DISTRIBUTED_PORTGROUP['switch'])


def remove_portgroup(twin, host_name):
    host_object(twin, host_name).configManager.networkSystem.RemovePortGroup(pgName=PORTGROUP['name'])


def add_nic(twin, node, distributed=None):
    """Hot-add one vmxnet3 NIC on the egress port group (or the distributed one: {key, switch_uuid}) to the node's VM; returns its MAC."""
    before = set(nic['mac'] for nic in inventory_vm(twin, node)['nics'])
    if distributed:
        backing = vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
            port=vim.dvs.PortConnection(portgroupKey=distributed['key'], switchUuid=distributed['switch_uuid']))
    else:
        network = vo.find(twin, vim.Network, PORTGROUP['name'])
        backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=PORTGROUP['name'], network=network)
    nic = vim.vm.device.VirtualVmxnet3(key=-101, backing=backing,
                                       connectable=vim.vm.device.VirtualDevice.ConnectInfo(connected=True, startConnected=True))
    WaitForTask(vm_object(twin, node).ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[
        vim.vm.device.VirtualDeviceSpec(operation='add', device=nic)])))
    return next(item['mac'] for item in inventory_vm(twin, node)['nics'] if item['mac'] not in before)


def set_nic_connected(twin, node, connected):
    """Connect or disconnect the node VM's NIC on the egress port group (as an administrator would in vCenter)."""
    vm = vm_object(twin, node)
    device = next(dev for dev in vm.config.hardware.device
                  if isinstance(dev, vim.vm.device.VirtualEthernetCard) and dev.macAddress.lower() != _primary_mac(twin, node)
                  and (getattr(dev.backing, 'deviceName', None) == PORTGROUP['name'] or getattr(dev.backing, 'port', None) is not None))
    device.connectable.connected = connected
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='edit', device=device)])))


def _primary_mac(twin, node):
    return next(vm['nics'][0]['mac'] for vm in twin.vcsim_state['vms'] if vm['name'] == node).lower()


def relocate(twin, node, host_name):
    """vMotion the node VM to another host of the cluster (RelocateVM_Task)."""
    WaitForTask(vm_object(twin, node).RelocateVM_Task(vim.vm.RelocateSpec(host=host_object(twin, host_name))))


def address_policy(twin, node, mac, address, interface=None):
    """The node's NMState policy: the NIC by MAC with its base address, and (given its kernel name) the gateway route, as the node step writes them."""
    desired = {'interfaces': [{
        'name': 'egress0', 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address', 'mac-address': mac.upper(),
        'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': address, 'prefix-length': 24}]}}]}
    if interface:
        desired['routes'] = {'config': [gateway_route(interface)]}
    body = {'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy', 'metadata': {'name': 'test-egress-%s' % node},
            'spec': {'nodeSelector': {'kubernetes.io/hostname': node}, 'desiredState': desired}}
    twin.custom_objects().create_cluster_custom_object(body=body, **NNCP)


def gateway_route(interface, state=None):
    """The secondary gateway route via the NIC's kernel name (older nmstate cannot resolve a profile name there)."""
    route = {'destination': '0.0.0.0/0', 'next-hop-address': NETWORK['gateway'], 'next-hop-interface': interface,
             'metric': NETWORK['route_metric'], 'table-id': 254}
    return dict(route, state=state) if state else route


def nns_interface(twin, node, mac):
    """The node's NodeNetworkState interface with that MAC, or None (not reported yet)."""
    try:
        nns = twin.custom_objects().get_cluster_custom_object('nmstate.io', 'v1beta1', 'nodenetworkstates', node)
    except Exception:  # pylint: disable=broad-except  # 404 before the handler reported the node
        return None
    interfaces = ((nns.get('status') or {}).get('currentState') or {}).get('interfaces') or []
    return next((item for item in interfaces if (item.get('mac-address') or '').lower() == mac.lower()), None)


def kernel_names(twin, macs):
    """{node: kernel name} of the NICs {node: MAC}, once every NodeNetworkState lists them (it refreshes a moment later)."""
    twin.wait_for(lambda: all(nns_interface(twin, node, mac) for node, mac in macs.items()), timeout=30,
                  what='NodeNetworkStates listing the new NICs')
    return dict((node, nns_interface(twin, node, mac)['name']) for node, mac in macs.items())


def label(twin, node, present=True):
    # as egress_nodes labels a node: the label and, beside it, the record that this collection set it
    record = 'ocp.egressip' if present else None
    twin.core_v1().patch_node(node, {'metadata': {'labels': {LABEL: '' if present else None},
                                                  'annotations': {'egressip.ocp/egress-assignable': record}}})


def labelled(twin, node):
    return LABEL in (twin.core_v1().read_node(node).metadata.labels or {})


def set_ready(twin, node, ready):
    """Node Ready condition True/False, written to the status subresource as the kubelet does."""
    condition = {'type': 'Ready', 'status': 'True' if ready else 'False', 'reason': 'KubeletReady' if ready else 'KubeletNotReady',
                 'message': 'kubelet is posting ready status' if ready else 'container runtime is down'}
    twin.core_v1().patch_node_status(node, {'status': {'conditions': [condition]}})


def host_cidrs(twin, node):
    annotations = twin.core_v1().read_node(node).metadata.annotations or {}
    return json.loads(annotations.get('k8s.ovn.org/host-cidrs') or '[]')


def forwarding_global(twin):
    twin.custom_objects().patch_cluster_custom_object(
        name='cluster', body={'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': 'Global'}}}}},
        **NETWORK_OPERATOR)


def namespace(twin, name, labels):
    twin.core_v1().create_namespace({'metadata': {'name': name, 'labels': labels}})


def egressip(twin, name):
    return twin.custom_objects().get_cluster_custom_object(name=name, **EGRESSIPS)


def assignments(twin, name='payments'):
    """{egress IP: node} from the object's status."""
    return dict((item['egressIP'], item['node']) for item in (egressip(twin, name).get('status') or {}).get('items') or [])


def create_egressip(twin, name, ips, labels=None):
    body = {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': name, 'labels': dict(labels or {})},
            'spec': {'egressIPs': list(ips), 'namespaceSelector': {'matchLabels': {'team': name}}}}
    twin.custom_objects().create_cluster_custom_object(body=body, **EGRESSIPS)


def make_egress_cluster(twin, ips=('10.20.0.200', '10.20.0.201'), nodes=None, portgroup_hosts=True, distributed=False):
    """Port group, NICs, addresses, forwarding, labels, the EgressIP `payments` and namespace `payments`; waits for assignment.

    portgroup_hosts=False: the test has already put the port group on the hosts it wants; distributed=True: the NICs are
    on the distributed port group DISTRIBUTED_PORTGROUP instead. Returns {node: base address}.
    """
    nodes = nodes or workers(twin)
    dvs_portgroup = add_distributed_portgroup(twin) if distributed else None
    if portgroup_hosts and not distributed:
        add_portgroup(twin)
    forwarding_global(twin)
    addresses = {}
    macs = dict((node, add_nic(twin, node, dvs_portgroup)) for node in nodes)
    names = kernel_names(twin, macs)
    for index, node in enumerate(nodes):
        addresses[node] = '10.20.0.%d' % (10 + index)
        address_policy(twin, node, macs[node], addresses[node], names[node])
        label(twin, node)
    twin.wait_for(lambda: all('%s/24' % addresses[node] in host_cidrs(twin, node) for node in nodes), timeout=30,
                  what='host-cidrs of %s to show their secondary address' % ', '.join(nodes))
    namespace(twin, 'payments', {'team': 'payments'})
    create_egressip(twin, 'payments', ips, labels=MANAGED)  # as the enable flow creates it: the drill may move its IPs
    twin.wait_for(lambda: len(assignments(twin)) == len(ips), timeout=30, what='every egress IP of payments to be assigned')
    return addresses


# access and rules reviews are creates that store nothing (the playbooks' permission check sends them)
NOT_WRITTEN = ('leases.coordination.k8s.io', 'selfsubjectaccessreviews.authorization.k8s.io', 'selfsubjectrulesreviews.authorization.k8s.io')


def kube_writes(twin):
    """Successful non-dry-run writes in the emulator's request log: [(verb, resource, name)], the cluster lock's Lease left
    out (a direct call takes and releases it: fixture.lock_writes counts those) and the access reviews, which store nothing."""
    return [(request['verb'], request['resource'], request['name']) for request in twin.kube_requests()['requests']
            if request['verb'] in ('create', 'update', 'patch', 'delete', 'deletecollection') and not request['dry_run']
            and 200 <= request['code'] < 300 and request['resource'] not in NOT_WRITTEN]
