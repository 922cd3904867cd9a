"""Test arrangement for the EgressIP module tests: egress-capable nodes made by hand.

What the vSphere and node steps of the collection do, done here with plain pyVmomi and the
kubernetes client so the EgressIP tests do not depend on those modules: a vmxnet3 NIC on the
node VM, one NodeNetworkConfigurationPolicy per node matching the NIC by MAC with a static
base address, the `k8s.ovn.org/egress-assignable` label, then a wait until the twin's
ovnkube-node shows the address in `k8s.ovn.org/host-cidrs`.
"""

import json

from kubernetes.client.exceptions import ApiException
from pyVim.task import WaitForTask
from pyVmomi import vim

CIDR = '10.20.0.0/24'
GATEWAY = '10.20.0.1'
NETWORK = {'cidr': CIDR, 'gateway': GATEWAY, 'node_address_range': '10.20.0.10-10.20.0.99'}
LABEL = 'k8s.ovn.org/egress-assignable'
NNCP = dict(group='nmstate.io', version='v1', plural='nodenetworkconfigurationpolicies')
EGRESSIPS = dict(group='k8s.ovn.org', version='v1', plural='egressips')


def workers(twin):
    return sorted(vm['name'] for vm in twin.vcsim_state['vms'] if vm['role'] == 'worker')


def _vm(twin, name):
    content = twin.vsphere().RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
    try:
        return next(vm for vm in view.view if vm.name == name)
    finally:
        view.DestroyView()


def add_nic(twin, node, network='VM Network', wait_state=True):
    """Hot-add one vmxnet3 NIC to the node's VM; returns its MAC as the inventory shows it.

    wait_state=False returns at once, before the node's NodeNetworkState lists the NIC (as a module run right after
    the vCenter change meets it on a cluster)."""
    before = set(nic['mac'] for nic in _inventory_vm(twin, node)['nics'])
    backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=network)
    nic = vim.vm.device.VirtualVmxnet3(key=-101, backing=backing,
                                       connectable=vim.vm.device.VirtualDevice.ConnectInfo(connected=True, startConnected=True))
    WaitForTask(_vm(twin, node).ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[
        vim.vm.device.VirtualDeviceSpec(operation='add', device=nic)])))
    mac = next(nic['mac'] for nic in _inventory_vm(twin, node)['nics'] if nic['mac'] not in before)
    if wait_state:
        wait_for_nns_interface(twin, node, mac)
    return mac


def wait_for_nns_interface(twin, node, mac, timeout=30):
    """As on a cluster, the node's NodeNetworkState lists a new NIC a moment after it appears (the twin's NMState
    simulation notices it on its next round): wait for it, so a module run next sees what a later run would.
    No NodeNetworkState for the node (a twin without NMState): nothing to wait for."""
    def seen():
        try:
            nns = twin.custom_objects().get_cluster_custom_object('nmstate.io', 'v1beta1', 'nodenetworkstates', node)
        except ApiException as exc:
            if exc.status == 404:
                return True
            raise
        interfaces = ((nns.get('status') or {}).get('currentState') or {}).get('interfaces') or []
        return any((item.get('mac-address') or '').lower() == mac.lower() for item in interfaces)
    twin.wait_for(seen, timeout=timeout, what='NodeNetworkState of %s listing the NIC %s' % (node, mac))


def _inventory_vm(twin, node):
    return next(vm for vm in twin.inventory()['vms'] if vm['name'] == node)


def kernel_name(twin, node, mac):
    """The NIC's kernel name as the node's NodeNetworkState reports it (waiting until it lists the MAC)."""
    wait_for_nns_interface(twin, node, mac)
    nns = twin.custom_objects().get_cluster_custom_object('nmstate.io', 'v1beta1', 'nodenetworkstates', node)
    return next(item['name'] for item in nns['status']['currentState']['interfaces'] if (item.get('mac-address') or '').lower() == mac.lower())


def address_policy(twin, node, mac, address, prefix=24, gateway=GATEWAY, route_metric=200):
    """One NMState policy per node as the node step writes it: the NIC found by MAC, a static base address, and the
    default route via the gateway naming the NIC's kernel name (read from NodeNetworkState: older nmstate cannot
    resolve a profile name there). Without that route ovnkube-node sends on-link and the wire drops the traffic."""
    route = {'destination': '0.0.0.0/0', 'next-hop-address': gateway, 'next-hop-interface': kernel_name(twin, node, mac),
             'metric': route_metric, 'table-id': 254}
    body = {'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy',
            'metadata': {'name': 'test-egress-%s' % node},
            'spec': {'nodeSelector': {'kubernetes.io/hostname': node},
                     'desiredState': {'interfaces': [{
                         'name': 'egress0', 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address', 'mac-address': mac.upper(),
                         'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': address, 'prefix-length': prefix}]}}],
                         'routes': {'config': [route]}}}}
    twin.custom_objects().create_cluster_custom_object(body=body, **NNCP)


def label(twin, node, present=True, recorded=True):
    """As egress_nodes labels a node: the label and, beside it, the record that this collection set it
    (recorded=False: a label set by hand, without the record)."""
    record = 'ocp.egressip' if present and recorded else None
    twin.core_v1().patch_node(node, {'metadata': {'labels': {LABEL: '' if present else None},
                                                  'annotations': {'egressip.ocp/egress-assignable': record}}})


def host_cidrs(twin, node):
    annotations = twin.core_v1().read_node(node).metadata.annotations or {}
    return json.loads(annotations.get('k8s.ovn.org/host-cidrs') or '[]')


def make_capable(twin, nodes, first_host=11, labelled=True):
    """Give each node a secondary NIC with 10.20.0.<first_host + i>/24, label it, wait for host-cidrs."""
    wanted = {}
    for index, node in enumerate(nodes):
        address = '10.20.0.%d' % (first_host + index)
        address_policy(twin, node, add_nic(twin, node), address)
        if labelled:
            label(twin, node)
        wanted[node] = '%s/24' % address
    twin.wait_for(lambda: all(wanted[node] in host_cidrs(twin, node) for node in nodes), timeout=30,
                  what='host-cidrs of %s to show their secondary address' % ', '.join(nodes))
    return wanted


def egressip(twin, name):
    try:
        return twin.custom_objects().get_cluster_custom_object(name=name, **EGRESSIPS)
    except Exception:  # pylint: disable=broad-except  # ApiException 404: absent
        return None


def assignments(twin, name):
    """{egress IP: node} from the object's status."""
    return dict((item['egressIP'], item['node']) for item in ((egressip(twin, name) or {}).get('status') or {}).get('items') or [])


def create_by_hand(twin, name, ips, labels=None):
    body = {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': name, 'labels': labels or {}},
            'spec': {'egressIPs': list(ips), 'namespaceSelector': {'matchLabels': {'team': name}}}}
    return twin.custom_objects().create_cluster_custom_object(body=body, **EGRESSIPS)


def delete_by_hand(twin, name):
    twin.custom_objects().delete_cluster_custom_object(name=name, **EGRESSIPS)


def writes(twin):
    return [request for request in twin.kube_requests()['requests']
            if request['verb'] in ('create', 'update', 'patch', 'delete') and not request['dry_run'] and 200 <= request['code'] < 300]
