"""egressip_render's build step over a synthetic cluster snapshot: the objects are the modules' own, and the modules'
refusals hold for the rendered state (selection, ownership, capacity as after the apply, allocations kept)."""

import json

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.action import egressip_render as action
from ansible_collections.ocp.egressip.plugins.module_utils.core.names import ADDRESSES_ANNOTATION
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.plan import render
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egressips as egressip_plan
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egress_labels as el
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw

WORKERS = ['w0', 'w1', 'w2']
MACS = {'w0': '00:50:56:aa:00:00', 'w1': '00:50:56:aa:00:01', 'w2': '00:50:56:aa:00:02'}
PAYMENTS = {'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201'], 'namespace_selector': {'matchLabels': {'team': 'payments'}}}
NS = 'openshift-machine-api'


def node(name, index, worker=True):
    primary = '192.168.10.%d' % (11 + index)
    labels = {'kubernetes.io/hostname': name, 'node-role.kubernetes.io/%s' % ('worker' if worker else 'master'): ''}
    return {'metadata': {'name': name, 'labels': labels,
                         'annotations': {'k8s.ovn.org/node-primary-ifaddr': json.dumps({'ipv4': primary + '/24'}),
                                         'k8s.ovn.org/host-cidrs': json.dumps([primary + '/24'])}},
            'status': {'conditions': [{'type': 'Ready', 'status': 'True'}], 'addresses': [{'type': 'InternalIP', 'address': primary}]}}


def state(name):
    interfaces = [{'name': 'ens192', 'type': 'ethernet', 'state': 'up', 'mac-address': '00:50:56:00:00:%02d' % len(name)}]
    if name in MACS:
        interfaces.append({'name': 'ens224', 'type': 'ethernet', 'state': 'up', 'mac-address': MACS[name].upper()})
    return {'metadata': {'name': name}, 'status': {'currentState': {
        'interfaces': interfaces,
        'routes': {'running': [{'destination': '0.0.0.0/0', 'metric': 48, 'next-hop-interface': 'br-ex', 'table-id': 254}]}}}}


def machineset():
    return {'kind': 'MachineSet', 'metadata': {'name': 'ocp1-worker', 'namespace': NS},
            'spec': {'template': {'spec': {'providerSpec': {'value': {'network': {'devices': [{'networkName': 'VM Network'}]}}}}}}}


def machine(name):
    return {'kind': 'Machine', 'metadata': {'name': name, 'namespace': NS, 'ownerReferences': [{'kind': 'MachineSet', 'name': 'ocp1-worker'}]},
            'spec': {'providerSpec': {'value': {'network': {'devices': [{'networkName': 'VM Network'}]}}}},
            'status': {'nodeRef': {'name': name}}}


def snapshot(**changes):
    names = WORKERS + ['m0']
    result = {'nodes': [node(name, index, worker=name != 'm0') for index, name in enumerate(names)],
              'nns': [state(name) for name in names], 'nncps': [], 'egressips': [], 'tuneds': [],
              'machinesets': [machineset()], 'machines': [machine(name) for name in WORKERS]}
    result.update(changes)
    return result


def params(**changes):
    result = {'dest': '/tmp/unused', 'objects': [PAYMENTS],
              'network': {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99',
                          'route_metric': 200, 'ip_forwarding': 'per_interface', 'ipv6': None},
              'node_selector': {'node-role.kubernetes.io/worker': ''}, 'nics': [{'node': name, 'mac': MACS[name]} for name in WORKERS],
              'macs_source': 'variable',
              'vsphere': {'portgroup': {'name': 'ocp-egress-120', 'switch_type': 'standard', 'switch': 'vSwitch1'}, 'datacenter': 'DC0', 'cluster': 'DC0_C0'},
              'interface_name': 'egressip0', 'tuned_priority': 20, 'node_labels': True, 'machinesets': True, 'machineset_labels': False,
              'adopt': False, 'allow_insufficient_capacity': False}
    result.update(changes)
    return result


def manifests(files):
    return dict((name, yaml.safe_load(text)) for name, text in files.items() if name.endswith('.yaml') and name != 'kustomization.yaml')


def refusal_ids(**kwargs):
    with pytest.raises(action.Refused) as refused:
        action.build(params(**kwargs.pop('params', {})), snapshot(**kwargs))
    return [item['id'] for item in refused.value.findings if item['severity'] == 'error']


def test_every_object_is_the_one_its_module_builds():
    files, facts, warnings = action.build(params(), snapshot())
    rendered = manifests(files)
    assert rendered['egressip-payments.yaml'] == egressip_plan.desired_object(PAYMENTS)
    for index, name in enumerate(WORKERS):
        assert rendered['nodenetworkconfigurationpolicy-egressip-%s.yaml' % name] == nn.desired_policy(
            name, name, MACS[name], {4: '10.20.0.%d/24' % (10 + index)}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
        assert rendered['node-%s.yaml' % name]['metadata']['labels'] == el.label_patch(True)['metadata']['labels']
    targets = [{'node': name, 'hostname': name, 'interface': 'ens224', 'parent': 'openshift-node'} for name in WORKERS]
    assert rendered['tuned-openshift-cluster-node-tuning-operator-egressip-forwarding.yaml'] == fw.desired_tuned(targets, 20)
    devices = rendered['machineset-openshift-machine-api-ocp1-worker.yaml']['spec']['template']['spec']['providerSpec']['value']['network']
    assert devices == {'devices': [{'networkName': 'VM Network'}, {'networkName': 'ocp-egress-120'}]}
    assert 'node-m0.yaml' not in rendered
    assert facts['pending'] == [] and warnings == []
    assert [item['interface'] for item in facts['nics']] == ['ens224'] * 3


def test_the_same_input_gives_the_same_files():
    assert action.build(params(), snapshot())[0] == action.build(params(nics=list(reversed(params()['nics']))), snapshot())[0]


def test_an_existing_allocation_is_kept():
    kept = nn.desired_policy('w1', 'w1', MACS['w1'], {4: '10.20.0.50/24'}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
    rendered = manifests(action.build(params(), snapshot(nncps=[kept]))[0])
    assert rendered['nodenetworkconfigurationpolicy-egressip-w1.yaml']['metadata']['annotations'][ADDRESSES_ANNOTATION] == '10.20.0.50/24'


def test_global_and_external_forwarding():
    network = dict(params()['network'], ip_forwarding='global')
    rendered = manifests(action.build(params(network=network), snapshot())[0])
    assert rendered['network-cluster.yaml']['spec'] == fw.ip_forwarding_patch('Global')['spec']
    assert not [name for name in rendered if name.startswith('tuned-')]
    network = dict(params()['network'], ip_forwarding='external')
    rendered = manifests(action.build(params(network=network), snapshot())[0])
    assert not [name for name in rendered if name.startswith(('tuned-', 'network-'))]


def test_machineset_labels_and_switches_off():
    rendered = manifests(action.build(params(machineset_labels=True, node_labels=False, machinesets=False), snapshot())[0])
    assert rendered['machineset-openshift-machine-api-ocp1-worker.yaml']['spec']['template']['spec'] == \
        el.machineset_label_patch(True)['spec']['template']['spec']
    assert not [name for name in rendered if name.startswith('node-')]


def test_capacity_is_checked_against_the_cluster_as_it_will_be():
    two = [{'node': name, 'mac': MACS[name]} for name in WORKERS[:2]]
    assert refusal_ids(params={'nics': two}) == ['egress_nodes_capacity_insufficient']
    files, facts, warnings = action.build(params(nics=two, allow_insufficient_capacity=True), snapshot())
    assert facts['pending'] == ['w2'] and 'node w2 matches the node selector' in warnings[0]
    assert 'nodenetworkconfigurationpolicy-egressip-w2.yaml' not in files
    assert '| w2 | - | - | - | no NIC yet: add it, then render again |' in files['README.md']


def test_refusals_of_the_modules_hold():
    assert refusal_ids(params={'nics': params()['nics'] + [{'node': 'm0', 'mac': '00:50:56:aa:00:09'}]}) == ['node_network_input_invalid']
    foreign = {'metadata': {'name': 'egressip-w0'}, 'spec': {}}
    assert refusal_ids(nncps=[foreign]) == ['node_object_not_owned']
    tuned = {'metadata': {'name': nn.TUNED_NAME, 'namespace': nn.TUNED_NAMESPACE}, 'spec': {}}
    assert refusal_ids(tuneds=[tuned]) == ['node_object_not_owned']
    by_hand = {'metadata': {'name': 'payments'}, 'spec': {'egressIPs': ['10.20.0.200'], 'namespaceSelector': {}}}
    assert refusal_ids(egressips=[by_hand]) == ['egressip_not_owned']
    assert action.build(params(adopt=True), snapshot(egressips=[by_hand]))[0]
    assert 'egressip_in_node_address_range' in refusal_ids(params={'objects': [dict(PAYMENTS, egress_ips=['10.20.0.20', '10.20.0.201'])]})
    assert refusal_ids(params={'network': dict(params()['network'], route_metric=20)}) == ['node_route_metric_too_low'] * 3


def test_a_nic_unknown_to_nodenetworkstate_is_refused_for_forwarding():
    nics = [dict(item, mac='00:50:56:bb:00:00') if item['node'] == 'w0' else item for item in params()['nics']]
    assert refusal_ids(params={'nics': nics}) == ['node_nic_not_in_state', 'node_nic_not_found']


def test_readme_describes_each_rendered_file():
    files, facts, _warnings = action.build(params(), snapshot())
    for item in facts['manifests']:
        assert '| %s | %s | %s |' % (item['file'], item['kind'], item['name']) in files['README.md']
    assert render.is_generated(files['README.md'])


DUAL = {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99', 'route_metric': 200,
        'ip_forwarding': 'per_interface',
        'ipv6': {'cidr': 'fd00:20::/64', 'gateway': 'fd00:20::1', 'node_address_range': 'fd00:20::10-fd00:20::99', 'route_metric': 210}}
MIXED = {'name': 'payments', 'egress_ips': ['10.20.0.200', 'fd00:20::200'], 'namespace_selector': {'matchLabels': {'team': 'payments'}}}


def test_a_dual_stack_network_renders_both_families():
    files, facts, warnings = action.build(params(network=DUAL, objects=[MIXED]), snapshot())
    rendered = manifests(files)
    assert rendered['egressip-payments.yaml'] == egressip_plan.desired_object(MIXED)
    assert rendered['egressip-payments.yaml']['spec']['egressIPs'] == ['10.20.0.200', 'fd00:20::200']
    for index, name in enumerate(WORKERS):
        policy = rendered['nodenetworkconfigurationpolicy-egressip-%s.yaml' % name]
        assert policy == nn.desired_policy(name, name, MACS[name], {4: '10.20.0.%d/24' % (10 + index), 6: 'fd00:20::%x/64' % (16 + index)},
                                           {4: '10.20.0.1', 6: 'fd00:20::1'}, {4: 200, 6: 210}, 'egressip0', 'ens224')
        interface = policy['spec']['desiredState']['interfaces'][0]
        assert interface['ipv6'] == {'enabled': True, 'dhcp': False, 'autoconf': False,
                                     'address': [{'ip': 'fd00:20::%x' % (16 + index), 'prefix-length': 64}]}
        assert [(route['destination'], route['next-hop-address'], route['metric']) for route in policy['spec']['desiredState']['routes']['config']] == [
            ('0.0.0.0/0', '10.20.0.1', 200), ('::/0', 'fd00:20::1', 210)]
    tuned = rendered['tuned-openshift-cluster-node-tuning-operator-egressip-forwarding.yaml']
    assert 'net.ipv4.conf.ens224.forwarding=1\nnet.ipv6.conf.ens224.forwarding=1\n' in tuned['spec']['profile'][0]['data']
    assert warnings == []


def test_an_ipv6_egress_ip_outside_the_ipv6_part_is_refused():
    outside = dict(MIXED, egress_ips=['10.20.0.200', 'fd00:30::200'])
    assert refusal_ids(params={'network': DUAL, 'objects': [outside]}) == ['egressip_outside_network']
