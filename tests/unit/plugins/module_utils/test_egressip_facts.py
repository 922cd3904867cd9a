"""The egressip_info result built from Node and EgressIP dicts (no server)."""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.model.egressip_facts import egressip_facts, is_egress_assignable, is_ready


def api_node(name, primary, secondary=None, assignable=False, ready=True, host_cidrs=None, egress_ips=None, extra_annotations=None):
    cidrs = host_cidrs if host_cidrs is not None else [primary] + ([secondary] if secondary else [])
    annotations = {
        'k8s.ovn.org/host-cidrs': json.dumps(cidrs),
        'k8s.ovn.org/node-primary-ifaddr': json.dumps({'ipv4': primary}),
    }
    if egress_ips is not None:
        annotations['k8s.ovn.org/secondary-host-egress-ips'] = json.dumps(egress_ips)
    annotations.update(extra_annotations or {})
    labels = {'kubernetes.io/hostname': name}
    if assignable:
        labels['k8s.ovn.org/egress-assignable'] = ''
    return {
        'metadata': {'name': name, 'labels': labels, 'annotations': annotations},
        'spec': {'providerID': 'vsphere://4237a1b2-0c1d-2e3f-4a5b-6c7d8e9f0a%02d' % int(name[-1])},
        'status': {'conditions': [{'type': 'MemoryPressure', 'status': 'False'}, {'type': 'Ready', 'status': 'True' if ready else 'False'}]},
    }


def egressip(name, ips, items=(), mark=None):
    metadata = {'name': name, 'resourceVersion': '42'}
    if mark:
        metadata['annotations'] = {'k8s.ovn.org/egressip-mark': mark}
    obj = {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': metadata,
           'spec': {'egressIPs': list(ips), 'namespaceSelector': {'matchLabels': {'team': name}}}}
    if items:
        obj['status'] = {'items': [{'node': node, 'egressIP': ip} for node, ip in items]}
    return obj


NODES = [
    api_node('master-0', '192.168.10.11/24'),
    api_node('worker-0', '192.168.10.14/24', '10.20.0.11/24', assignable=True, egress_ips=['10.20.0.200']),
    api_node('worker-1', '192.168.10.15/24', '10.20.0.12/24', assignable=True),
    api_node('worker-2', '192.168.10.16/24', '10.20.0.13/24', ready=False),
]


def test_labels_and_readiness():
    assert is_egress_assignable(NODES[1]) and not is_egress_assignable(NODES[0])
    assert is_ready(NODES[1]) and not is_ready(NODES[3])
    assert not is_ready({'metadata': {'name': 'x'}})
    assert not is_egress_assignable({})


def test_result_shape_and_classification():
    result = egressip_facts(NODES, [
        egressip('payments', ['10.20.0.200', '10.20.0.201'], items=[('worker-0', '10.20.0.200')], mark='50000'),
        egressip('audit', ['192.168.10.200', '172.16.9.9']),
    ])
    assert [item['name'] for item in result['egressips']] == ['audit', 'payments']  # sorted
    assert result['egress_assignable_nodes'] == ['worker-0', 'worker-1']
    assert result['notes'] == []

    payments = result['egressips'][1]
    assert payments['egress_ips'] == ['10.20.0.200', '10.20.0.201']
    assert payments['mark'] == '50000' and payments['resource_version'] == '42'
    assert payments['namespace_selector'] == {'matchLabels': {'team': 'payments'}}
    assert payments['pod_selector'] is None
    assert payments['status_items'] == [{'node': 'worker-0', 'egress_ip': '10.20.0.200'}]
    assert payments['all_assigned'] is False
    assert payments['ips'][0] == {
        'ip': '10.20.0.200', 'network': 'secondary', 'subnet': '10.20.0.0/24', 'assigned_node': 'worker-0',
        'candidate_nodes': ['worker-0', 'worker-1'],  # worker-2 has the subnet but no label
        'node_address_conflicts': [],
    }
    assert payments['ips'][1]['assigned_node'] is None
    assert payments['spec']['egressIPs'] == ['10.20.0.200', '10.20.0.201']
    assert payments['status'] == {'items': [{'node': 'worker-0', 'egressIP': '10.20.0.200'}]}

    audit = result['egressips'][0]
    assert audit['ips'][0]['network'] == 'primary' and audit['ips'][0]['subnet'] == '192.168.10.0/24'
    assert audit['ips'][0]['candidate_nodes'] == ['worker-0', 'worker-1']
    assert audit['ips'][1] == {'ip': '172.16.9.9', 'network': 'none', 'subnet': None, 'assigned_node': None,
                               'candidate_nodes': [], 'node_address_conflicts': []}
    assert audit['status'] == {} and audit['status_items'] == [] and audit['mark'] is None


def test_node_entries():
    result = egressip_facts(NODES, [egressip('payments', ['10.20.0.200'], items=[('worker-0', '10.20.0.200')])])
    names = [item['name'] for item in result['nodes']]
    assert names == ['master-0', 'worker-0', 'worker-1', 'worker-2']
    worker0 = result['nodes'][1]
    assert worker0 == {
        'name': 'worker-0',
        'egress_assignable': True,
        'ready': True,
        'provider_id': 'vsphere://4237a1b2-0c1d-2e3f-4a5b-6c7d8e9f0a00',
        'host_cidrs': ['192.168.10.14/24', '10.20.0.11/24'],
        'primary_ifaddr': {'ipv4': '192.168.10.14/24'},
        'secondary_host_egress_ips': ['10.20.0.200'],
        'primary_subnets': ['192.168.10.0/24'],
        'secondary_subnets': ['10.20.0.0/24'],
        'assigned_egress_ips': [{'egressip': 'payments', 'ip': '10.20.0.200'}],
        'notes': [],
    }
    assert result['nodes'][0]['secondary_subnets'] == [] and result['nodes'][0]['secondary_host_egress_ips'] is None
    assert result['nodes'][3]['ready'] is False


def test_all_assigned_and_ipv6_status_match():
    nodes = [api_node('worker-0', '192.168.10.14/24', host_cidrs=['192.168.10.14/24', 'fd00:20::11/64'], assignable=True)]
    result = egressip_facts(nodes, [egressip('v6', ['fd00:20:0::200'], items=[('worker-0', 'fd00:20::200')])])
    item = result['egressips'][0]
    assert item['all_assigned'] is True
    assert item['ips'][0]['assigned_node'] == 'worker-0'  # same address written differently
    assert item['ips'][0]['network'] == 'secondary' and item['ips'][0]['subnet'] == 'fd00:20::/64'


def test_ip_equal_to_a_node_address_is_reported():
    result = egressip_facts(NODES, [egressip('clash', ['10.20.0.12'])])
    assert result['egressips'][0]['ips'][0]['node_address_conflicts'] == ['worker-1']


def test_bad_annotation_and_bad_ip_become_notes():
    broken = api_node('worker-5', '192.168.10.19/24', '10.20.0.19/24', assignable=True,
                      extra_annotations={'k8s.ovn.org/host-cidrs': 'not json'})
    result = egressip_facts(NODES + [broken], [egressip('typo', ['10.20.0.300'])])
    node5 = [item for item in result['nodes'] if item['name'] == 'worker-5'][0]
    assert node5['host_cidrs'] is None and node5['secondary_subnets'] == []
    assert len(node5['notes']) == 1 and 'k8s.ovn.org/host-cidrs' in node5['notes'][0]
    assert node5['notes'][0] in result['notes']
    assert "EgressIP typo: '10.20.0.300' is not an IP address" in result['notes']
    assert result['egressips'][0]['ips'][0]['network'] == 'none'


def test_empty_cluster():
    assert egressip_facts([], []) == {'egressips': [], 'nodes': [], 'egress_assignable_nodes': [], 'notes': []}
