"""Snapshots of a cluster whose secondary egress network was configured by hand (for migrate and upgrade tests).

The base is _preflight_snapshots.base_snapshot (3 masters, 3 workers; here a fourth worker is added), with what
tests/integration/playbooks/_by_hand.py does on the twin: port group egress-vlan120 (VLAN 120) on vSwitch1 of every host,
a NIC on it for workers 0-2, NMState policies `<node>-egress` (kernel name ens224; worker 2 by MAC) with
10.30.0.11-13/24 and a default route via 10.30.0.1 metric 150, a hand-made forwarding Tuned recommended by the label
egress.example.com/gateway=true, the egress-assignable label on workers 0 and 1, EgressIPs payments, reports and the
SDN migration's egressip-legacy (primary network).
"""

import copy
import json

from _preflight_snapshots import base_snapshot, machine, nic, node, vm  # noqa: F401  pylint: disable=wrong-import-order,unused-import

PORTGROUP = 'egress-vlan120'
EGRESS_NODES = ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
NODE_LABEL = 'egress.example.com/gateway'
ASSIGNABLE = 'k8s.ovn.org/egress-assignable'
LABEL_RECORD = 'egressip.ocp/egress-assignable'
ADDRESS = {'ocp1-worker-0': '10.30.0.11', 'ocp1-worker-1': '10.30.0.12', 'ocp1-worker-2': '10.30.0.13'}
TUNED_NS = 'openshift-cluster-node-tuning-operator'
FORWARDING_ONLY = '[main]\nsummary=by hand\ninclude=openshift-node\n\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n'


def egress_mac(name):
    return '00:50:56:aa:00:%02d' % int(name[-1])


def _nns(name, primary_mac, secondary=None):
    interfaces = [{'name': 'ens192', 'type': 'ethernet', 'state': 'up', 'mac-address': primary_mac.upper(), 'controller': 'br-ex'}]
    routes = [{'destination': '0.0.0.0/0', 'next-hop-interface': 'br-ex', 'next-hop-address': '192.168.10.1', 'metric': 48,
               'table-id': 254}]
    config = []
    if secondary:
        interfaces.append({'name': 'ens224', 'type': 'ethernet', 'state': 'up', 'mac-address': egress_mac(name).upper(),
                           'ipv4': {'enabled': True, 'address': [{'ip': secondary, 'prefix-length': 24}]}})
        config.append({'destination': '0.0.0.0/0', 'next-hop-interface': 'ens224', 'next-hop-address': '10.30.0.1', 'metric': 150})
    return {'metadata': {'name': name}, 'status': {'currentState': {'interfaces': interfaces,
                                                                    'routes': {'config': config, 'running': routes + config}}}}


def policy(name, by_mac=False, managed=False, address=None, available=True):
    iface = {'name': 'ens224', 'type': 'ethernet', 'state': 'up',
             'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': address or ADDRESS[name], 'prefix-length': 24}]}}
    if by_mac:
        iface.update({'identifier': 'mac-address', 'mac-address': egress_mac(name).upper()})
    metadata = {'name': ('egressip-%s' % name) if managed else ('%s-egress' % name)}
    if managed:
        metadata['labels'] = {'egressip.ocp/managed-by': 'ocp.egressip'}
        metadata['annotations'] = {'egressip.ocp/node': name, 'egressip.ocp/addresses': '%s/24' % (address or ADDRESS[name])}
    return {'metadata': metadata,
            'spec': {'nodeSelector': {'kubernetes.io/hostname': name},
                     'desiredState': {'interfaces': [iface], 'routes': {'config': [
                         {'destination': '0.0.0.0/0', 'next-hop-address': '10.30.0.1', 'next-hop-interface': 'ens224', 'metric': 150}]}}},
            'status': {'conditions': [{'type': 'Available', 'status': 'True' if available else 'False'}]}}


def tuned(name='egress-forwarding', data=FORWARDING_ONLY, priority=25, match=None, managed=False):
    metadata = {'name': name, 'namespace': TUNED_NS}
    if managed:
        metadata['labels'] = {'egressip.ocp/managed-by': 'ocp.egressip'}
    return {'metadata': metadata, 'spec': {
        'profile': [{'name': name, 'data': data}],
        'recommend': [{'profile': name, 'priority': priority, 'match': match or [{'label': NODE_LABEL, 'value': 'true'}]}]}}


def egressip(name, ips, selector, status, pod_selector=None, managed=False):
    spec = {'egressIPs': list(ips), 'namespaceSelector': selector}
    if pod_selector is not None:
        spec['podSelector'] = pod_selector
    metadata = {'name': name}
    if managed:
        metadata['labels'] = {'egressip.ocp/managed-by': 'ocp.egressip'}
    return {'metadata': metadata, 'spec': spec, 'status': {'items': [{'node': where, 'egressIP': ip} for ip, where in status]}}


def hand_made():
    snap = base_snapshot()
    snap.pop('config')
    snap['infrastructure']['spec']['platformSpec']['vsphere']['failureDomains'] = [{
        'name': 'generated', 'topology': {'datacenter': 'DC0', 'computeCluster': '/DC0/host/DC0_C0', 'networks': ['VM Network']}}]
    snap['infrastructure']['status']['infrastructureName'] = 'ocp1-abcde'
    snap['nodes'].append(node('ocp1-worker-3', 6, 'worker'))
    snap['vsphere']['vms'].append(vm('ocp1-worker-3', 6))
    snap['machines'].append(machine('ocp1-worker-3'))
    snap['nns'] = []
    for index, item in enumerate(snap['nodes']):
        name = item['metadata']['name']
        primary_mac = snap['vsphere']['vms'][index]['nics'][0]['mac']
        if name in EGRESS_NODES:
            item['metadata']['labels'][NODE_LABEL] = 'true'
            item['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(
                sorted(['192.168.10.%d/24' % (11 + index), '%s/24' % ADDRESS[name]]))
            snap['vsphere']['vms'][index]['nics'].append(nic(20 + index, PORTGROUP, mac=egress_mac(name)))
        snap['nns'].append(_nns(name, primary_mac, ADDRESS.get(name)))
    for item in snap['nodes']:
        if item['metadata']['name'] in EGRESS_NODES[:2]:
            item['metadata']['labels'][ASSIGNABLE] = ''
    for item in snap['machines']:
        if item['metadata']['name'] in EGRESS_NODES:
            item['spec']['providerSpec']['value']['network']['devices'] = [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]
    for item in snap['vsphere']['hosts']:
        item['standard_portgroups'].append({'name': PORTGROUP, 'vswitch': 'vSwitch1', 'vlan_id': 120})
    snap['nncps'] = [policy(name, by_mac=name == 'ocp1-worker-2') for name in EGRESS_NODES]
    snap['tuneds'] = [{'metadata': {'name': 'default', 'namespace': TUNED_NS}, 'spec': {'recommend': [
        {'profile': 'openshift-control-plane', 'priority': 30, 'match': [{'label': 'node-role.kubernetes.io/master'}]},
        {'profile': 'openshift-node', 'priority': 40}]}}, tuned()]
    snap['egressips'] = [
        egressip('payments', ['10.30.0.200', '10.30.0.201'], {'matchLabels': {'team': 'payments'}},
                 [('10.30.0.200', 'ocp1-worker-0'), ('10.30.0.201', 'ocp1-worker-1')]),
        egressip('reports', ['10.30.0.210'], {'matchLabels': {'team': 'reports'}}, [('10.30.0.210', 'ocp1-worker-1')],
                 pod_selector={'matchLabels': {'app': 'reports'}}),
        egressip('egressip-legacy', ['192.168.10.250'], {'matchLabels': {'kubernetes.io/metadata.name': 'legacy'}},
                 [('192.168.10.250', 'ocp1-worker-0')]),
    ]
    return snap


def adopted():
    """The hand-made snapshot after enable ran with the discovered variables (what the collection adds)."""
    snap = hand_made()
    for item in snap['nodes']:
        if item['metadata']['name'] in EGRESS_NODES:
            item['metadata']['labels'][ASSIGNABLE] = ''
            item['metadata']['annotations'][LABEL_RECORD] = 'ocp.egressip'  # egress_nodes' record beside its label
    snap['nncps'] += [policy(name, by_mac=True, managed=True) for name in EGRESS_NODES]
    snap['tuneds'].append(tuned('egressip-forwarding', data='[main]\ninclude=openshift-node\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n',
                                priority=20, managed=True,
                                match=[{'label': 'kubernetes.io/hostname', 'value': name} for name in EGRESS_NODES]))
    for item in snap['egressips']:
        if item['metadata']['name'] != 'egressip-legacy':
            item['metadata']['labels'] = {'egressip.ocp/managed-by': 'ocp.egressip'}
    snap['machinesets'][0]['spec']['template']['spec']['providerSpec']['value']['network']['devices'].append({'networkName': PORTGROUP})
    return snap


def node_by_name(snap, name):
    return next(item for item in snap['nodes'] if item['metadata']['name'] == name)


def clone(snap):
    return copy.deepcopy(snap)
