"""Verification of egress IPs (pure): assignment, node health, the secondary path, the wire, remediation."""

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path
from ansible_collections.ocp.egressip.plugins.module_utils.checks import remediation
from ansible_collections.ocp.egressip.plugins.module_utils.checks import wire

from _cluster_states import egressip_object, node_object

CIDR = '10.20.0.0/24'
PORTGROUP = {'name': 'ocp-egress-120', 'switch_type': 'standard', 'switch': 'vSwitch1'}


RECORD = 'egressip.ocp/egress-assignable'


def owned(egressip):
    egressip['metadata']['labels'] = {'egressip.ocp/managed-by': 'ocp.egressip'}
    return egressip


def mac(index):
    return '00:50:56:aa:00:%02x' % index


def nns(name, index, address=True, state='up', with_nic=True):
    interfaces = [{'name': 'br-ex', 'type': 'ovs-interface', 'state': 'up', 'mac-address': '00:50:56:00:00:%02X' % index,
                   'ipv4': {'address': [{'ip': '192.168.10.%d' % (11 + index), 'prefix-length': 24}]}}]
    if with_nic:
        interfaces.append({'name': 'ens224', 'type': 'ethernet', 'state': state, 'mac-address': mac(index).upper(),
                           'ipv4': {'address': [{'ip': '10.20.0.%d' % (10 + index), 'prefix-length': 24}] if address else []}})
    return {'metadata': {'name': name}, 'status': {'currentState': {'interfaces': interfaces}}}


def vm(name, index, host, connected=True, power_state='poweredOn', network='VM Network2'):
    return {'name': name, 'moid': 'vm-%d' % index, 'host': host, 'power_state': power_state,
            'nics': [{'key': 4000, 'mac': '00:50:56:00:00:%02x' % index, 'network': 'VM Network', 'portgroup_key': None,
                      'switch_uuid': None, 'connected': True},
                     {'key': 4001, 'mac': mac(index), 'network': network, 'portgroup_key': None, 'switch_uuid': None,
                      'connected': connected}]}


class Cluster:
    """Three workers w0..w2 (secondary addresses 10.20.0.10-12), each VM on its own host H0..H2 holding the port group."""

    def __init__(self, ips=('10.20.0.200', '10.20.0.201'), status=(('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')), count=3):
        self.nodes = [node_object('w%d' % index, index, [CIDR]) for index in range(count)]
        for node in self.nodes:  # labelled by egress_nodes: the record beside the label
            node['metadata']['annotations'][RECORD] = 'ocp.egressip'
        self.egressips = [owned(egressip_object('payments', ips, status))]
        self.nns = dict(('w%d' % index, nns('w%d' % index, index)) for index in range(count))
        self.vsphere = {'portgroup': PORTGROUP['name'], 'switch_type': 'standard', 'switch': 'vSwitch1',
                        'network': {'type': 'standard', 'name': PORTGROUP['name']}, 'cluster': 'C0',
                        'hosts': dict(('H%d' % index, ['VM Network', PORTGROUP['name']]) for index in range(count)),
                        'switch_hosts': None, 'findings': [],
                        'vms': dict(('w%d' % index, vm('w%d' % index, index, 'H%d' % index, network=PORTGROUP['name']))
                                    for index in range(count))}

    def node(self, name):
        return next(node for node in self.nodes if node['metadata']['name'] == name)

    def snapshot(self, vsphere=True, nns=True):
        return verify.build_snapshot(self.nodes, self.egressips, nns=self.nns if nns else None, vsphere=self.vsphere if vsphere else None)

    def evaluate(self, **kwargs):
        options = dict(cidr=CIDR)
        options.update(kwargs)
        vsphere = options.pop('vsphere', True)
        nns_read = options.pop('nns', True)
        return verify.evaluate(self.snapshot(vsphere, nns_read), **options)


def ids(result, severity=None):
    return sorted(item['id'] for item in result['findings'] if severity is None or item['severity'] == severity)


def row(result, ip):
    return next(item for item in result['egress_ips'] if item['ip'] == ip)


def node_row(result, name):
    return next(item for item in result['nodes'] if item['name'] == name)


def test_healthy_cluster_every_ip_ok_and_every_path_checked():
    result = Cluster().evaluate()
    assert [item['status'] for item in result['egress_ips']] == ['ok', 'ok']
    assert ids(result) == []
    assert result['broken_nodes'] == []
    w0 = node_row(result, 'w0')
    assert w0['path'] == 'ok' and w0['egress_ips'] == ['10.20.0.200']
    assert w0['nic'] == {'mac': mac(0), 'connected': True, 'network': 'ocp-egress-120', 'portgroup_on_host': True}
    assert (w0['interface'], w0['interface_state'], w0['address'], w0['esxi_host']) == ('ens224', 'up', '10.20.0.10/24', 'H0')
    assert node_row(result, 'w2')['egress_ips'] == []  # labelled spare, listed
    assert verify.summary(result) == {'ok': True, 'egress_ips': 2, 'assigned': 2, 'healthy': 2, 'blackholed': 0,
                                      'errors': 0, 'warnings': 0, 'info': 0}


def test_disconnected_nic_is_a_blackhole_naming_the_nic():
    cluster = Cluster()
    cluster.vsphere['vms']['w0']['nics'][1]['connected'] = False
    result = cluster.evaluate()
    assert row(result, '10.20.0.200')['status'] == 'blackhole'
    assert row(result, '10.20.0.201')['status'] == 'ok'
    assert ids(result) == ['blackhole_nic_disconnected', 'egressip_blackhole']  # the node keeps its address: ignore-carrier
    blackhole = next(item for item in result['findings'] if item['id'] == 'egressip_blackhole')
    message = blackhole['message']
    assert 'EgressIP payments: 10.20.0.200' in message and 'node w0' in message and mac(0) in message and 'disconnected' in message
    assert {'kind': 'VirtualMachine', 'name': 'w0'} in blackhole['objects']
    assert node_row(result, 'w0')['carrier_loss'] == 'keep'
    assert result['broken_nodes'] == ['w0']


def test_vm_on_a_host_without_the_standard_portgroup_is_a_blackhole():
    cluster = Cluster()
    cluster.vsphere['hosts']['H3'] = ['VM Network']
    cluster.vsphere['vms']['w1']['host'] = 'H3'
    result = cluster.evaluate()
    assert row(result, '10.20.0.201')['status'] == 'blackhole'
    assert node_row(result, 'w1')['nic']['portgroup_on_host'] is False
    assert 'port group ocp-egress-120 does not exist on ESXi host H3 where VM w1 runs now' in result['findings'][0]['message']


def test_vm_on_a_host_outside_the_cluster_counts_as_broken():
    cluster = Cluster()
    cluster.vsphere['vms']['w1']['host'] = 'standalone-1'
    result = cluster.evaluate()
    assert row(result, '10.20.0.201')['status'] == 'blackhole'
    assert 'outside vSphere cluster C0' in result['findings'][0]['message']


def test_powered_off_vm_and_missing_nic_are_blackholes():
    cluster = Cluster()
    cluster.vsphere['vms']['w0']['power_state'] = 'poweredOff'
    cluster.vsphere['vms']['w1']['nics'] = cluster.vsphere['vms']['w1']['nics'][:1]
    result = cluster.evaluate()
    assert [item['status'] for item in result['egress_ips']] == ['blackhole', 'blackhole']
    assert 'VM w0 is poweredOff' in row(result, '10.20.0.200')['problems']
    assert 'VM w1 has no vNIC on port group ocp-egress-120' in row(result, '10.20.0.201')['problems']


def test_base_address_gone_from_the_nic_is_a_blackhole():
    cluster = Cluster()
    cluster.nns['w0'] = nns('w0', 0, address=False)
    result = cluster.evaluate()
    assert row(result, '10.20.0.200')['status'] == 'blackhole'
    assert any('has no address in 10.20.0.0/24' in problem for problem in row(result, '10.20.0.200')['problems'])


def test_link_down_is_a_blackhole():
    cluster = Cluster()
    cluster.nns['w1'] = nns('w1', 1, state='down')
    result = cluster.evaluate()
    assert row(result, '10.20.0.201')['status'] == 'blackhole'
    assert 'interface ens224 is down' in row(result, '10.20.0.201')['problems']


def test_unassigned_ip_and_node_missing_and_node_without_the_network():
    cluster = Cluster(ips=('10.20.0.200', '10.20.0.201', '10.20.0.202'),
                      status=(('10.20.0.200', 'gone'), ('10.20.0.201', 'w1')))
    cluster.nodes[1]['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = '["192.168.10.12/24"]'
    result = cluster.evaluate()
    assert [item['status'] for item in result['egress_ips']] == ['node_missing', 'node_lacks_network', 'unassigned']
    assert ids(result) == ['egressip_unassigned'] * 3
    messages = ' '.join(item['message'] for item in result['findings'])
    assert '10.20.0.200 is assigned to node gone, which does not exist' in messages
    assert '10.20.0.202 is not assigned to any node' in messages


def test_ip_on_a_node_not_ready_or_unlabelled_is_reported_as_moving():
    cluster = Cluster()
    cluster.node('w0')['status']['conditions'][0]['status'] = 'False'
    del cluster.node('w1')['metadata']['labels']['k8s.ovn.org/egress-assignable']
    result = cluster.evaluate()
    assert [item['status'] for item in result['egress_ips']] == ['unhealthy_node', 'unhealthy_node']
    assert ids(result) == ['egressip_on_unhealthy_node'] * 2
    assert 'node w0 is not Ready' in result['findings'][0]['message']
    assert 'node w1 is not egress-assignable' in result['findings'][1]['message']


def test_idle_labelled_node_with_a_broken_path_is_a_warning():
    cluster = Cluster()
    cluster.vsphere['vms']['w2']['nics'][1]['connected'] = False
    result = cluster.evaluate()
    assert ids(result) == ['blackhole_nic_disconnected', 'egressip_node_path_broken']
    assert [item['severity'] for item in result['findings']] == ['warning', 'warning']
    assert result['broken_nodes'] == ['w2']


def test_without_vcenter_the_node_state_still_decides_and_without_both_nothing_is_claimed():
    cluster = Cluster()
    result = cluster.evaluate(vsphere=False)
    assert [item['status'] for item in result['egress_ips']] == ['ok', 'ok']
    assert node_row(result, 'w0')['nic'] is None and node_row(result, 'w0')['interface'] == 'ens224'
    result = cluster.evaluate(vsphere=False, nns=False)
    assert [item['status'] for item in result['egress_ips']] == ['path_not_checked', 'path_not_checked']
    assert node_row(result, 'w0')['address'] == '10.20.0.10/24'  # from host-cidrs
    assert ids(result) == []


def test_node_without_a_vm_is_not_claimed_broken():
    cluster = Cluster()
    del cluster.vsphere['vms']['w0']
    result = cluster.evaluate()
    assert row(result, '10.20.0.200')['status'] == 'ok'  # NNS still shows the address up on the NIC
    assert any('no VM found for node w0' in note for note in node_row(result, 'w0')['notes'])


def test_primary_network_egress_ip_needs_no_secondary_path():
    cluster = Cluster(ips=('192.168.10.200',), status=(('192.168.10.200', 'w0'),))
    cluster.vsphere['vms']['w0']['nics'][1]['connected'] = False
    result = cluster.evaluate(cidr=None)
    assert row(result, '192.168.10.200')['network'] == 'primary'
    assert row(result, '192.168.10.200')['status'] == 'ok'


def test_cidr_may_be_left_out_the_subnets_come_from_the_ips():
    cluster = Cluster()
    cluster.nns['w0'] = nns('w0', 0, address=False)
    result = cluster.evaluate(cidr=None)
    assert row(result, '10.20.0.200')['status'] == 'blackhole'
    assert row(result, '10.20.0.201')['status'] == 'ok'


def test_objects_of_the_variables_file_missing_or_lacking_ips():
    result = Cluster().evaluate(names=['payments', 'billing'], expected={'payments': ['10.20.0.200', '10.20.0.205'], 'billing': ['10.20.0.210']})
    assert ids(result) == ['egressip_object_missing', 'egressip_object_missing']
    messages = [item['message'] for item in result['findings']]
    assert 'EgressIP billing does not exist in the cluster.' in messages
    assert any('EgressIP payments lacks 10.20.0.205' in message for message in messages)
    assert [item['egressip'] for item in result['egress_ips']] == ['payments', 'payments']


def test_distributed_switch_membership_of_the_current_host():
    cluster = Cluster()
    network = {'type': 'distributed', 'name': 'egress-dpg', 'portgroup_key': 'dvportgroup-9', 'switch_uuid': '50 1a'}
    cluster.vsphere.update(switch_type='distributed', switch='DSwitch1', portgroup='egress-dpg', network=network,
                           switch_hosts=['H0', 'H2'])
    for name, item in cluster.vsphere['vms'].items():
        item['nics'][1].update(network='egress-dpg', portgroup_key='dvportgroup-9', switch_uuid='501a')
    result = cluster.evaluate()
    assert row(result, '10.20.0.200')['status'] == 'ok'
    assert row(result, '10.20.0.201')['status'] == 'blackhole'
    assert 'ESXi host H1 where VM w1 runs now is not a member of distributed switch DSwitch1' in row(result, '10.20.0.201')['problems']


def test_vsphere_facts_from_the_preflight_read():
    nodes = Cluster().nodes
    vcenter = {'datacenter': 'DC0', 'cluster': 'C0', 'not_found': None,
               'hosts': [{'name': 'H0', 'standard_portgroups': [{'name': 'VM Network'}, {'name': 'ocp-egress-120'}]},
                         {'name': 'H1', 'standard_portgroups': [{'name': 'VM Network'}]}],
               'distributed_switches': [],
               'vms': [dict(vm('w0', 0, 'H0', network='ocp-egress-120'), node='w0'), dict(vm('w1', 1, 'H1'), node='w1')]}
    facts = verify_path.vsphere_facts(vcenter, PORTGROUP, nodes)
    assert facts['hosts'] == {'H0': ['VM Network', 'ocp-egress-120'], 'H1': ['VM Network']}
    assert facts['network'] == {'type': 'standard', 'name': 'ocp-egress-120'}
    assert sorted(facts['vms']) == ['w0', 'w1']
    assert [item['id'] for item in facts['findings']] == ['vsphere_node_vm_not_found']
    assert 'node w2' in facts['findings'][0]['message']
    missing = verify_path.vsphere_facts(dict(vcenter, hosts=[]), PORTGROUP, [])
    assert [item['id'] for item in missing['findings']] == ['portgroup_missing']
    distributed = verify_path.vsphere_facts(vcenter, {'name': 'pg', 'switch_type': 'distributed', 'switch': 'nope'}, [])
    assert 'distributed switch nope' in distributed['findings'][0]['message']
    lost = verify_path.vsphere_facts({'not_found': "vSphere cluster 'X' not found", 'datacenter': 'DC0'}, PORTGROUP, nodes)
    assert lost['vms'] is None and [item['id'] for item in lost['findings']] == ['vsphere_cluster_not_found']


def test_vm_findings_only_for_nodes_that_matter():
    cluster = Cluster()
    cluster.vsphere['findings'] = [
        {'id': 'vsphere_node_vm_not_found', 'severity': 'error', 'message': 'm', 'remedy': 'r', 'docs': '', 'objects': [{'kind': 'Node', 'name': 'w0'}]},
        {'id': 'vsphere_node_vm_not_found', 'severity': 'error', 'message': 'm', 'remedy': 'r', 'docs': '', 'objects': [{'kind': 'Node', 'name': 'master-0'}]}]
    result = cluster.evaluate()
    assert [item['objects'][0]['name'] for item in result['findings']] == ['w0']


# --- wire ------------------------------------------------------------------------------------------

def probe(outcome, source_ip=None, **extra):
    item = {'egressip': 'payments', 'namespace': 'payments', 'pod': 'egressip-probe-x', 'outcome': outcome, 'source_ip': source_ip,
            'log': source_ip or 'curl: (28) Connection timed out after 5001 milliseconds', 'reason': None}
    item.update(extra)
    return item


def test_wire_answer_with_an_assigned_ip_passes_and_marks_the_row():
    result = wire.apply_wire(Cluster().evaluate(), [probe('answered', '10.20.0.201')])
    assert result['wire'][0]['ok'] is True and result['wire'][0]['expected'] == ['10.20.0.200', '10.20.0.201']
    assert [item['wire'] for item in result['egress_ips']] == [None, 'seen']
    assert ids(result) == []


def test_a_probe_of_one_family_expects_an_egress_ip_of_that_family():
    result = wire.apply_wire(Cluster().evaluate(), [probe('answered', '10.20.0.201', family=4), probe('answered', '10.20.0.200', family=6)])
    assert [(item['expected'], item['ok']) for item in result['wire']] == [(['10.20.0.200', '10.20.0.201'], True), ([], False)]
    assert ids(result) == ['egressip_wire_failed'] and 'expected one of none assigned' in result['findings'][0]['message']


def test_echo_targets_per_family():
    both = {'spec': {'egressIPs': ['10.20.0.200', 'fd00:20::200']}}
    six = {'spec': {'egressIPs': ['fd00:20::200']}}
    assert wire.echo_targets({'echo_target': '192.0.2.10:8080'}, both) == [('192.0.2.10:8080', None)]
    dual = {'echo_target': '192.0.2.10:8080', 'echo_target_ipv6': '[2001:db8::10]:8080'}
    assert wire.echo_targets(dual, both) == [('192.0.2.10:8080', 4), ('[2001:db8::10]:8080', 6)]
    assert wire.echo_targets(dual, six) == [('[2001:db8::10]:8080', 6)]
    body, _reason = wire.probe_pod(dict(six, metadata={'name': 'payments'}), 'payments', '[2001:db8::10]:8080', 'curl', 'run1', 30, 6)
    assert body['metadata']['labels'][wire.PROBE_FAMILY_LABEL] == '6'
    assert body['spec']['containers'][0]['command'][-1] == 'http://[2001:db8::10]:8080'
    pod = {'metadata': {'name': 'p', 'namespace': 'payments', 'labels': body['metadata']['labels']}, 'status': {'phase': 'Succeeded'}}
    assert wire.probe_outcome(pod, 'fd00:20::200\n')['family'] == 6
    assert wire.validate_wire(dual) == []
    [message] = wire.validate_wire(dict(dual, echo_target_ipv6='2001:db8::10'))
    assert "wire.echo_target_ipv6='2001:db8::10' is not [IPv6 address]:port" in message


def test_wire_answer_with_another_address_or_no_answer_fails():
    result = wire.apply_wire(Cluster().evaluate(), [probe('answered', '192.168.10.12'), probe('no_answer')])
    assert ids(result) == ['egressip_wire_failed', 'egressip_wire_failed']
    assert 'saw 192.168.10.12' in result['findings'][0]['message']
    assert 'did not answer' in result['findings'][1]['message'] and 'timed out' in result['findings'][1]['message']


def test_wire_not_run_is_a_warning_or_info_in_check_mode():
    result = wire.apply_wire(Cluster().evaluate(), [probe('not_run', reason='no namespace is selected')])
    assert ids(result, 'warning') == ['egressip_wire_not_checked']
    assert [item['wire'] for item in result['egress_ips']] == [None, None]
    result = wire.apply_wire(Cluster().evaluate(), [probe('not_run', reason='check mode', check_mode=True)])
    assert ids(result, 'info') == ['egressip_wire_not_checked']


def test_probe_namespace_choice():
    egressip = Cluster().egressips[0]
    namespaces = [{'metadata': {'name': name, 'labels': labels}} for name, labels in
                  (('default', {}), ('payments-b', {'team': 'payments'}), ('payments-a', {'team': 'payments'}))]
    assert wire.probe_namespace(egressip, namespaces)[0] == 'payments-a'
    assert wire.probe_namespace(egressip, namespaces, configured='payments-b')[0] == 'payments-b'
    name, body, reason = wire.probe_namespace(egressip, namespaces, configured='default')
    assert name is None and 'default is not selected by EgressIP payments' in reason
    name, body, reason = wire.probe_namespace(egressip, namespaces[:1])
    assert name is None and 'create_namespace' in reason
    name, body, reason = wire.probe_namespace(egressip, namespaces[:1], create=True)
    assert name == 'egressip-probe-payments' and body['metadata']['labels']['team'] == 'payments' and reason is None
    expressions = copy.deepcopy(egressip)
    expressions['spec']['namespaceSelector'] = {'matchExpressions': [{'key': 'team', 'operator': 'NotIn', 'values': ['x']},
                                                                     {'key': 'env', 'operator': 'In', 'values': ['prod', 'dev']}]}
    name, body, reason = wire.probe_namespace(expressions, [], create=True)
    assert body['metadata']['labels'] == {'env': 'prod', 'egressip.ocp/managed-by': 'ocp.egressip'}
    impossible = copy.deepcopy(egressip)
    impossible['spec']['namespaceSelector'] = {'matchExpressions': [{'key': 'egressip.ocp/managed-by', 'operator': 'DoesNotExist'}]}
    assert wire.probe_namespace(impossible, [], create=True)[0] is None


def test_probe_pod_body_is_selected_and_runs_curl_once():
    egressip = Cluster().egressips[0]
    egressip['spec']['podSelector'] = {'matchLabels': {'app': 'api'}}
    body, reason = wire.probe_pod(egressip, 'payments', '192.0.2.10:8080', 'ubi', 'run1', 60)
    assert reason is None
    assert body['metadata']['namespace'] == 'payments' and body['metadata']['generateName'] == 'egressip-probe-payments-'
    assert body['metadata']['labels']['app'] == 'api' and body['metadata']['labels']['egressip.ocp/probe'] == 'run1'
    container = body['spec']['containers'][0]
    assert container['command'] == ['curl', '-sS', '--max-time', '5', 'http://192.0.2.10:8080']
    assert body['spec']['restartPolicy'] == 'Never' and body['spec']['activeDeadlineSeconds'] == 60
    assert container['securityContext']['allowPrivilegeEscalation'] is False
    egressip['spec']['podSelector'] = {'matchExpressions': [{'key': 'egressip.ocp/probe', 'operator': 'DoesNotExist'}]}
    body, reason = wire.probe_pod(egressip, 'payments', '192.0.2.10:8080', 'ubi', 'run1', 60)
    assert body is None and 'podSelector' in reason


def test_probe_outcome_from_a_finished_pod():
    pod = {'metadata': {'name': 'p', 'namespace': 'payments', 'labels': {'egressip.ocp/egressip': 'payments'}},
           'status': {'phase': 'Succeeded'}}
    assert wire.probe_outcome(pod, '10.20.0.200\n')['source_ip'] == '10.20.0.200'
    assert wire.probe_outcome(pod, '10.20.0.200\n')['outcome'] == 'answered'
    assert wire.probe_outcome(pod, 'hello')['source_ip'] is None
    failed = dict(pod, status={'phase': 'Failed'})
    assert wire.probe_outcome(failed, 'curl: (28) timeout')['outcome'] == 'no_answer'
    pending = dict(pod, status={'phase': 'Pending', 'conditions': [{'type': 'PodScheduled', 'status': 'False', 'message': '0/6 nodes'}]})
    outcome = wire.probe_outcome(pending, None, timeout=30)
    assert outcome['outcome'] == 'not_run' and '0/6 nodes' in outcome['reason']
    running = dict(pod, status={'phase': 'Running'})
    assert wire.probe_outcome(running, None, timeout=30)['outcome'] == 'no_answer'


# --- remediation -----------------------------------------------------------------------------------

def test_remediation_unlabels_every_broken_egress_node_when_the_ips_have_somewhere_to_go():
    cluster = Cluster(count=4)
    cluster.vsphere['vms']['w0']['nics'][1]['connected'] = False
    cluster.vsphere['vms']['w3']['nics'][1]['connected'] = False  # idle and broken: must not receive the moved IP
    snapshot = cluster.snapshot()
    result = verify.evaluate(snapshot, cidr=CIDR)
    plan = remediation.plan_remediation(result, snapshot)
    assert plan['refused'] is False and plan['nodes'] == ['w0', 'w3']
    assert plan['moves'] == [{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w0', 'candidates': ['w2'], 'may_be_unassigned': False}]
    assert plan['findings'] == [] and plan['deferred'] == {}
    now = 1796300000  # 2026-12-03T12:13:20Z
    assert remediation.label_patch(now) == {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': None},
                                                         'annotations': {'egressip.ocp/remediated-at': '2026-12-03T12:13:20Z'}}}
    assert remediation.remediation_diff(['w0'], now)['after'] == {'w0': {'labels': {}, 'annotations': {'egressip.ocp/remediated-at': '2026-12-03T12:13:20Z'}}}
    assert remediation.remediated_at({'metadata': {'annotations': {'egressip.ocp/remediated-at': '2026-12-03T12:13:20Z'}}}) == now
    earlier = {'nodes': [{'metadata': {'name': 'w0', 'annotations': {'egressip.ocp/remediated-at': '2026-12-01T08:00:00Z'}}}]}
    assert remediation.remediation_diff(['w0'], now, earlier)['before'] == {
        'w0': {'labels': {'k8s.ovn.org/egress-assignable': ''}, 'annotations': {'egressip.ocp/remediated-at': '2026-12-01T08:00:00Z'}}}


def _broken(*names, count=5):
    cluster = Cluster(count=count)  # payments: 10.20.0.200 on w0, 10.20.0.201 on w1
    for name in names:
        cluster.vsphere['vms'][name]['nics'][1]['connected'] = False
    return cluster


def test_the_guards_limit_moves_the_ips_of_one_node_and_unlabels_idle_broken_ones_with_it():
    cluster = _broken('w0', 'w1', 'w3')
    cluster.egressips.append(owned(egressip_object('billing', ['10.20.0.210'], [('10.20.0.210', 'w1')])))
    snapshot = cluster.snapshot()
    plan = remediation.plan_remediation(verify.evaluate(snapshot, cidr=CIDR), snapshot, CIDR, {'limit': 1, 'now': 1796300000})
    # w1 hosts two IPs, so it goes first; w3 hosts none: unlabelled too, so that no moved IP lands on it
    assert plan['nodes'] == ['w1', 'w3'] and list(plan['deferred']) == ['w0']
    assert 'moves the egress IPs of 1 node(s), its limit (egressip_guard.max_remediations)' in plan['deferred']['w0']
    assert [item['id'] for item in plan['findings']] == ['egressip_remediation_deferred']
    assert plan['findings'][0]['severity'] == 'warning' and plan['findings'][0]['objects'] == [{'kind': 'Node', 'name': 'w0'}]
    assert sorted(move['ip'] for move in plan['moves']) == ['10.20.0.201', '10.20.0.210']


def test_the_guard_never_leaves_fewer_egress_nodes_than_the_floor():
    cluster = _broken('w0', 'w3', count=4)
    snapshot = cluster.snapshot()
    result = verify.evaluate(snapshot, cidr=CIDR)
    plan = remediation.plan_remediation(result, snapshot, CIDR, {'min_egress_nodes': 3, 'now': 1796300000})
    assert plan['nodes'] == ['w0']
    assert 'would leave 2 egress-assignable node(s), below the 3 the variables ask for' in plan['deferred']['w3']
    plan = remediation.plan_remediation(result, snapshot, CIDR, {'min_egress_nodes': 4, 'now': 1796300000})
    assert plan['nodes'] == [] and sorted(plan['deferred']) == ['w0', 'w3'] and plan['moves'] == []


def test_the_hold_down_keeps_a_node_hosting_ips_that_a_remediation_unlabelled_a_moment_ago():
    cluster = _broken('w0', 'w3')
    now = 1796300000
    for name in ('w0', 'w3'):
        cluster.node(name)['metadata']['annotations']['egressip.ocp/remediated-at'] = remediation.time_text(now - 60)
    snapshot = cluster.snapshot()
    result = verify.evaluate(snapshot, cidr=CIDR)
    plan = remediation.plan_remediation(result, snapshot, CIDR, {'hold_down': 1800, 'now': now})
    # w0 hosts an IP again and broke again: flapping, left to a person; idle w3 moves nothing when unlabelled
    assert plan['nodes'] == ['w3'] and list(plan['deferred']) == ['w0']
    assert 'unlabelled by a remediation 60 s ago, within the hold-down of 1800 s' in plan['deferred']['w0']
    plan = remediation.plan_remediation(result, snapshot, CIDR, {'hold_down': 1800, 'now': now + 1800})
    assert plan['nodes'] == ['w0', 'w3'] and plan['deferred'] == {}
    cluster.node('w0')['metadata']['annotations']['egressip.ocp/remediated-at'] = 'yesterday'  # unreadable: no hold-down
    snapshot = cluster.snapshot()
    assert remediation.plan_remediation(verify.evaluate(snapshot, cidr=CIDR), snapshot, CIDR, {'hold_down': 1800, 'now': now})['nodes'] == ['w0', 'w3']


def test_remediation_refused_when_an_ip_would_be_left_unassigned():
    cluster = Cluster(count=2)
    cluster.vsphere['vms']['w0']['nics'][1]['connected'] = False
    snapshot = cluster.snapshot()
    plan = remediation.plan_remediation(verify.evaluate(snapshot, cidr=CIDR), snapshot)
    assert plan['refused'] is True
    assert [item['id'] for item in plan['findings']] == ['egressip_remediation_refused']
    assert 'payments 10.20.0.200' in plan['findings'][0]['message'] and 'nothing was changed' in plan['findings'][0]['message']


def test_nothing_to_remediate_on_a_healthy_cluster():
    cluster = Cluster()
    snapshot = cluster.snapshot()
    assert remediation.plan_remediation(verify.evaluate(snapshot, cidr=CIDR), snapshot) == {'nodes': [], 'moves': [], 'refused': False,
                                                                                            'findings': [], 'skipped': {}, 'deferred': {}}


def test_remediation_never_removes_a_hand_made_label_or_moves_an_egress_ip_it_does_not_own():
    cluster = Cluster(count=4)
    for name in ('w0', 'w1', 'w3'):
        cluster.vsphere['vms'][name]['nics'][1]['connected'] = False
    del cluster.node('w3')['metadata']['annotations'][RECORD]  # labelled by hand
    cluster.egressips.append(egressip_object('legacy', ['192.168.10.200'], [('192.168.10.200', 'w1')]))  # primary network, hand-made
    snapshot = cluster.snapshot()
    plan = remediation.plan_remediation(verify.evaluate(snapshot, cidr=CIDR), snapshot, CIDR)
    assert plan['nodes'] == ['w0']
    assert sorted(plan['skipped']) == ['w1', 'w3']
    assert 'does not own: 192.168.10.200 (EgressIP legacy)' in plan['skipped']['w1']
    assert 'set by hand' in plan['skipped']['w3']
    assert [item['id'] for item in plan['findings']] == ['egressip_remediation_skipped'] * 2
    assert [move['from'] for move in plan['moves']] == ['w0']


def test_remediated_findings_name_where_each_ip_went():
    findings = remediation.remediated_findings([{'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w0', 'to': 'w2', 'seconds': 1.5}])
    assert findings[0]['id'] == 'egressip_blackhole_remediated'
    assert findings[0]['message'] == 'node w0 was unlabelled; payments 10.20.0.200 -> w2 in 1.50 s.'


def test_report_carries_summary_rows_and_findings():
    cluster = Cluster()
    cluster.vsphere['vms']['w0']['nics'][1]['connected'] = False
    result = cluster.evaluate()
    report = verify.report(result, network=CIDR, portgroup='ocp-egress-120')
    assert report['kind'] == 'verify' and report['summary']['ok'] is False and report['summary']['blackholed'] == 1
    assert report['network'] == {'cidr': CIDR, 'portgroup': 'ocp-egress-120'}


def test_wire_option_validation_names_field_value_and_fix():
    assert wire.validate_wire({'echo_target': '192.0.2.10:8080', 'timeout': 60, 'probes': 1, 'namespaces': {'payments': 'p'}}) == []
    assert wire.validate_wire({'echo_target': 'echo.example.com'}) == []
    messages = wire.validate_wire({'echo_target': 'http://192.0.2.10:8080/', 'timeout': 0, 'probes': 1, 'namespaces': {'payments': 3}})
    assert "wire.echo_target='http://192.0.2.10:8080/' is not host:port" in messages[0]
    assert 'wire.timeout=0 must be at least 1.' in messages
    assert any('wire.namespaces.payments=3' in message for message in messages)
    assert wire.validate_wire({'echo_target': '192.0.2.10:99999'})


def test_single_point_of_failure_is_a_warning():
    cluster = Cluster(count=2)
    result = cluster.evaluate()
    assert ids(result) == ['egressip_single_point_of_failure'] * 2
    assert result['findings'][0]['message'] == 'If node w0 fails, payments 10.20.0.200 stays unassigned.'
    assert verify.summary(result)['ok'] is True


# --- carrier loss: failover or blackhole, and the blackhole kinds that stay whatever NetworkManager does ------------

def _address_removed(cluster, name, index):
    """NetworkManager without ignore-carrier: the vNIC disconnected, the address gone from NodeNetworkState and host-cidrs."""
    cluster.vsphere['vms'][name]['nics'][1]['connected'] = False
    cluster.nns[name] = nns(name, index, address=False, state='down')
    cluster.nodes[index] = node_object(name, index, [])


def test_disconnected_nic_whose_address_went_is_a_capacity_loss_not_a_blackhole():
    cluster = Cluster(status=(('10.20.0.200', 'w1'), ('10.20.0.201', 'w2')))
    _address_removed(cluster, 'w0', 0)
    result = cluster.evaluate()
    w0 = node_row(result, 'w0')
    assert w0['path'] == 'no_address' and w0['carrier_loss'] == 'remove' and w0['problems'] == []
    assert ids(result) == ['egressip_node_capacity_lost', 'egressip_single_point_of_failure', 'egressip_single_point_of_failure']
    assert result['broken_nodes'] == []  # nothing to unlabel: OVN-K places nothing there
    assert [item['status'] for item in result['egress_ips']] == ['ok', 'ok']


def test_ip_still_on_the_node_whose_address_went_is_moving_not_blackholed():
    cluster = Cluster()
    _address_removed(cluster, 'w0', 0)
    result = cluster.evaluate()
    assert row(result, '10.20.0.200')['status'] == 'node_lacks_network'
    assert 'blackhole_nic_disconnected' not in ids(result) and 'egressip_blackhole' not in ids(result)


def test_vlan_other_than_configured_on_the_vm_host_is_a_named_blackhole():
    cluster = Cluster()
    cluster.vsphere['vlan_id'] = 120
    cluster.vsphere['portgroup_vlans'] = {'H0': 130, 'H1': 120, 'H2': 120}
    result = cluster.evaluate()
    assert row(result, '10.20.0.200')['status'] == 'blackhole'
    finding = next(item for item in result['findings'] if item['id'] == 'blackhole_portgroup_vlan_mismatch')
    assert 'VLAN 130 on ESXi host H0 where VM w0 runs now, VLAN 120 configured' in finding['message']
    assert finding['severity'] == 'error' and 'hosting 10.20.0.200' in finding['message']


def test_vlan_reference_without_configuration_is_what_most_hosts_have():
    cluster = Cluster()
    cluster.vsphere['portgroup_vlans'] = {'H0': 120, 'H1': 130, 'H2': 120}
    result = cluster.evaluate()
    assert row(result, '10.20.0.201')['status'] == 'blackhole' and row(result, '10.20.0.200')['status'] == 'ok'
    assert 'VLAN 120 on the other hosts' in next(item['message'] for item in result['findings']
                                                 if item['id'] == 'blackhole_portgroup_vlan_mismatch')


def test_portgroup_missing_on_the_current_host_is_a_named_blackhole():
    cluster = Cluster()
    cluster.vsphere['hosts']['H1'] = ['VM Network']
    result = cluster.evaluate()
    assert row(result, '10.20.0.201')['status'] == 'blackhole'
    assert 'blackhole_portgroup_missing_on_host' in ids(result)


def test_vswitch_without_uplink_on_the_vm_host_is_a_named_blackhole():
    cluster = Cluster()
    cluster.vsphere['portgroup_uplinks'] = {'H0': {'vswitch': 'vSwitch1', 'uplinks': [], 'down': []},
                                            'H1': {'vswitch': 'vSwitch1', 'uplinks': ['vmnic1'], 'down': []}}
    result = cluster.evaluate()
    assert row(result, '10.20.0.200')['status'] == 'blackhole' and row(result, '10.20.0.201')['status'] == 'ok'
    finding = next(item for item in result['findings'] if item['id'] == 'blackhole_vswitch_no_uplink')
    assert 'vSwitch vSwitch1 of port group ocp-egress-120 on ESXi host H0 where VM w0 runs now has no physical uplink' in finding['message']
    assert finding['severity'] == 'error' and 'hosting 10.20.0.200' in finding['message']


def test_vswitch_whose_uplinks_are_all_down_is_a_blackhole_one_up_is_enough():
    cluster = Cluster()
    cluster.vsphere['portgroup_uplinks'] = {'H0': {'vswitch': 'vSwitch1', 'uplinks': ['vmnic1', 'vmnic2'], 'down': ['vmnic1', 'vmnic2']},
                                            'H1': {'vswitch': 'vSwitch1', 'uplinks': ['vmnic1', 'vmnic2'], 'down': ['vmnic2']}}
    result = cluster.evaluate()
    assert row(result, '10.20.0.200')['status'] == 'blackhole' and row(result, '10.20.0.201')['status'] == 'ok'
    assert 'has every physical uplink down (vmnic1, vmnic2: no link)' in next(
        item['message'] for item in result['findings'] if item['id'] == 'blackhole_vswitch_no_uplink')


def test_uplinks_of_a_distributed_port_group_are_not_judged():
    assert verify_path._uplinks_on_host({'host': 'H0', 'name': 'w0'}, {  # pylint: disable=protected-access
        'switch_type': 'distributed', 'portgroup_uplinks': {'H0': {'vswitch': 'x', 'uplinks': [], 'down': []}}}) is None


def test_vsphere_facts_read_the_uplinks_of_the_port_group_vswitch():
    vcenter = {'datacenter': 'DC0', 'cluster': 'C0', 'not_found': None, 'distributed_switches': [], 'vms': [],
               'hosts': [{'name': 'H0', 'standard_portgroups': [{'name': 'ocp-egress-120', 'vswitch': 'vSwitch1'}],
                          'standard_switches': [{'name': 'vSwitch0', 'uplinks': ['vmnic0'], 'uplinks_down': []},
                                                {'name': 'vSwitch1', 'uplinks': ['vmnic1'], 'uplinks_down': ['vmnic1']}]},
                         {'name': 'H1', 'standard_portgroups': [{'name': 'ocp-egress-120', 'vswitch': 'vSwitch1'}],
                          'standard_switches': [{'name': 'vSwitch1', 'uplinks': ['vmnic1']}]}]}  # link state not read: not judged
    facts = verify_path.vsphere_facts(vcenter, PORTGROUP, [])
    assert facts['portgroup_uplinks'] == {'H0': {'vswitch': 'vSwitch1', 'uplinks': ['vmnic1'], 'down': ['vmnic1']}}


def _route(index, gateway='10.20.0.1'):
    return {'destination': '0.0.0.0/0', 'next-hop-address': gateway, 'next-hop-interface': 'ens224', 'metric': 200, 'table-id': 254}


def test_gateway_route_is_checked_only_when_the_gateway_is_given():
    cluster = Cluster()
    for index in range(3):
        cluster.nns['w%d' % index]['status']['currentState']['routes'] = {'config': [_route(index)], 'running': [_route(index)]}
    cluster.nns['w1']['status']['currentState']['routes'] = {'config': [], 'running': []}
    assert [item['status'] for item in cluster.evaluate()['egress_ips']] == ['ok', 'ok']
    result = cluster.evaluate(gateway='10.20.0.1')
    assert row(result, '10.20.0.201')['status'] == 'blackhole' and row(result, '10.20.0.200')['status'] == 'ok'
    finding = next(item for item in result['findings'] if item['id'] == 'blackhole_gateway_route_missing')
    assert 'no route via gateway 10.20.0.1 on interface ens224' in finding['message']


def test_carrier_loss_choice_reads_ignore_carrier_from_a_down_link_that_keeps_its_address():
    cluster = Cluster()
    assert verify_path.carrier_loss_choice('w0', nns=cluster.nns)[0] == 'remove'
    assert 'assumed' in verify_path.carrier_loss_choice('w0', nns=cluster.nns)[1]
    cluster.nns['w2'] = nns('w2', 2, state='down')
    behaviour, how = verify_path.carrier_loss_choice('w0', nns=cluster.nns)
    assert behaviour == 'keep' and 'read from node w2' in how and 'ens224 is down and still holds 10.20.0.12/24' in how
    assert verify_path.carrier_loss_choice('w0', given='remove', nns=cluster.nns) == ('remove', 'given (carrier_loss=remove)')


def test_without_a_network_to_look_for_an_idle_disconnected_nic_stays_a_broken_path():
    cluster = Cluster()
    cluster.vsphere['vms']['w2']['nics'][1]['connected'] = False
    _address_removed(cluster, 'w2', 2)
    result = cluster.evaluate(cidr=None)
    w2 = node_row(result, 'w2')
    assert w2['path'] == 'broken' and w2['carrier_loss'] is None and result['broken_nodes'] == ['w2']
