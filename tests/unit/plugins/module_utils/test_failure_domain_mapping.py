"""vSphere failure domains (pure): the domains resolved from the Infrastructure and the variables, each node and MachineSet
mapped to its domain, the variables schema of egressip_vsphere.failure_domains, and preflight per domain."""

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.model import failure_domains as fd
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight as _preflight
from ansible_collections.ocp.egressip.plugins.module_utils.checks.variables_schema import validate

import _preflight_snapshots as snaps  # pylint: disable=wrong-import-order

PORTGROUP = {'name': 'ocp-egress', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120}
DEFAULTS = {'datacenter': 'DC0', 'cluster': None, 'portgroup': PORTGROUP}


def domain(name, cluster, zone, datacenter='DC0', server='vc.example.com'):
    return {'name': name, 'region': 'region-1', 'zone': zone, 'server': server,
            'topology': {'datacenter': datacenter, 'computeCluster': '/%s/host/%s' % (datacenter, cluster), 'networks': ['VM Network'],
                         'datastore': '/%s/datastore/ds' % datacenter, 'resourcePool': '/%s/host/%s/Resources' % (datacenter, cluster),
                         'folder': '/%s/vm/ocp1' % datacenter}}


def infrastructure(*domains):
    return {'spec': {'platformSpec': {'vsphere': {'failureDomains': list(domains)}}}}


INFRA = infrastructure(domain('domain-a', 'C0', 'zone-a'), domain('domain-b', 'C1', 'zone-b'))


def node(name, zone=None, machine=None, provider_id=None):
    labels = {fd.ZONE_LABEL: zone, fd.REGION_LABEL: 'region-1'} if zone else {}
    annotations = {fd.MACHINE_ANNOTATION: 'openshift-machine-api/%s' % machine} if machine else {}
    return {'metadata': {'name': name, 'labels': labels, 'annotations': annotations}, 'spec': {'providerID': provider_id}}


def machine(name, cluster, datacenter='DC0', server='vc.example.com', node_ref=None):
    return {'metadata': {'name': name, 'namespace': 'openshift-machine-api'},
            'spec': {'providerSpec': {'value': {'workspace': {
                'server': server, 'datacenter': datacenter, 'folder': '/%s/vm/ocp1' % datacenter,
                'resourcePool': '/%s/host/%s/Resources' % (datacenter, cluster)}}}},
            'status': {'nodeRef': {'name': node_ref}} if node_ref else {}}


# --- resolve ------------------------------------------------------------------------------------------

def test_every_infrastructure_domain_takes_its_topology_and_the_top_level_portgroup():
    domains, findings = fd.resolve(INFRA, [{'name': 'domain-b', 'portgroup': {'name': 'ocp-egress-b', 'vlan_id': 121}}], DEFAULTS)
    assert findings == []
    assert [(item['name'], item['datacenter'], item['cluster']) for item in domains] == [('domain-a', 'DC0', 'C0'), ('domain-b', 'DC0', 'C1')]
    assert domains[0]['portgroup'] == PORTGROUP
    assert domains[1]['portgroup'] == dict(PORTGROUP, name='ocp-egress-b', vlan_id=121)


def test_an_entry_overrides_datacenter_and_cluster_and_merges_security():
    defaults = dict(DEFAULTS, portgroup=dict(PORTGROUP, security={'promiscuous': False, 'forged_transmits': False}))
    entries = [{'name': 'domain-a', 'datacenter': 'DC9', 'cluster': 'X', 'portgroup': {'security': {'forged_transmits': True}}}]
    domains, findings = fd.resolve(INFRA, entries, defaults)
    assert not findings
    assert (domains[0]['datacenter'], domains[0]['cluster'], domains[0]['compute_cluster']) == ('DC9', 'X', '/DC0/host/C0')
    assert domains[0]['portgroup']['security'] == {'promiscuous': False, 'forged_transmits': True}


def test_unknown_domain_name_is_refused_with_the_names_the_infrastructure_has():
    _domains, findings = fd.resolve(INFRA, [{'name': 'domain-c'}], DEFAULTS)
    assert [item['id'] for item in findings] == ['failure_domain_unknown']
    assert "'domain-c'" in findings[0]['message'] and 'domain-a, domain-b' in findings[0]['message']


def test_without_infrastructure_domains_the_entries_are_the_domains_and_need_a_cluster():
    domains, findings = fd.resolve(None, [{'name': 'a', 'cluster': 'C0'}, {'name': 'b'}], DEFAULTS)
    assert [item['name'] for item in domains] == ['a', 'b'] and domains[0]['compute_cluster'] == '/DC0/host/C0'
    assert [item['id'] for item in findings] == ['failure_domain_incomplete'] and 'domain b has no cluster' in findings[0]['message']


def test_a_domain_without_portgroup_name_is_incomplete():
    _domains, findings = fd.resolve(INFRA, [], dict(DEFAULTS, portgroup={}))
    assert [item['id'] for item in findings] == ['failure_domain_incomplete'] * 2 and 'portgroup.name' in findings[0]['message']


def test_cluster_of_path():
    assert fd.cluster_of_path('/DC0/host/DC0_C1') == 'DC0_C1'
    assert fd.cluster_of_path('/DC0/host/folder/C2/') == 'C2'
    assert fd.cluster_of_path('DC0_C1') is None and fd.cluster_of_path(None) is None


# --- node -> domain ----------------------------------------------------------------------------------

def domains():
    return fd.resolve(INFRA, [], DEFAULTS)[0]


def test_the_machine_workspace_decides_before_the_labels():
    nodes = [node('w0', zone='zone-a', machine='w0')]  # labels say a, the Machine says b: the Machine wins
    mapping, findings = fd.map_nodes(nodes, [machine('w0', 'C1')], domains())
    assert mapping == {'w0': 'domain-b'} and findings == []
    assert fd.node_domain(nodes[0], [machine('w0', 'C1')], domains())[1] == 'workspace'


def test_machine_found_by_node_ref_or_provider_id():
    by_ref = machine('m1', 'C1', node_ref='w1')
    by_provider = dict(machine('m2', 'C0'), spec=dict(machine('m2', 'C0')['spec'], providerID='vsphere://42'))
    mapping, _findings = fd.map_nodes([node('w1'), node('w2', provider_id='vsphere://42')], [by_ref, by_provider], domains())
    assert mapping == {'w1': 'domain-b', 'w2': 'domain-a'}


def test_labels_decide_without_a_matching_machine():
    mapping, findings = fd.map_nodes([node('w0', zone='zone-b')], [], domains())
    assert mapping == {'w0': 'domain-b'} and not findings


def test_a_workspace_of_another_server_or_datacenter_falls_back_to_the_labels():
    other = machine('w0', 'C1', server='other-vc')
    assert fd.node_domain(node('w0', machine='w0'), [other], domains()) == (None, None)
    assert fd.node_domain(node('w0', zone='zone-a', machine='w0'), [other], domains())[0]['name'] == 'domain-a'


def test_a_node_of_no_domain_is_a_named_finding():
    mapping, findings = fd.map_nodes([node('w9', zone='zone-z', machine='w9')], [machine('w9', 'C7')], domains())
    assert mapping == {} and [item['id'] for item in findings] == ['failure_domain_node_unmapped']
    assert 'node w9' in findings[0]['message'] and "zone label 'zone-z'" in findings[0]['message']
    assert '/DC0/host/C7/Resources' in findings[0]['message']


def test_region_must_agree_where_both_are_known():
    item = node('w0', zone='zone-a')
    item['metadata']['labels'][fd.REGION_LABEL] = 'region-2'
    assert fd.label_domain(item['metadata']['labels'], domains()) is None


def test_machineset_workspace_domain():
    workspace = machine('x', 'C1')['spec']['providerSpec']['value']['workspace']
    machineset = {'spec': {'template': {'spec': {'providerSpec': {'value': {'workspace': workspace}}}}}}
    assert fd.workspace_domain(fd.machineset_workspace(machineset), domains())['name'] == 'domain-b'
    assert fd.workspace_domain({}, domains()) is None


def test_a_pool_below_the_domain_cluster_matches():
    workspace = {'datacenter': 'DC0', 'resourcePool': '/DC0/host/C1/Resources/ocp'}
    assert fd.workspace_domain(workspace, domains())['name'] == 'domain-b'
    assert fd.workspace_domain({'datacenter': 'DC0'}, domains()) is None  # two domains in DC0: undecided


# --- the variables schema ----------------------------------------------------------------------------

def test_schema_accepts_failure_domains_and_names_bad_keys():
    good = {'egressip_vsphere': {'datacenter': 'DC0', 'cluster': 'C0', 'portgroup': PORTGROUP,
                                 'failure_domains': [{'name': 'domain-b', 'cluster': 'C1', 'portgroup': {'name': 'ocp-egress-b'}}]}}
    assert validate(good) == []
    bad = copy.deepcopy(good)
    bad['egressip_vsphere']['failure_domains'] += [{'name': 'domain-b', 'portgroup': {'vlan_id': 5000}}, {'cluser': 'C2'}]
    found = dict((item['message'].split(' ')[0], item) for item in validate(bad))
    assert 'egressip_vsphere.failure_domains[1].portgroup.vlan_id' in found
    assert 'did you mean cluster?' in found['egressip_vsphere.failure_domains[2].cluser']['message']
    assert 'has no name' in found['egressip_vsphere.failure_domains[2]']['message']
    assert 'domain-b more than once' in found['egressip_vsphere.failure_domains']['message']


# --- preflight per domain ------------------------------------------------------------------------------

def two_domain_snapshot(portgroup_on_b=True):
    """The base snapshot with the workers in two vSphere clusters (w0, w2 in C1; w1 in C0), one domain each."""
    snap = snaps.base_snapshot()
    snap['infrastructure']['spec']['platformSpec']['vsphere']['failureDomains'] = [
        domain('domain-a', 'DC0_C0', 'zone-a'), domain('domain-b', 'DC0_C1', 'zone-b')]
    clusters = {'ocp1-worker-0': 'DC0_C1', 'ocp1-worker-1': 'DC0_C0', 'ocp1-worker-2': 'DC0_C1'}
    for item in snap['machines']:
        item['spec']['providerSpec']['value']['workspace'] = machine('x', clusters[item['metadata']['name']])['spec']['providerSpec'][
            'value']['workspace']

    def read(cluster, hosts, vms, portgroup):
        read = copy.deepcopy(snap['vsphere'])
        read.update(cluster=cluster, hosts=[snaps.host(name) for name in hosts], vms=vms)
        for item in read['hosts']:
            if portgroup:
                item['standard_portgroups'].append({'name': portgroup, 'vswitch': 'vSwitch1', 'vlan_id': 120})
        return read
    vms = snap['vsphere']['vms']
    config_pg = snap['config']['vsphere']['portgroup']
    reads = [read('DC0_C0', ['DC0_C0_H0', 'DC0_C0_H1'], vms, 'ocp-egress-120'),
             read('DC0_C1', ['DC0_C1_H0', 'DC0_C1_H1'], vms, 'ocp-egress-b' if portgroup_on_b else None)]
    snap['vsphere'].update(hosts=reads[0]['hosts'] + reads[1]['hosts'], cluster='DC0_C0, DC0_C1', domain_findings=[], domains=[
        {'name': 'domain-a', 'datacenter': 'DC0', 'cluster': 'DC0_C0', 'zone': 'zone-a', 'region': 'region-1',
         'server': 'vc.example.com', 'compute_cluster': '/DC0/host/DC0_C0', 'resource_pool': '/DC0/host/DC0_C0/Resources',
         'portgroup': dict(config_pg), 'vsphere': reads[0]},
        {'name': 'domain-b', 'datacenter': 'DC0', 'cluster': 'DC0_C1', 'zone': 'zone-b', 'region': 'region-1',
         'server': 'vc.example.com', 'compute_cluster': '/DC0/host/DC0_C1', 'resource_pool': '/DC0/host/DC0_C1/Resources',
         'portgroup': dict(config_pg, name='ocp-egress-b'), 'vsphere': reads[1]}])
    snap['config']['vsphere']['failure_domains'] = [{'name': 'domain-b', 'portgroup': {'name': 'ocp-egress-b'}}]
    return snap


def findings_of(snap, mode='audit'):
    return _preflight.run_checks(snap, mode)


def test_preflight_checks_each_domain_with_its_own_portgroup():
    found = findings_of(two_domain_snapshot())
    unwanted = ('portgroup_missing', 'failure_domain_portgroup_missing', 'failure_domain_node_unmapped')
    assert not [item for item in found if item['id'] in unwanted]


def test_preflight_flags_the_domain_whose_portgroup_is_missing():
    found = [item for item in findings_of(two_domain_snapshot(portgroup_on_b=False)) if item['id'] == 'failure_domain_portgroup_missing']
    assert [item['severity'] for item in found] == ['error']
    assert found[0]['message'].startswith('Failure domain domain-b (datacenter DC0, cluster DC0_C1): ')
    assert 'ocp-egress-b' in found[0]['message']
    planned = [item for item in findings_of(two_domain_snapshot(portgroup_on_b=False), 'plan')
               if item['id'] == 'failure_domain_portgroup_missing']
    assert [item['severity'] for item in planned] == ['info'] and 'will create' in planned[0]['message']


def test_preflight_names_a_node_of_no_domain():
    snap = two_domain_snapshot()
    snap['machines'] = [item for item in snap['machines'] if item['metadata']['name'] != 'ocp1-worker-1']
    found = [item for item in findings_of(snap) if item['id'] == 'failure_domain_node_unmapped']
    assert [item['objects'] for item in found] == [[{'kind': 'Node', 'name': 'ocp1-worker-1'}]]


def test_preflight_names_a_domain_whose_cluster_is_not_found():
    snap = two_domain_snapshot()
    snap['vsphere']['domains'][1]['vsphere'] = {'datacenter': None, 'cluster': None, 'not_found': "vSphere cluster 'DC0_C1' not found"}
    found = [item for item in findings_of(snap) if item['id'] == 'vsphere_cluster_not_found']
    assert [item['message'] for item in found] == ["Failure domain domain-b: vSphere cluster 'DC0_C1' not found"]


# --- verify per domain ---------------------------------------------------------------------------------

def test_verify_checks_each_node_on_its_own_domains_portgroup():
    from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path as vp  # pylint: disable=import-outside-toplevel

    def facts(portgroup, host, vm_name, node, network):
        read = {'datacenter': 'DC0', 'cluster': host.rsplit('_', 1)[0], 'not_found': None,
                'hosts': [snaps.host(host, [{'name': 'VM Network', 'vswitch': 'vSwitch0', 'vlan_id': 0},
                                            {'name': portgroup, 'vswitch': 'vSwitch1', 'vlan_id': 120}])],
                'distributed_switches': [], 'vms': [dict(snaps.vm(vm_name, 3, [snaps.nic(3), snaps.nic(13, network)]), node=node, host=host)]}
        return vp.vsphere_facts(read, {'name': portgroup, 'switch_type': 'standard', 'switch': 'vSwitch1'}, [])
    merged = vp.domain_facts([('domain-a', ['w1'], facts('ocp-egress-a', 'DC0_C0_H0', 'w1', 'w1', 'ocp-egress-a')),
                              ('domain-b', ['w0'], facts('ocp-egress-b', 'DC0_C1_H0', 'w0', 'w0', 'ocp-egress-b'))])
    for node, portgroup in (('w1', 'ocp-egress-a'), ('w0', 'ocp-egress-b')):
        path = vp.vsphere_path(node, merged)
        assert path['problems'] == [] and path['nic']['network'] == portgroup, (node, path)
    assert set(merged['vms']) == {'w0', 'w1'} and merged['findings'] == []
    # without the domains, w0's NIC on domain-b's port group is not on the (first) port group checked
    assert vp.vsphere_path('w0', dict(merged, by_node={}))['problems']
