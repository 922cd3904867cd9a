"""model/converged: the fingerprint of what enable's steps read changes with every drift they would repair, and not with
what changes on its own (resourceVersion, timestamps, heartbeats, pods, the connection)."""

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.model import converged

VARIABLES = {'egressip_acknowledge_unsupported': True, 'egressip_network': {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1'},
             'egressip_nodes': {'selector': {'node-role.kubernetes.io/worker': ''}},
             'egressip_objects': [{'name': 'payments', 'egress_ips': ['10.20.0.200']}],
             'egressip_vcenter': {'password': 'secret'}, 'egressip_verify': {'wire': {'echo_target': '192.0.2.10:8080'}}}
CONFIG = converged.step_config(VARIABLES, {'egress_nodes_exclusive': True}, '1.0.0')


def _snapshot():
    node = {'metadata': {'name': 'worker-0', 'resourceVersion': '10', 'labels': {'k8s.ovn.org/egress-assignable': ''},
                         'annotations': {'k8s.ovn.org/host-cidrs': '["192.168.1.10/24","10.20.0.10/24"]', 'other/volatile': '1'}},
            'spec': {'providerID': 'vsphere://4200'},
            'status': {'conditions': [{'type': 'Ready', 'status': 'True', 'lastHeartbeatTime': '2026-12-01T20:00:00Z'}],
                       'images': ['a']}}
    nns = {'metadata': {'name': 'worker-0', 'resourceVersion': '3'},
           'status': {'lastSuccessfulUpdateTime': '2026-12-01T20:00:00Z', 'handlerNmstateVersion': '2.2.38',
                      'currentState': {'interfaces': [{'name': 'ens224', 'type': 'ethernet', 'state': 'up', 'mac-address': '00:50:56:00:00:01',
                                                       'ipv4': {'enabled': True, 'address': [{'ip': '10.20.0.10', 'prefix-length': 24}]},
                                                       'ethtool': {'feature': {'rx-checksum': True}}}],
                                       'routes': {'running': [{'destination': '0.0.0.0/0', 'next-hop-address': '10.20.0.1',
                                                               'next-hop-interface': 'ens224', 'metric': 200}]}}}}
    policy = {'metadata': {'name': 'egressip-worker-0', 'resourceVersion': '5', 'generation': 2, 'managedFields': [{}]},
              'spec': {'desiredState': {'interfaces': [{'name': 'ens224'}]}},
              'status': {'conditions': [{'type': 'Available', 'status': 'True', 'lastTransitionTime': '2026-12-01T20:00:00Z',
                                         'reason': 'SuccessfullyConfigured', 'message': '1/1 nodes'}]}}
    egressip = {'metadata': {'name': 'payments'}, 'spec': {'egressIPs': ['10.20.0.200']},
                'status': {'items': [{'node': 'worker-0', 'egressIP': '10.20.0.200'}]}}
    machineset = {'metadata': {'name': 'workers'}, 'spec': {'replicas': 3, 'template': {'spec': {'providerSpec': {'value': {
        'network': {'devices': [{'networkName': 'VM Network'}, {'networkName': 'ocp-egress-120'}]}}}}}}}
    return {'nodes': [node], 'nns': [nns], 'nncps': [policy], 'tuneds': [], 'machinesets': [machineset], 'machines': [],
            'egressips': [egressip], 'pods': [{'metadata': {'name': 'pod-1'}}],
            'network_operator': {'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': 'Restricted'}}}}},
            'vsphere': {'hosts': [{'name': 'esxi-0', 'standard_portgroups': [{'name': 'ocp-egress-120', 'vlan_id': 120}]}],
                        'vms': [{'name': 'worker-0', 'host': 'esxi-0',
                                 'nics': [{'mac': '00:50:56:00:00:01', 'network': 'ocp-egress-120', 'connected': True}]}],
                        'privileges': {'missing': []}}}


BASE = converged.fingerprint(_snapshot(), CONFIG)


def _changed(mutate):
    snapshot = _snapshot()
    mutate(snapshot)
    return converged.fingerprint(snapshot, CONFIG) != BASE


def test_the_same_snapshot_and_configuration_have_one_fingerprint():
    assert BASE.startswith('v1:') and len(BASE) == 3 + 64
    assert converged.fingerprint(copy.deepcopy(_snapshot()), CONFIG) == BASE
    assert converged.converged(BASE, BASE)
    assert not converged.converged('', BASE) and not converged.converged(None, BASE) and not converged.converged('v1:other', BASE)


def test_what_changes_on_its_own_leaves_the_fingerprint():
    def volatile(snapshot):
        snapshot['nodes'][0]['metadata']['resourceVersion'] = '11'
        snapshot['nodes'][0]['metadata']['annotations']['other/volatile'] = '2'
        snapshot['nodes'][0]['status']['conditions'][0]['lastHeartbeatTime'] = '2026-12-01T20:01:00Z'
        snapshot['nodes'][0]['status']['images'].append('b')
        snapshot['nns'][0]['status']['lastSuccessfulUpdateTime'] = '2026-12-01T20:01:00Z'
        snapshot['nns'][0]['status']['currentState']['interfaces'][0]['ethtool'] = {}
        snapshot['nncps'][0]['metadata'].update(resourceVersion='6', generation=3, managedFields=[])
        snapshot['nncps'][0]['status']['conditions'][0].update(lastTransitionTime='2026-12-01T20:05:00Z', message='2/2 nodes')
        snapshot['machinesets'][0]['spec']['replicas'] = 4
        snapshot['pods'].append({'metadata': {'name': 'pod-2'}})
        snapshot['vsphere']['privileges'] = {'missing': [{'privilege': 'Network.Assign'}]}
        snapshot['nodes'].reverse()
    assert not _changed(volatile)
    other_connection = dict(VARIABLES, egressip_vcenter={'password': 'another'}, egressip_verify={}, egressip_rollout=[1])
    assert converged.fingerprint(_snapshot(), converged.step_config(other_connection, {'egress_nodes_exclusive': True}, '1.0.0')) == BASE


def test_every_drift_the_steps_repair_changes_the_fingerprint():
    drifts = {
        'label removed by hand': lambda s: s['nodes'][0]['metadata']['labels'].clear(),
        'host-cidrs without the subnet': lambda s: s['nodes'][0]['metadata']['annotations'].update({'k8s.ovn.org/host-cidrs': '[]'}),
        'node not ready': lambda s: s['nodes'][0]['status']['conditions'][0].update(status='False'),
        'node added': lambda s: s['nodes'].append({'metadata': {'name': 'worker-1'}}),
        'address gone from the NIC': lambda s: s['nns'][0]['status']['currentState']['interfaces'][0]['ipv4'].update(address=[]),
        'gateway route gone': lambda s: s['nns'][0]['status']['currentState']['routes']['running'].clear(),
        'policy edited': lambda s: s['nncps'][0]['spec']['desiredState']['interfaces'][0].update(name='ens256'),
        'policy degraded': lambda s: s['nncps'][0]['status']['conditions'][0].update(status='False'),
        'policy deleted': lambda s: s['nncps'].clear(),
        'EgressIP reassigned': lambda s: s['egressips'][0]['status']['items'][0].update(node='worker-1'),
        'EgressIP edited': lambda s: s['egressips'][0]['spec'].update(egressIPs=[]),
        'MachineSet device removed': lambda s: s['machinesets'][0]['spec']['template']['spec']['providerSpec']['value']['network']
        ['devices'].pop(),
        'IP forwarding changed': lambda s: s['network_operator']['spec']['defaultNetwork']['ovnKubernetesConfig']['gatewayConfig']
        .update(ipForwarding='Global'),
        'port group removed from a host': lambda s: s['vsphere']['hosts'][0]['standard_portgroups'].clear(),
        'NIC disconnected': lambda s: s['vsphere']['vms'][0]['nics'][0].update(connected=False),
        'VM moved to another host': lambda s: s['vsphere']['vms'][0].update(host='esxi-1'),
        'NMState no longer installed': lambda s: s.update(nncps=None),
    }
    for what, mutate in drifts.items():
        assert _changed(mutate), what


def test_another_configuration_or_release_changes_the_fingerprint():
    variables = copy.deepcopy(VARIABLES)
    variables['egressip_objects'][0]['egress_ips'].append('10.20.0.201')
    for config in (converged.step_config(variables, {'egress_nodes_exclusive': True}, '1.0.0'),
                   converged.step_config(VARIABLES, {'egress_nodes_exclusive': False}, '1.0.0'),
                   converged.step_config(VARIABLES, {'egress_nodes_exclusive': True}, '1.1.0')):
        assert converged.fingerprint(_snapshot(), config) != BASE
    assert 'egressip_vcenter' not in CONFIG['variables'] and 'egressip_verify' not in CONFIG['variables']
