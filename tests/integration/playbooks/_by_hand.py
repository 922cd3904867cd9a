"""A twin cluster whose secondary egress network was configured by hand, without this collection.

What an administrator does with vCenter and `oc`, done with plain pyVmomi and the kubernetes client
(nothing of the collection is imported, no object carries its label):

- a standard port group `egress-vlan120` (VLAN 120) on vSwitch1 of every host;
- a vmxnet3 NIC on it for workers 0-2 (worker 3 stays an ordinary worker);
- one NMState policy per egress node, named `<node>-egress`: two by kernel name (`ens224`, as read from
  the NodeNetworkState, the way `ip link` shows it), one by MAC with the same profile name; a static base
  address 10.30.0.11-13/24 and a default route through 10.30.0.1 with metric 150;
- IP forwarding through a Tuned of its own (`egress-forwarding`, only the sysctl, recommended by the label
  `egress.example.com/gateway=true`, priority 25);
- that label on workers 0-2; the egress-assignable label on workers 0 and 1 only (worker 2 forgotten);
- with `machines=True`, each egress node's Machine lists the port group too (what an administrator does after Machine API
  reports `invalid network count`; the MachineSet template is left as it was, so replacements would lose the NIC);
- EgressIP objects `payments` (2 IPs) and `reports` (1 IP, with a pod selector) on the secondary subnet, and
  `egressip-legacy` as the OpenShift SDN migration leaves it (primary network, `kubernetes.io/metadata.name`);
- with `ipv6=True` (on a dual-stack twin) the same NICs hold fd00:30::11-13/64 too (autoconf and DHCPv6 off, a default
  route through fd00:30::1 with metric 160), the Tuned forwards IPv6 as well, and `reports` has the IPv6 egress IP
  fd00:30::210 beside its IPv4 one.
"""

import json
import os
import sys

import pytest
from pyVim.task import WaitForTask
from pyVmomi import vim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position
import _vsphere_objects as vo  # noqa: E402  pylint: disable=wrong-import-position

PORTGROUP = 'egress-vlan120'
VLAN = 120
CIDR = '10.30.0.0/24'
GATEWAY = '10.30.0.1'
METRIC = 150
EGRESS_NODES = ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
ADDRESSES = {'ocp1-worker-0': '10.30.0.11', 'ocp1-worker-1': '10.30.0.12', 'ocp1-worker-2': '10.30.0.13'}
NODE_LABEL = 'egress.example.com/gateway'
ASSIGNABLE = 'k8s.ovn.org/egress-assignable'
OBJECTS = {
    'payments': {'egressIPs': ['10.30.0.200', '10.30.0.201'], 'namespaceSelector': {'matchLabels': {'team': 'payments'}}},
    'reports': {'egressIPs': ['10.30.0.210'], 'namespaceSelector': {'matchLabels': {'team': 'reports'}},
                'podSelector': {'matchLabels': {'app': 'reports'}}},
    'egressip-legacy': {'egressIPs': ['192.168.10.250'], 'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'legacy'}}},
}
NNCP = dict(group='nmstate.io', version='v1', plural='nodenetworkconfigurationpolicies')
EGRESSIPS = dict(group='k8s.ovn.org', version='v1', plural='egressips')
NNS = dict(group='nmstate.io', version='v1beta1', plural='nodenetworkstates')
MACHINES = dict(group='machine.openshift.io', version='v1beta1', plural='machines', namespace='openshift-machine-api')
TUNED = dict(group='tuned.openshift.io', version='v1', plural='tuneds', namespace='openshift-cluster-node-tuning-operator')
FORWARDING_PROFILE = '[main]\nsummary=egress forwarding (made by hand)\ninclude=openshift-node\n\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n'
CIDR6 = 'fd00:30::/64'
GATEWAY6 = 'fd00:30::1'
METRIC6 = 160
ADDRESSES6 = {'ocp1-worker-0': 'fd00:30::11', 'ocp1-worker-1': 'fd00:30::12', 'ocp1-worker-2': 'fd00:30::13'}
IPV6_OBJECTS = {'reports': ['10.30.0.210', 'fd00:30::210']}


def add_portgroup(twin):
    for host in vo.objects(twin, vim.HostSystem):
        spec = vim.host.PortGroup.Specification(name=PORTGROUP, vlanId=VLAN, vswitchName='vSwitch1', policy=vim.host.NetworkPolicy())
        host.configManager.networkSystem.AddPortGroup(portgrp=spec)


def add_nic(twin, node):
    before = set(nic['mac'] for nic in vo.inventory_vm(twin, node)['nics'])
    network = vo.find(twin, vim.Network, PORTGROUP)
    backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=PORTGROUP, network=network)
    nic = vim.vm.device.VirtualVmxnet3(key=-101, backing=backing,
                                       connectable=vim.vm.device.VirtualDevice.ConnectInfo(connected=True, startConnected=True))
    vm = vo.find(twin, vim.VirtualMachine, node)
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=nic)])))
    return next(item['mac'] for item in vo.inventory_vm(twin, node)['nics'] if item['mac'] not in before)


def kernel_name(twin, node, mac):
    """What `ip link` shows for the NIC: its kernel name, from the node's NodeNetworkState."""
    def lookup():
        state = twin.custom_objects().get_cluster_custom_object(name=node, **NNS)
        for interface in state.get('status', {}).get('currentState', {}).get('interfaces', []):
            if (interface.get('mac-address') or '').lower() == mac.lower():
                return interface['name']
        return None
    return twin.wait_for(lookup, timeout=30, what='NIC %s of %s in its NodeNetworkState' % (mac, node))


def address_policy(twin, node, mac, interface, by_mac, ipv6=False):
    iface = {'name': interface, 'type': 'ethernet', 'state': 'up',
             'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': ADDRESSES[node], 'prefix-length': 24}]}}
    routes = [{'destination': '0.0.0.0/0', 'next-hop-address': GATEWAY, 'next-hop-interface': interface, 'metric': METRIC}]
    if ipv6:
        iface['ipv6'] = {'enabled': True, 'dhcp': False, 'autoconf': False, 'address': [{'ip': ADDRESSES6[node], 'prefix-length': 64}]}
        routes.append({'destination': '::/0', 'next-hop-address': GATEWAY6, 'next-hop-interface': interface, 'metric': METRIC6})
    if by_mac:
        iface.update({'identifier': 'mac-address', 'mac-address': mac.upper()})
    body = {'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy', 'metadata': {'name': '%s-egress' % node},
            'spec': {'nodeSelector': {'kubernetes.io/hostname': node},
                     'desiredState': {'interfaces': [iface], 'routes': {'config': routes}}}}
    twin.custom_objects().create_cluster_custom_object(body=body, **NNCP)


def forwarding_tuned(twin, ipv6=False):
    data = FORWARDING_PROFILE + ('net.ipv6.conf.ens224.forwarding=1\n' if ipv6 else '')
    body = {'apiVersion': 'tuned.openshift.io/v1', 'kind': 'Tuned', 'metadata': {'name': 'egress-forwarding'},
            'spec': {'profile': [{'name': 'egress-forwarding', 'data': data}],
                     'recommend': [{'profile': 'egress-forwarding', 'priority': 25, 'match': [{'label': NODE_LABEL, 'value': 'true'}]}]}}
    twin.custom_objects().create_namespaced_custom_object(body=body, **TUNED)


def label(twin, node, labels):
    twin.core_v1().patch_node(node, {'metadata': {'labels': labels}})


def host_cidrs(twin, node):
    annotations = twin.core_v1().read_node(node).metadata.annotations or {}
    return json.loads(annotations.get('k8s.ovn.org/host-cidrs') or '[]')


assignments = reads.assignments  # {(object, ip): node} over every EgressIP object


def all_host_cidrs(twin):
    return dict((node.metadata.name, sorted(json.loads((node.metadata.annotations or {}).get('k8s.ovn.org/host-cidrs') or '[]')))
                for node in twin.core_v1().list_node().items)


def align_machines(twin):
    """Append the port group to the providerSpec devices of each egress node's Machine (as with `oc edit machine`)."""
    for machine in twin.custom_objects().list_namespaced_custom_object(**MACHINES)['items']:
        if ((machine.get('status') or {}).get('nodeRef') or {}).get('name') not in EGRESS_NODES:
            continue
        machine['spec']['providerSpec']['value']['network']['devices'].append({'networkName': PORTGROUP})
        twin.custom_objects().replace_namespaced_custom_object(name=machine['metadata']['name'], body=machine, **MACHINES)


def migrate_vars(out, **extra):
    """The variables of playbooks/migrate.yml writing its files to the folder `out`."""
    return dict({'migrate_dest': str(out), 'migrate_acknowledge_unsupported': True}, **extra)


def adoption_rerun(twin, run_playbook, out, hand_made):
    """migrate with migrate_adopt once more, after the adoption: nothing changed, nothing written, not one egress IP moved
    from where `hand_made` (what prepare returned) saw it. Returns the run."""
    reads.reset_requests(twin)
    run = run_playbook('playbooks/migrate.yml', extra_vars=migrate_vars(out, migrate_adopt=True))
    assert run.rc == 0, run
    assert run.changed == 0, run
    reads.assert_nothing_written(twin)
    assert assignments(twin) == hand_made['assignments']
    return run


def objects(ipv6=False):
    """{name: spec} of the EgressIP objects made by hand (with `ipv6`, reports has an IPv6 egress IP too)."""
    specs = dict((name, dict(spec)) for name, spec in OBJECTS.items())
    for name, ips in (IPV6_OBJECTS.items() if ipv6 else ()):
        specs[name]['egressIPs'] = list(ips)
    return specs


def prepare(twin, machines=True, ipv6=False):
    """Configure the egress network by hand (`ipv6`: dual stack, on a dual-stack twin); once every egress IP is assigned,
    returns what a test compares after a run: {'assignments': assignments(twin), 'host_cidrs': all_host_cidrs(twin)}."""
    add_portgroup(twin)
    for index, node in enumerate(EGRESS_NODES):
        mac = add_nic(twin, node)
        address_policy(twin, node, mac, kernel_name(twin, node, mac), by_mac=index == 2, ipv6=ipv6)
        label(twin, node, {NODE_LABEL: 'true'})
    wanted = dict((node, ['%s/24' % ADDRESSES[node]] + (['%s/64' % ADDRESSES6[node]] if ipv6 else [])) for node in EGRESS_NODES)
    twin.wait_for(lambda: all(set(wanted[node]) <= set(host_cidrs(twin, node)) for node in EGRESS_NODES), timeout=30,
                  what='host-cidrs of the egress nodes to show their base address')
    forwarding_tuned(twin, ipv6)
    if machines:
        align_machines(twin)
    for node in EGRESS_NODES[:2]:
        label(twin, node, {ASSIGNABLE: ''})
    for name, labels in (('payments', {'team': 'payments'}), ('reports', {'team': 'reports'}), ('legacy', {})):
        twin.core_v1().create_namespace({'metadata': {'name': name, 'labels': labels}})
    specs = objects(ipv6)
    for name, spec in specs.items():
        twin.custom_objects().create_cluster_custom_object(
            body={'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': name}, 'spec': spec}, **EGRESSIPS)
    wanted = sum(len(spec['egressIPs']) for spec in specs.values())
    twin.wait_for(lambda: len(assignments(twin)) == wanted, timeout=30, what='every egress IP made by hand to be assigned')
    return {'assignments': assignments(twin), 'host_cidrs': all_host_cidrs(twin)}


def module_fixtures(out_name, **options):
    """The two module-scoped fixtures of an adoption test file: `hand_made` (prepare(twin, **options), once per file) and
    `out` (a folder for migrate's files, named after `out_name`). Use as ``hand_made, out = bh.module_fixtures(...)``."""
    @pytest.fixture(scope='module')
    def hand_made(twin):
        return prepare(twin, **options)

    @pytest.fixture(scope='module')
    def out(tmp_path_factory):
        return tmp_path_factory.mktemp(out_name)
    return hand_made, out
