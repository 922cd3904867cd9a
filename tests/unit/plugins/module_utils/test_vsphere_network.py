"""vSphere network planning: port groups per host/switch, NIC identity, one NIC per VM, targets."""

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as net

STD_NET = {'type': 'standard', 'name': 'ocp-egress-120', 'moid': 'network-20'}
DV_NET = {'type': 'distributed', 'name': 'ocp-egress-120', 'moid': 'dvportgroup-30', 'portgroup_key': 'dvportgroup-30',
          'switch_uuid': '50 2a 3b 4c-5d6e'}


def ids(findings):
    return [item['id'] for item in findings]


def std_view(vlan=120, vswitch='vSwitch1', **security):
    view = {'vswitch': vswitch, 'vlan_id': vlan, 'promiscuous': None, 'mac_changes': None, 'forged_transmits': None}
    view.update(security)
    return view


def host(name, vswitches=('vSwitch0', 'vSwitch1'), portgroups=None):
    return {'name': name, 'vswitches': list(vswitches), 'portgroups': dict(portgroups or {})}


def nic(key, mac, backing, adapter='vmxnet3', connected=True, start_connected=True):
    """A NIC as _vsphere_facts.nic_facts describes it."""
    facts = {'key': key, 'label': 'Network adapter', 'mac': mac, 'adapter': adapter, 'network': None, 'network_moid': None,
             'portgroup_key': None, 'switch_uuid': None, 'opaque_network_id': None, 'connected': connected,
             'start_connected': start_connected}
    facts.update(backing)
    return facts


PRIMARY = {'network_moid': 'network-7', 'network': 'VM Network'}
ON_STD = {'network_moid': 'network-20', 'network': 'ocp-egress-120'}
ON_DV = {'network_moid': 'dvportgroup-30', 'network': 'ocp-egress-120', 'portgroup_key': 'dvportgroup-30', 'switch_uuid': '502a3b4c5d6e'}


def vm(name='w0', nics=None, power='poweredOn', uuid='4230AAAA-0000-0000-0000-000000000001', moid='vm-1'):
    return {'name': name, 'moid': moid, 'uuid': uuid, 'instance_uuid': 'i-' + moid, 'power_state': power,
            'nics': nics if nics is not None else [nic(4000, '00:50:56:aa:00:01', PRIMARY)]}


def target(machine, node='worker-0'):
    return {'vm': machine, 'node': node}


# --- identities ----------------------------------------------------------------------------------

def test_distributed_identity_is_portgroup_key_and_switch_uuid_not_the_label():
    assert net.nic_on_network(nic(4001, 'x', ON_DV), DV_NET)
    assert not net.nic_on_network(nic(4001, 'x', dict(ON_DV, portgroup_key='dvportgroup-31')), DV_NET)
    assert not net.nic_on_network(nic(4001, 'x', dict(ON_DV, switch_uuid='ffff')), DV_NET)
    assert not net.nic_on_network(nic(4001, 'x', ON_STD), DV_NET)


def test_standard_identity_is_network_moid_else_name():
    assert net.nic_on_network(nic(4001, 'x', ON_STD), STD_NET)
    assert not net.nic_on_network(nic(4001, 'x', dict(ON_STD, network_moid='network-99')), STD_NET)
    assert net.nic_on_network(nic(4001, 'x', {'network_moid': None, 'network': 'ocp-egress-120'}), STD_NET)
    assert not net.nic_on_network(nic(4001, 'x', ON_DV), STD_NET)
    assert not net.nic_on_network(nic(4001, 'x', {'opaque_network_id': 'nsx-1', 'network': 'ocp-egress-120'}), STD_NET)


# --- option validation -----------------------------------------------------------------------------

@pytest.mark.parametrize('vlan', [-1, 4095, 5000])
def test_vlan_outside_range_names_field_value_and_fix(vlan):
    [message] = net.validate_portgroup_options('standard', {'vlan_id': vlan})
    assert 'vlan_id=%s' % vlan in message and '0 to 4094' in message


@pytest.mark.parametrize('field,value', [('port_binding', 'static'), ('num_ports', 16), ('elastic', True)])
def test_distributed_only_options_refused_on_standard(field, value):
    [message] = net.validate_portgroup_options('standard', {field: value})
    assert '%s=%s' % (field, value) in message and 'switch_type=distributed' in message


def test_hosts_refused_on_distributed_and_elastic_with_ephemeral():
    messages = net.validate_portgroup_options('distributed', {'hosts': ['h1'], 'port_binding': 'ephemeral', 'elastic': True})
    assert len(messages) == 2
    assert 'hosts=h1' in messages[0] and 'elastic=true' in messages[1]


def test_wanted_options_are_only_those_set():
    assert net.wanted_options({'vlan_id': 120, 'promiscuous': None, 'forged_transmits': False, 'num_ports': None},
                              'standard') == {'vlan_id': 120, 'forged_transmits': False}


# --- standard port group on every host --------------------------------------------------------------

def test_standard_created_on_every_host_with_defaults_for_unset():
    plan = net.plan_standard_portgroup('pg', 'vSwitch1', {'vlan_id': 120}, [host('h0'), host('h1')])
    assert plan['findings'] == []
    assert [(h['host'], h['action']) for h in plan['hosts']] == [('h0', 'create'), ('h1', 'create')]
    assert plan['hosts'][0]['after'] == std_view(120)


def test_standard_host_without_vswitch_is_an_error_naming_the_host():
    plan = net.plan_standard_portgroup('pg', 'vSwitch1', {'vlan_id': 120}, [host('h0'), host('h1', vswitches=['vSwitch0'])])
    assert ids(plan['findings']) == ['switch_missing']
    assert 'host h1 has no vSwitch vSwitch1' in plan['findings'][0]['message']
    assert plan['findings'][0]['objects'] == [{'kind': 'HostSystem', 'name': 'h1'}]


def test_standard_on_another_vswitch_is_an_error():
    plan = net.plan_standard_portgroup('pg', 'vSwitch1', {}, [host('h0', portgroups={'pg': std_view(vswitch='vSwitch0')})])
    assert ids(plan['findings']) == ['vsphere_portgroup_on_other_vswitch']


def test_standard_only_user_set_options_compared():
    current = std_view(120, promiscuous=True)  # set by hand: the user did not mention it
    plan = net.plan_standard_portgroup('pg', 'vSwitch1', {'vlan_id': 120}, [host('h0', portgroups={'pg': current})])
    assert plan['hosts'][0]['action'] == 'none'
    plan = net.plan_standard_portgroup('pg', 'vSwitch1', {'vlan_id': 121, 'forged_transmits': False},
                                       [host('h0', portgroups={'pg': current})])
    entry = plan['hosts'][0]
    assert entry['action'] == 'update'
    assert entry['changes'] == {'forged_transmits': False, 'vlan_id': 121}
    assert entry['after'] == std_view(121, promiscuous=True, forged_transmits=False)


def test_standard_mixed_hosts_plan_each():
    hosts = [host('h0', portgroups={'pg': std_view(120)}), host('h1', portgroups={'pg': std_view(7)}), host('h2')]
    plan = net.plan_standard_portgroup('pg', 'vSwitch1', {'vlan_id': 120}, hosts)
    assert [h['action'] for h in plan['hosts']] == ['none', 'update', 'create']


def test_standard_no_hosts_is_an_error():
    assert ids(net.plan_standard_portgroup('pg', 'vSwitch1', {}, [])['findings']) == ['vsphere_cluster_without_hosts']


# --- distributed port group ------------------------------------------------------------------------------

def dv_view(**changes):
    view = {'switch': 'DSwitch1', 'vlan_id': 120, 'port_binding': 'static', 'num_ports': 8, 'elastic': True,
            'promiscuous': False, 'mac_changes': False, 'forged_transmits': False}
    view.update(changes)
    return view


def test_distributed_create_uses_vsphere_defaults_for_unset():
    plan = net.plan_distributed_portgroup('pg', 'DSwitch1', {'vlan_id': 120}, None)
    assert plan['action'] == 'create'
    assert plan['after'] == dict(dv_view(), promiscuous=None, mac_changes=None, forged_transmits=None)


def test_distributed_hand_made_settings_survive():
    current = dv_view(num_ports=64, elastic=False, promiscuous=True)
    plan = net.plan_distributed_portgroup('pg', 'DSwitch1', {'vlan_id': 120}, current)
    assert plan['action'] == 'none' and plan['changes'] == {}
    plan = net.plan_distributed_portgroup('pg', 'DSwitch1', {'vlan_id': 130, 'port_binding': 'static'}, current)
    assert plan['action'] == 'update' and plan['changes'] == {'vlan_id': 130}
    assert plan['after'] == dv_view(num_ports=64, elastic=False, promiscuous=True, vlan_id=130)


def test_distributed_trunk_vlan_compares_unequal():
    plan = net.plan_distributed_portgroup('pg', 'DSwitch1', {'vlan_id': 120}, dv_view(vlan_id='trunk:0-4094'))
    assert plan['changes'] == {'vlan_id': 120}


# --- removal ------------------------------------------------------------------------------------------------------

def test_removal_refused_while_nics_use_it_listing_vms():
    attached = [{'vm': 'w1', 'mac': 'a', 'connected': True}, {'vm': 'w0', 'mac': 'b', 'connected': False}]
    plan = net.plan_portgroup_removal('pg', ['h0'], attached, force=False)
    assert plan['action'] == 'refused'
    assert 'w0, w1' in plan['findings'][0]['message']
    assert net.plan_portgroup_removal('pg', ['h0'], attached, force=True)['action'] == 'remove'
    assert net.plan_portgroup_removal('pg', [], attached, force=False)['action'] == 'none'


# --- targets -------------------------------------------------------------------------------------------------------

def test_nodes_resolve_by_provider_id_never_by_name():
    vms = [vm('worker-0', moid='vm-1', uuid='4230AAAA-0000-0000-0000-000000000001'),
           vm('something-else', moid='vm-2', uuid='4230aaaa-0000-0000-0000-000000000002')]
    nodes = [{'name': 'worker-0', 'provider_id': 'vsphere://4230aaaa-0000-0000-0000-000000000002'}]
    targets, findings = net.resolve_targets(vms, nodes=nodes)
    assert findings == []
    assert [(t['vm']['name'], t['node']) for t in targets] == [('something-else', 'worker-0')]


def test_nodes_without_provider_id_or_vm_are_listed_each():
    vms = [vm('w0')]
    nodes = [{'name': 'n-none', 'provider_id': None}, {'name': 'n-aws', 'provider_id': 'aws:///x'},
             {'name': 'n-gone', 'provider_id': 'vsphere://4230ffff-0000-0000-0000-000000000009'}]
    targets, findings = net.resolve_targets(vms, nodes=nodes)
    assert targets == []
    assert ids(findings) == ['vsphere_node_vm_not_found', 'vsphere_node_vm_not_found', 'vsphere_node_vm_not_found']
    assert 'n-gone' in findings[2]['message'] and '4230ffff' in findings[2]['message']


def test_shared_bios_uuid_is_ambiguous():
    uuid = '4230aaaa-0000-0000-0000-00000000000a'
    vms = [vm('a', moid='vm-1', uuid=uuid), vm('b', moid='vm-2', uuid=uuid.upper())]
    targets, findings = net.resolve_targets(vms, nodes=[{'name': 'n', 'provider_id': 'vsphere://' + uuid}])
    assert targets == [] and ids(findings) == ['vsphere_vm_ambiguous']


def test_vm_refs_by_name_uuid_moid_deduplicated():
    vms = [vm('a', moid='vm-1', uuid='u1'), vm('b', moid='vm-2', uuid='u2'), vm('dup', moid='vm-3', uuid='u3'),
           vm('dup', moid='vm-4', uuid='u4')]
    refs = [{'by': 'name', 'value': 'a'}, {'by': 'uuid', 'value': 'U2'}, {'by': 'moid', 'value': 'vm-1'},
            {'by': 'moid', 'value': 'vm-3'}, {'by': 'name', 'value': 'dup'}, {'by': 'name', 'value': 'nope'}]
    targets, findings = net.resolve_targets(vms, vm_refs=refs)
    assert [t['vm']['moid'] for t in targets] == ['vm-1', 'vm-2', 'vm-3']
    assert ids(findings) == ['vsphere_vm_ambiguous', 'vsphere_vm_not_found']
    assert findings[0]['message'] == '2 VMs have the name dup (vm-3, vm-4).'
    assert findings[1]['message'] == 'no VM has the name nope.'


def test_nodes_of_vms_by_provider_id():
    nodes = [{'name': 'w0', 'provider_id': 'vsphere://4230AAAA-0000-0000-0000-000000000001'}, {'name': 'x', 'provider_id': None}]
    assert net.nodes_of_vms(nodes) == {'4230aaaa-0000-0000-0000-000000000001': 'w0'}


# --- one NIC per VM -------------------------------------------------------------------------------------------------

def test_add_when_no_nic_on_network():
    entry = net.plan_vm_nic(target(vm()), STD_NET)
    assert entry['action'] == 'add'
    assert entry['after'] == [{'key': None, 'mac': None, 'adapter': 'vmxnet3', 'connected': True, 'start_connected': True}]


def test_add_on_powered_off_vm_is_not_connected_now():
    entry = net.plan_vm_nic(target(vm(power='poweredOff')), DV_NET)
    assert entry['action'] == 'add' and entry['after'][0]['connected'] is False


def test_existing_nic_found_by_backing_with_upper_case_mac():
    machine = vm(nics=[nic(4000, 'x', PRIMARY), nic(-7, '00:50:56:AB:CD:EF', ON_DV)])
    entry = net.plan_vm_nic(target(machine), DV_NET)
    assert entry['action'] == 'none'
    assert entry['before'][0]['mac'] == '00:50:56:ab:cd:ef'


def test_disconnected_nic_is_connected():
    machine = vm(nics=[nic(4000, 'x', PRIMARY), nic(4001, 'm', ON_STD, connected=False, start_connected=False)])
    entry = net.plan_vm_nic(target(machine), STD_NET)
    assert entry['action'] == 'connect'
    assert entry['after'][0]['connected'] and entry['after'][0]['start_connected']


def test_powered_off_vm_needs_only_start_connected():
    machine = vm(power='poweredOff', nics=[nic(4001, 'm', ON_STD, connected=False, start_connected=True)])
    assert net.plan_vm_nic(target(machine), STD_NET)['action'] == 'none'


def test_ten_nic_limit_refused():
    machine = vm(nics=[nic(4000 + i, 'm%d' % i, PRIMARY) for i in range(10)])
    entry = net.plan_vm_nic(target(machine), STD_NET)
    assert entry['action'] == 'refused'
    assert ids(entry['findings']) == ['vsphere_vm_nic_limit']
    assert '10 NICs' in entry['findings'][0]['message']


def test_nine_nics_still_gets_one():
    machine = vm(nics=[nic(4000 + i, 'm%d' % i, PRIMARY) for i in range(9)])
    assert net.plan_vm_nic(target(machine), STD_NET)['action'] == 'add'


def test_two_nics_on_network_ambiguous():
    machine = vm(nics=[nic(4001, 'AA', ON_STD), nic(4002, 'bb', ON_STD)])
    entry = net.plan_vm_nic(target(machine), STD_NET)
    assert entry['action'] == 'refused' and ids(entry['findings']) == ['vsphere_vm_nic_ambiguous']
    assert 'aa, bb' in entry['findings'][0]['message']


def test_other_adapter_refused():
    entry = net.plan_vm_nic(target(vm(nics=[nic(4001, 'a', ON_STD, adapter='e1000e')])), STD_NET)
    assert ids(entry['findings']) == ['vsphere_vm_nic_adapter']


def test_absent_removes_all_on_network_and_refuses_when_node_hosts_egress_ips():
    machine = vm(nics=[nic(4000, 'x', PRIMARY), nic(4001, 'a', ON_STD)])
    assert net.plan_vm_nic(target(machine), STD_NET, state='absent')['action'] == 'remove'
    refused = net.plan_vm_nic(target(machine), STD_NET, state='absent', egress_ips=['10.20.0.200'])
    assert refused['action'] == 'refused' and ids(refused['findings']) == ['vsphere_vm_nic_hosts_egress_ips']
    assert '10.20.0.200' in refused['findings'][0]['message']
    assert net.plan_vm_nic(target(machine), STD_NET, state='absent', force=True, egress_ips=['10.20.0.200'])['action'] == 'remove'
    assert net.plan_vm_nic(target(vm()), STD_NET, state='absent')['action'] == 'none'


def test_egress_ips_by_node_from_status():
    eips = [{'status': {'items': [{'node': 'w0', 'egressIP': '10.20.0.200'}, {'node': 'w1', 'egressIP': '10.20.0.201'}]}},
            {'spec': {}}, {'status': {'items': [{'node': 'w0', 'egressIP': '10.20.0.202'}]}}]
    assert net.egress_ips_by_node(eips) == {'w0': ['10.20.0.200', '10.20.0.202'], 'w1': ['10.20.0.201']}


def test_plan_batch_uses_node_egress_ips():
    targets = [target(vm('a', moid='vm-1', nics=[nic(1, 'a', ON_STD)]), 'w0'), target(vm('b', moid='vm-2', nics=[nic(2, 'b', ON_STD)]), 'w1')]
    plan = net.plan_vm_nics(targets, STD_NET, state='absent', egress_ips_by_node={'w0': ['10.20.0.200']})
    assert [entry['action'] for entry in plan] == ['refused', 'remove']


def test_new_nic_is_the_new_mac_on_network_whatever_its_key():
    before = [nic(4000, '00:50:56:AA:00:01', PRIMARY)]
    after = before + [nic(-7, '00:50:56:aa:00:99', ON_STD)]
    assert net.new_nic(before, after, STD_NET)['key'] == -7


def test_vm_result_shape():
    entry = net.plan_vm_nic(target(vm()), STD_NET)
    result = net.vm_result(entry, nic(4001, '00:50:56:AA:00:02', ON_STD), True)
    assert result == {'name': 'w0', 'uuid': '4230AAAA-0000-0000-0000-000000000001', 'moid': 'vm-1', 'node': 'worker-0',
                      'instance_uuid': 'i-vm-1', 'action': 'add', 'changed': True, 'mac': '00:50:56:aa:00:02', 'device_key': 4001,
                      'nic_count': 1}  # as read before the run, unless the caller gives the count after it
    assert net.vm_result(entry, nic(4001, '00:50:56:AA:00:02', ON_STD), True, nic_count=2)['nic_count'] == 2
    failed = net.vm_result(entry, None, False, failed='fault')
    assert failed['failed'] and failed['error'] == 'fault' and failed['mac'] is None and failed['nic_count'] == 1


# --- node selection --------------------------------------------------------------------------------

@pytest.mark.parametrize('selector,labels,expected', [
    ({'node-role.kubernetes.io/worker': ''}, {'node-role.kubernetes.io/worker': ''}, True),
    ({'node-role.kubernetes.io/worker': ''}, {'node-role.kubernetes.io/master': ''}, False),
    ({'matchExpressions': [{'key': 'zone', 'operator': 'In', 'values': ['a', 'b']}]}, {'zone': 'b'}, True),
    ('node-role.kubernetes.io/worker', {'node-role.kubernetes.io/worker': ''}, True),
    ('node-role.kubernetes.io/worker=', {'node-role.kubernetes.io/worker': ''}, True),
    ('zone==a,!infra', {'zone': 'a'}, True),
    ('zone==a,!infra', {'zone': 'a', 'infra': ''}, False),
    ('zone!=a', {'zone': 'b'}, True),
    ('zone!=a', {'zone': 'a'}, False),
])
def test_node_selected(selector, labels, expected):
    assert net.node_selected(selector, labels) is expected


def test_planned_network_matches_no_nic_and_plans_an_add():
    network = net.planned_network('ocp-egress-120', 'DSwitch1')
    machine = vm(nics=[nic(4000, 'x', PRIMARY), nic(4001, 'y', ON_DV)])
    assert not any(net.nic_on_network(item, network) for item in machine['nics'])
    assert net.plan_vm_nic(target(machine), network)['action'] == 'add'
