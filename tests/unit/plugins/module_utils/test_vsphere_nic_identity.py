"""The collection's NIC by MAC (issue 13): a changed port group moves it, a concurrent writer's duplicate is removed,
MachineSet/Machine devices of an earlier port group name are renamed, not doubled."""

from pyVmomi import vim

from ansible_collections.ocp.egressip.plugins.module_utils.plan import machine_api as mapi
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight as _preflight
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as net
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere_network_io as io

from _preflight_snapshots import base_snapshot  # pylint: disable=wrong-import-order

NEW = {'type': 'standard', 'name': 'egress-new', 'moid': 'network-21'}
PRIMARY = {'network_moid': 'network-7', 'network': 'VM Network'}
OLD = {'network_moid': 'network-20', 'network': 'egress-old'}
ON_NEW = {'network_moid': 'network-21', 'network': 'egress-new'}
OWN_MAC = '00:50:56:80:00:10'


def nic(key, mac, backing, adapter='vmxnet3'):
    facts = {'key': key, 'mac': mac, 'adapter': adapter, 'network': None, 'network_moid': None, 'portgroup_key': None,
             'switch_uuid': None, 'opaque_network_id': None, 'connected': True, 'start_connected': True}
    facts.update(backing)
    return facts


def target(nics, node='w0'):
    return {'vm': {'name': 'vm-' + node, 'moid': 'vm-1', 'uuid': 'u', 'power_state': 'poweredOn', 'nics': nics,
                   'change_version': '2026-01-01T00:00:00.000000Z'}, 'node': node}


def plan(nics, own=(OWN_MAC,)):
    return net.plan_vm_nic(target(nics), NEW, own_macs=own)


def test_the_policy_nic_on_another_network_is_moved_with_its_mac_not_doubled():
    entry = plan([nic(4000, '00:50:56:80:00:01', PRIMARY), nic(4001, OWN_MAC.upper(), OLD)])
    assert entry['action'] == 'move' and entry['previous_network'] == 'egress-old'
    assert [item['key'] for item in entry['nics']] == [4001]
    assert entry['before'] == [{'key': 4001, 'mac': OWN_MAC, 'adapter': 'vmxnet3', 'connected': True, 'start_connected': True,
                                'network': 'egress-old'}]
    assert entry['after'] == [dict(entry['before'][0], network='egress-new')]
    assert entry['change_version'] == '2026-01-01T00:00:00.000000Z'
    result = net.vm_result(entry, entry['nics'][0], True)
    assert result['mac'] == OWN_MAC and result['previous_network'] == 'egress-old'


def test_without_a_policy_mac_a_nic_elsewhere_is_left_and_a_new_one_added():
    assert plan([nic(4000, '00:50:56:80:00:01', PRIMARY), nic(4001, OWN_MAC, OLD)], own=())['action'] == 'add'


def test_a_policy_mac_already_on_the_network_is_kept():
    assert plan([nic(4000, '00:50:56:80:00:01', PRIMARY), nic(4001, OWN_MAC, ON_NEW)])['action'] == 'none'


def test_a_hand_removed_nic_gets_a_new_one():
    assert plan([nic(4000, '00:50:56:80:00:01', PRIMARY)])['action'] == 'add'


def test_move_refused_when_it_cannot_tell_which_nic_is_the_collections():
    other_on_new = plan([nic(4000, '00:50:56:80:00:01', PRIMARY), nic(4001, OWN_MAC, OLD), nic(4002, '00:50:56:80:00:99', ON_NEW)])
    two_owned = plan([nic(4000, '00:50:56:80:00:01', PRIMARY), nic(4001, OWN_MAC, OLD), nic(4002, '00:50:56:80:00:11', OLD)],
                     own=(OWN_MAC, '00:50:56:80:00:11'))
    only_nic = plan([nic(4000, OWN_MAC, PRIMARY)])
    for entry in (other_on_new, two_owned, only_nic):
        assert entry['action'] == 'refused', entry
        assert [item['id'] for item in entry['findings']] == ['vsphere_vm_nic_move_refused']
    assert 'primary network' in only_nic['findings'][0]['message']


def test_own_macs_by_node_from_policy_allocations():
    allocations = [{'node': 'w0', 'mac': OWN_MAC.upper()}, None, {'node': 'w1', 'mac': None}]
    assert net.own_macs_by_node(allocations) == {'w0': [OWN_MAC]}


def test_duplicates_every_run_keeps_the_same_nic_and_removes_only_its_own():
    mine, theirs = nic(4001, '00:50:56:80:00:20', ON_NEW), nic(4002, '00:50:56:80:00:21', ON_NEW)
    before = [nic(4000, '00:50:56:80:00:01', PRIMARY)]
    after = before + [mine, theirs]
    # the run that added 4001 keeps it (lowest key), the run that added 4002 removes its own
    assert net.duplicate_nics(before, after, NEW) == (mine, [theirs])
    assert net.duplicate_nics(before + [mine], after, NEW) == (mine, [theirs])
    assert net.duplicate_nics(before + [theirs], after, NEW) == (mine, [])
    # a NIC a policy names is kept whatever its key
    assert net.duplicate_nics(before, after, NEW, own_macs=('00:50:56:80:00:21',)) == (theirs, [mine])
    assert net.duplicate_nics(before, before + [mine], NEW) == (None, [])


def machineset(devices):
    return {'kind': 'MachineSet', 'metadata': {'name': 'ms', 'namespace': 'ns'},
            'spec': {'template': {'spec': {'providerSpec': {'value': {'network': {'devices': devices}}}}}}}


def test_a_template_device_of_an_earlier_name_is_renamed_in_place():
    devices = [{'networkName': 'VM Network'}, {'networkName': 'egress-old', 'nameservers': ['10.0.0.2']}, {'networkName': 'backup'}]
    entry = mapi.plan_machineset(machineset(devices), 'egress-new', previous=['egress-old'])
    assert entry['action'] == 'replace'
    assert entry['after'] == [devices[0], {'networkName': 'egress-new', 'nameservers': ['10.0.0.2']}, devices[2]]
    assert entry['patch'] == [{'op': 'test', 'path': '/spec/template/spec/providerSpec/value/network/devices', 'value': devices},
                              {'op': 'replace', 'path': '/spec/template/spec/providerSpec/value/network/devices/1/networkName',
                               'value': 'egress-new'}]
    assert mapi.plan_machineset(machineset(devices), 'egress-new')['action'] == 'append'


def test_two_devices_of_earlier_names_are_refused():
    devices = [{'networkName': 'VM Network'}, {'networkName': 'egress-old'}, {'networkName': 'egress-older'}]
    entry = mapi.plan_machineset(machineset(devices), 'egress-new', previous=['egress-old', 'egress-older'])
    assert entry['action'] == 'refused' and [item['id'] for item in entry['findings']] == ['machine_api_device_rename_ambiguous']


def test_stale_names_skip_the_primary_device_and_existing_networks():
    obj = machineset([{'networkName': 'gone-primary'}, {'networkName': '/DC0/network/egress-new'}, {'networkName': 'egress-old'}])
    assert mapi.stale_device_names(obj, mapi.TEMPLATE_DEVICES_PATH, ['VM Network', 'egress-new']) == ['egress-old']


def machine(devices):
    return {'kind': 'Machine', 'metadata': {'name': 'm', 'namespace': 'ns', 'uid': 'x'},
            'spec': {'providerSpec': {'value': {'network': {'devices': devices}}}}}


def test_a_consistent_machine_of_an_earlier_name_is_renamed_with_align():
    devices = [{'networkName': 'VM Network'}, {'networkName': 'egress-old'}]
    vm = {'name': 'm', 'nic_count': 2}
    entry = mapi.plan_machine(machine(devices), vm, 'egress-new', True, True, previous=['egress-old'])
    assert entry['action'] == 'replace' and entry['after'][1] == {'networkName': 'egress-new'}
    assert mapi.plan_machine(machine(devices), vm, 'egress-new', True, False, previous=['egress-old'])['action'] == 'none'
    assert mapi.machine_nic_agrees(machine(devices), vm, 'egress-new')


def test_a_machine_whose_vm_lost_the_egress_nic_advises_enable_not_align():
    entry = mapi.plan_machine(machine([{'networkName': 'VM Network'}, {'networkName': 'egress-new'}]), {'name': 'm', 'nic_count': 1},
                              'egress-new', False, True)
    assert entry['action'] == 'report'
    assert 'run enable' in entry['findings'][0]['message'] and 'align_machines cannot help' in entry['findings'][0]['message']


def test_a_task_error_as_pyvmomi_hands_it_over_names_the_fault_and_vcenters_message():
    error = vim.fault.ConcurrentAccess(msg='Cannot complete operation due to concurrent modification by another operation.')
    text = io.task_error_text(error)
    assert text == 'ConcurrentAccess: Cannot complete operation due to concurrent modification by another operation.'
    assert io.concurrent_change(text) and not io.concurrent_change('SystemError: disk full') and not io.concurrent_change(None)


def test_preflight_refuses_a_move_that_cannot_be_told_before_any_write():
    """The same plan as vsphere_vm_nic's, on preflight's snapshot: the refusal comes before the port group step writes."""
    snap = base_snapshot()
    vm = next(item for item in snap['vsphere']['vms'] if item['name'] == 'ocp1-worker-0')
    own = dict(vm['nics'][0], mac='00:50:56:80:01:01', key=4001, network='egress-old')
    other = dict(vm['nics'][0], mac='00:50:56:80:01:02', key=4002, network=snap['config']['vsphere']['portgroup']['name'])
    vm['nics'] = vm['nics'] + [own, other]
    snap['nncps'] = [{'metadata': {'name': 'egressip-ocp1-worker-0', 'labels': {'egressip.ocp/managed-by': 'ocp.egressip'},
                                   'annotations': {'egressip.ocp/node': 'ocp1-worker-0', 'egressip.ocp/addresses': '10.20.0.11/24'}},
                      'spec': {'desiredState': {'interfaces': [{'mac-address': '00:50:56:80:01:01'}]}}}]
    found = [item for item in _preflight.run_checks(snap) if item['id'] == 'vsphere_vm_nic_move_refused']
    assert found and found[0]['severity'] == 'error' and '00:50:56:80:01:01 on egress-old' in found[0]['message'], found
