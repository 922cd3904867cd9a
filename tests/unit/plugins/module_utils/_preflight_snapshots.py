"""Snapshots for the preflight and support report tests.

The base snapshot mirrors the twin (3 control-plane + 3 worker VMs on three ESXi hosts, primary
192.168.10.0/24, OpenShift 4.16 with OVN-Kubernetes, Machine API for the workers, NMState) and
the variables of examples/twin-cluster.yml, with Infrastructure nodeNetworking pinned: in plan
mode it yields info findings only. The configured snapshot is the same cluster after enable.
"""

import json

NS = 'openshift-machine-api'
HOSTS = ['DC0_C0_H0', 'DC0_C0_H1', 'DC0_C0_H2']
EGRESS_LABEL = 'k8s.ovn.org/egress-assignable'


def uuid(index):
    return '42100000-0000-0000-0000-%012d' % index


def node(name, index, role, labels=None, secondary=None, ready=True):
    primary = '192.168.10.%d/24' % (11 + index)
    cidrs = [primary] + ([secondary] if secondary else [])
    meta_labels = {'node-role.kubernetes.io/%s' % role: '', 'kubernetes.io/hostname': name}
    meta_labels.update(labels or {})
    return {
        'metadata': {'name': name, 'labels': meta_labels,
                     'annotations': {'k8s.ovn.org/node-primary-ifaddr': json.dumps({'ipv4': primary}),
                                     'k8s.ovn.org/host-cidrs': json.dumps(cidrs)}},
        'spec': {'providerID': 'vsphere://%s' % uuid(index)},
        'status': {'conditions': [{'type': 'Ready', 'status': 'True' if ready else 'False'}],
                   'addresses': [{'type': 'InternalIP', 'address': primary.split('/')[0]}]},
    }


def nic(index, network='VM Network', mac=None):
    return {'key': 4000 + index, 'mac': mac or '00:50:56:00:00:%02x' % index, 'adapter': 'vmxnet3', 'network': network,
            'network_moid': None, 'portgroup_key': None, 'switch_uuid': None, 'opaque_network_id': None,
            'connected': True, 'start_connected': True}


def vm(name, index, nics=None):
    return {'name': name, 'moid': 'vm-%d' % (40 + index), 'uuid': uuid(index), 'host': HOSTS[index % 3],
            'power_state': 'poweredOn', 'nics': nics if nics is not None else [nic(index)]}


def machine(name, devices=1):
    return {'kind': 'Machine', 'metadata': {'name': name, 'namespace': NS, 'uid': 'uid-%s' % name,
                                            'ownerReferences': [{'kind': 'MachineSet', 'name': 'ocp1-worker'}]},
            'spec': {'providerSpec': {'value': {'network': {'devices': [{'networkName': 'VM Network'}] * devices}}}},
            'status': {'nodeRef': {'kind': 'Node', 'name': name}}}


def machineset(devices=None):
    devices = [{'networkName': 'VM Network'}] if devices is None else devices
    return {'kind': 'MachineSet', 'metadata': {'name': 'ocp1-worker', 'namespace': NS},
            'spec': {'template': {'spec': {'providerSpec': {'value': {'network': {'devices': devices}}}}}}}


def host(name, portgroups=None):
    portgroups = [{'name': 'VM Network', 'vswitch': 'vSwitch0', 'vlan_id': 0}] if portgroups is None else portgroups
    return {'name': name, 'moid': 'host-%s' % name[-1], 'standard_switches': [{'name': 'vSwitch0'}, {'name': 'vSwitch1'}],
            'standard_portgroups': portgroups}


def egressip(name, ips, status=()):
    return {'metadata': {'name': name}, 'spec': {'egressIPs': list(ips), 'namespaceSelector': {'matchLabels': {'team': name}}},
            'status': {'items': [{'node': node_name, 'egressIP': ip} for ip, node_name in status]}}


def base_snapshot():
    names = ['ocp1-master-0', 'ocp1-master-1', 'ocp1-master-2', 'ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
    nodes = [node(name, index, 'master' if 'master' in name else 'worker') for index, name in enumerate(names)]
    return {
        'infrastructure': {'metadata': {'name': 'cluster'},
                           'spec': {'platformSpec': {'type': 'VSphere', 'vsphere': {'nodeNetworking': {
                               'internal': {'networkSubnetCidr': ['192.168.10.0/24']},
                               'external': {'networkSubnetCidr': ['192.168.10.0/24']}}}}},
                           'status': {'platform': 'VSphere', 'platformStatus': {'type': 'VSphere'}}},
        'network_config': {'metadata': {'name': 'cluster'},
                           'spec': {'networkType': 'OVNKubernetes'},
                           'status': {'networkType': 'OVNKubernetes', 'clusterNetwork': [{'cidr': '10.128.0.0/14', 'hostPrefix': 23}],
                                      'serviceNetwork': ['172.30.0.0/16']}},
        'network_operator': {'metadata': {'name': 'cluster'}, 'spec': {'defaultNetwork': {'type': 'OVNKubernetes', 'ovnKubernetesConfig': {
            'gatewayConfig': {'ipForwarding': 'Restricted', 'routingViaHost': False},
            'egressIPConfig': {'reachabilityTotalTimeoutSeconds': 1}}}}},
        'cluster_version': {'metadata': {'name': 'version'}, 'status': {'desired': {'version': '4.16.3'}}},
        'nodes': nodes,
        'namespaces': [{'metadata': {'name': 'default'}}, {'metadata': {'name': 'payments', 'labels': {'team': 'payments'}}}],
        'pods': [{'metadata': {'name': 'api-1', 'namespace': 'payments', 'labels': {'app': 'api'}}, 'spec': {}}],
        'egressips': [],
        'nncps': [],
        'nmstates': [{'metadata': {'name': 'nmstate'}}],
        'tuneds': [],
        'machinesets': [machineset()],
        'machines': [machine(name) for name in names[3:]],
        'vsphere': {
            'datacenter': 'DC0', 'cluster': 'DC0_C0', 'not_found': None,
            'hosts': [host(name) for name in HOSTS],
            'distributed_switches': [{'name': 'DSwitch1', 'uuid': '50 12 34', 'moid': 'dvs-1', 'hosts': list(HOSTS),
                                      'portgroups': [{'name': 'ocp-primary-dpg', 'key': 'dvportgroup-1', 'moid': 'dvportgroup-1',
                                                      'vlan_type': 'vlan', 'vlan_id': 0}]}],
            'opaque_networks': [],
            'vms': [vm(name, index) for index, name in enumerate(names)],
        },
        'config': {
            'acknowledge_unsupported': True,
            'vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0',
                        'portgroup': {'name': 'ocp-egress-120', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120}},
            'network': {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99',
                        'route_metric': 200},
            'nodes': {'selector': {'node-role.kubernetes.io/worker': ''}},
            'objects': [{'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201'],
                         'namespace_selector': {'matchLabels': {'team': 'payments'}}}],
        },
    }


def configured_snapshot():
    """The base after enable: port group everywhere, NICs, addresses in host-cidrs, labels, forwarding, device."""
    snap = base_snapshot()
    for index, item in enumerate(snap['nodes']):
        if 'worker' in item['metadata']['name']:
            item['metadata']['labels'][EGRESS_LABEL] = ''
            item['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(
                ['192.168.10.%d/24' % (11 + index), '10.20.0.%d/24' % (10 + index)])
            snap['vsphere']['vms'][index]['nics'].append(nic(10 + index, 'ocp-egress-120'))
    for item in snap['machines']:
        item['spec']['providerSpec']['value']['network']['devices'] = [{'networkName': 'VM Network'}, {'networkName': 'ocp-egress-120'}]
    snap['machinesets'] = [machineset([{'networkName': 'VM Network'}, {'networkName': 'ocp-egress-120'}])]
    for item in snap['vsphere']['hosts']:
        item['standard_portgroups'].append({'name': 'ocp-egress-120', 'vswitch': 'vSwitch1', 'vlan_id': 120})
    snap['tuneds'] = [{'metadata': {'name': 'egressip-forwarding'}, 'spec': {
        'profile': [{'name': 'egressip-forwarding-node-ens224', 'data': '[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n'}],
        'recommend': [{'profile': 'egressip-forwarding-node-ens224', 'priority': 20,
                       'match': [{'label': 'kubernetes.io/hostname', 'value': 'ocp1-worker-%d' % i} for i in range(3)]}]}}]
    return snap
