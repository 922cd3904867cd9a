"""What ovn-kubernetes test/e2e/egressip.go does to a cluster, done to the twin through its APIs.

The e2e suite labels nodes, writes EgressIP objects, waits for `status.items` (verifyEgressIPStatusLengthEquals:
poll until the length, and a verifier, hold), stops the kubelet or drops the health-check port, and curls an
external container from pods to see the source address. Here: the kubernetes client against the twin's API,
the twin-only reachability switch for the dropped port, Node status written as the kubelet's absence leaves it,
and the twin's echo pods (a pod curling the echo target off the cluster logs the source address it saw).
Nothing here imports the collection.
"""

import ipaddress
import json

from pyVim.task import WaitForTask
from pyVmomi import vim

LABEL = 'k8s.ovn.org/egress-assignable'
EGRESSIPS = dict(group='k8s.ovn.org', version='v1', plural='egressips')
NNCP = dict(group='nmstate.io', version='v1', plural='nodenetworkconfigurationpolicies')
NETWORK_OPERATOR = dict(group='operator.openshift.io', version='v1', plural='networks')
ECHO_URL = 'http://192.0.2.10:8080'
PORTGROUP = 'ocp-egress'
SECONDARY_HOST_EGRESS_IPS = 'k8s.ovn.org/secondary-host-egress-ips'
TIMEOUT = 20.0


def workers(twin):
    return sorted(vm['name'] for vm in twin.vcsim_state['vms'] if vm['role'] == 'worker')


def node_ip(twin, node):
    return next(a.address for a in twin.core_v1().read_node(node).status.addresses if a.type == 'InternalIP')


def label(twin, node, present=True):
    """labelNodeForEgress / unlabelNodeForEgress (e2e.AddOrUpdateLabelOnNode with the value "dummy")."""
    twin.core_v1().patch_node(node, {'metadata': {'labels': {LABEL: 'dummy' if present else None}}})


def set_ready(twin, node, ready):
    """setNodeReady: the kubelet stopped (NotReady) or started again, as the node lifecycle controller reports it."""
    condition = {'type': 'Ready', 'status': 'True' if ready else 'False',
                 'reason': 'KubeletReady' if ready else 'KubeletNotReady',
                 'message': 'kubelet is posting ready status' if ready else 'Kubelet stopped posting node status.'}
    twin.core_v1().patch_node_status(node, {'status': {'conditions': [condition]}})


def namespace(twin, name):
    """The e2e framework's namespace, labelled name=<namespace> as the EgressIP's namespaceSelector expects."""
    twin.core_v1().create_namespace({'metadata': {'name': name, 'labels': {'name': name}}})


def create_egressip(twin, name, ips, ns, wants='egress'):
    body = {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': name},
            'spec': {'egressIPs': list(ips), 'podSelector': {'matchLabels': {'wants': wants}},
                     'namespaceSelector': {'matchLabels': {'name': ns}}}}
    return twin.custom_objects().create_cluster_custom_object(body=body, **EGRESSIPS)


def set_egress_ips(twin, name, ips):
    twin.custom_objects().patch_cluster_custom_object(name=name, body={'spec': {'egressIPs': list(ips)}}, **EGRESSIPS)


def delete_egressip(twin, name):
    twin.custom_objects().delete_cluster_custom_object(name=name, **EGRESSIPS)


def statuses(twin, name):
    """getSpecificEgressIPStatusItems: [(egressIP, node)], sorted."""
    egressip = twin.custom_objects().get_cluster_custom_object(name=name, **EGRESSIPS)
    return sorted((item['egressIP'], item['node']) for item in (egressip.get('status') or {}).get('items') or [])


def wait_status(twin, name, length, verifier=None, timeout=TIMEOUT):
    """verifySpecificEgressIPStatusLengthEquals: poll until the status has `length` items (and the verifier holds)."""
    seen = []

    def done():
        seen[:] = statuses(twin, name)
        return len(seen) == length and (verifier is None or verifier(seen))
    try:
        twin.wait_for(done, timeout=timeout, what='EgressIP %s to have %d status items' % (name, length))
    except AssertionError as error:
        raise AssertionError('%s; last seen: %s' % (error, seen)) from None
    return list(seen)


def hold_status(twin, name, expected, seconds=2.0):
    """The status stays as it is for a while (the e2e's "remains assigned"): at least two probe ticks of the twin."""
    try:
        twin.wait_for(lambda: statuses(twin, name) != expected, timeout=seconds, interval=0.1)
    except AssertionError:
        return
    raise AssertionError('EgressIP %s status changed from %s to %s' % (name, expected, statuses(twin, name)))


def echo_source(twin, ns, pod, node, wants='egress'):
    """targetExternalContainerAndTest: a pod on `node` curls the echo target; returns the source address it saw (None: timed out)."""
    body = {'metadata': {'name': pod, 'labels': {'wants': wants}},
            'spec': {'nodeName': node, 'restartPolicy': 'Never',
                     'containers': [{'name': 'curl', 'image': 'registry.example/curl', 'command': ['curl', '-s', ECHO_URL]}]}}
    api = twin.core_v1()
    api.create_namespaced_pod(ns, body)
    try:
        phase = twin.wait_for(lambda: api.read_namespaced_pod(pod, ns).status.phase in ('Succeeded', 'Failed')
                              and api.read_namespaced_pod(pod, ns).status.phase, timeout=TIMEOUT, what='echo pod %s to finish' % pod)
        log = api.read_namespaced_pod_log(pod, ns)
    finally:
        api.delete_namespaced_pod(pod, ns)
    return log.strip() if phase == 'Succeeded' else None


def events(twin, name, reason):
    """Warning events the cluster manager recorded for the EgressIP (ObjectReference without namespace: `default`)."""
    listed = twin.core_v1().list_namespaced_event('default', field_selector='involvedObject.name=%s,reason=%s' % (name, reason))
    return [event.message for event in listed.items if event.type == 'Warning']


def node_annotation(twin, node, key):
    return (twin.core_v1().read_node(node).metadata.annotations or {}).get(key)


# --- the secondary host network: a NIC per node on a port group, its base address by NMState ----------------------------

def _objects(twin, kind):
    content = twin.vsphere().RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [kind], True)
    try:
        return list(view.view)
    finally:
        view.DestroyView()


def add_portgroup(twin):
    """The secondary network's standard port group on vSwitch1 of every host (the kind node's second docker network)."""
    for host in _objects(twin, vim.HostSystem):
        spec = vim.host.PortGroup.Specification(name=PORTGROUP, vlanId=0, vswitchName='vSwitch1', policy=vim.host.NetworkPolicy())
        host.configManager.networkSystem.AddPortGroup(portgrp=spec)


def add_nic(twin, node):
    """Hot-add a connected vmxnet3 NIC on the port group to the node's VM; returns its MAC."""
    def macs():
        return [nic['mac'] for vm in twin.inventory()['vms'] if vm['name'] == node for nic in vm['nics']]
    before = set(macs())
    vm = next(item for item in _objects(twin, vim.VirtualMachine) if item.name == node)
    nic = vim.vm.device.VirtualVmxnet3(key=-101, backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=PORTGROUP),
                                       connectable=vim.vm.device.VirtualDevice.ConnectInfo(connected=True, startConnected=True))
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=nic)])))
    return next(mac for mac in macs() if mac not in before)


def host_cidrs(twin, node):
    return json.loads(node_annotation(twin, node, 'k8s.ovn.org/host-cidrs') or '[]')


def kernel_name(twin, node, mac):
    """The NIC's kernel name once the node's NodeNetworkState lists it (older nmstate needs it in routes)."""
    def listed():
        try:
            nns = twin.custom_objects().get_cluster_custom_object('nmstate.io', 'v1beta1', 'nodenetworkstates', node)
        except Exception:  # pylint: disable=broad-except  # 404 before the handler reported the node
            return None
        interfaces = ((nns.get('status') or {}).get('currentState') or {}).get('interfaces') or []
        return next((item['name'] for item in interfaces if (item.get('mac-address') or '').lower() == mac.lower()), None)
    twin.wait_for(lambda: listed() is not None, timeout=30, what='NodeNetworkState of %s listing the NIC %s' % (node, mac))
    return listed()


def secondary_network(twin, addresses):
    """{node: 'a.b.c.d/prefix'}: a NIC on the port group, NMState gives it that base address; IP forwarding Global.

    Waits until ovnkube-node lists every address in the node's host-cidrs (what the kind setup's `ip addr add` gives)."""
    add_portgroup(twin)
    twin.custom_objects().patch_cluster_custom_object(
        name='cluster', body={'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': 'Global'}}}}},
        **NETWORK_OPERATOR)
    for node, cidr in addresses.items():
        address, prefix = cidr.split('/')
        mac = add_nic(twin, node)
        interface = {'name': 'egress0', 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address', 'mac-address': mac.upper(),
                     'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': address, 'prefix-length': int(prefix)}]}}
        # the echo target is off the subnet (kind's is on its docker network): the route via the subnet's gateway reaches it
        gateway = str(next(ipaddress.ip_interface(cidr).network.hosts()))
        route = {'destination': '0.0.0.0/0', 'next-hop-address': gateway, 'next-hop-interface': kernel_name(twin, node, mac),
                 'metric': 200, 'table-id': 254}
        twin.custom_objects().create_cluster_custom_object(body={
            'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy', 'metadata': {'name': 'e2e-%s' % node},
            'spec': {'nodeSelector': {'kubernetes.io/hostname': node},
                     'desiredState': {'interfaces': [interface], 'routes': {'config': [route]}}}}, **NNCP)
    twin.wait_for(lambda: all(cidr in host_cidrs(twin, node) for node, cidr in addresses.items()), timeout=40,
                  what='host-cidrs to list the secondary addresses %s' % addresses)


def power(twin, node, on):
    """Power the node's VM off or on in vCenter (a node reboot as the hypervisor sees it)."""
    vm = next(item for item in _objects(twin, vim.VirtualMachine) if item.name == node)
    WaitForTask(vm.PowerOnVM_Task() if on else vm.PowerOffVM_Task())
