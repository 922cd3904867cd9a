"""vsphere_vm_nic against the twin: one vmxnet3 NIC per node VM on the egress port group.

Tests run in file order and build on each other (one twin per module): check mode, create,
rerun, request cost, refusals, injected task failure, absent.
"""

import json

import pytest

from pyVim.task import WaitForTask
from pyVmomi import vim

from twin.fixture import kube_writes, vcsim_writes

import _vsphere_objects as vo

TWIN_OPTIONS = {'workers': 5}
PORTGROUP = 'ocp-egress-120'
WORKERS = ['ocp1-worker-%d' % i for i in range(5)]
WORKER_SELECTOR = {'node-role.kubernetes.io/worker': ''}


@pytest.fixture(scope='module')
def portgroup(twin):
    """The egress distributed port group on DSwitch1, made with plain pyVmomi (test arrangement)."""
    portgroup = vo.add_distributed_portgroup(twin, PORTGROUP, vlan=120, auto_expand=True)
    twin.reset_vcsim_requests()
    return portgroup


def vm_nics(twin, name, portgroup=None):
    vm = next(vm for vm in twin.inventory()['vms'] if vm['name'] == name)
    return [nic for nic in vm['nics'] if portgroup is None or nic['portgroup_key'] == portgroup['key']]


def args(**extra):
    base = {'datacenter': 'DC0', 'network': PORTGROUP}
    base.update(extra)
    return base


def add_nics(twin, vm_name, count, network='VM Network'):
    """Add plain NICs by hand (test arrangement for the limit and ambiguity cases)."""
    vm = vo.find(twin, vim.VirtualMachine, vm_name)
    changes = []
    for index in range(count):
        if isinstance(network, dict):
            backing = vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
                port=vim.dvs.PortConnection(portgroupKey=network['key'], switchUuid=network['switch_uuid']))
        else:
            backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=network)
        nic = vim.vm.device.VirtualVmxnet3(key=-100 - index, backing=backing)
        changes.append(vim.vm.device.VirtualDeviceSpec(operation='add', device=nic))
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=changes)))


def counts(twin):
    return dict(twin.vcsim_requests()['counts'])


def test_check_mode_writes_nothing(twin, run_module, portgroup):
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    result = run_module('vsphere_vm_nic', args(node_selector=WORKER_SELECTOR), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True
    assert [vm['action'] for vm in result['vms']] == ['add'] * 5
    assert all(vm['mac'] is None for vm in result['vms'])
    assert result['diff']['before'] == dict((name, []) for name in WORKERS)
    assert result['diff']['after']['ocp1-worker-0'][0]['adapter'] == 'vmxnet3'
    assert vcsim_writes(twin) == {}
    assert kube_writes(twin) == 0
    assert all(vm_nics(twin, name, portgroup) == [] for name in WORKERS)


def test_create_one_connected_vmxnet3_nic_per_worker(twin, run_module, portgroup):
    result = run_module('vsphere_vm_nic', args(node_selector=WORKER_SELECTOR), diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True
    assert vcsim_writes(twin) == {'ReconfigVM_Task': 5}
    by_node = dict((vm['node'], vm) for vm in result['vms'])
    assert sorted(by_node) == WORKERS
    for name in WORKERS:
        [nic] = vm_nics(twin, name, portgroup)
        assert nic['adapter'] == 'vmxnet3' and nic['connected'] and nic['start_connected']
        assert nic['switch_uuid'] == portgroup_switch_uuid(twin)
        assert by_node[name]['mac'] == nic['mac'].lower()
        assert by_node[name]['device_key'] == nic['key']
        assert by_node[name]['changed'] is True and by_node[name]['name'] == name
        assert result['diff']['after'][name] == [{'key': nic['key'], 'mac': nic['mac'].lower(), 'adapter': 'vmxnet3',
                                                  'connected': True, 'start_connected': True}]
    # the primary NIC is untouched
    assert all(len(vm_nics(twin, name)) == 2 for name in WORKERS)
    # what Machine API compares (machineset_network takes these entries as its vms option): NICs after the run
    for name in WORKERS:
        assert by_node[name]['nic_count'] == 2
        assert by_node[name]['instance_uuid'] == vo.find(twin, vim.VirtualMachine, name).config.instanceUuid.lower()


def portgroup_switch_uuid(twin):
    return next(dvs['uuid'] for dvs in twin.inventory()['dvs'] if dvs['name'] == 'DSwitch1')


def test_rerun_is_unchanged_and_reports_the_same_macs(twin, run_module, portgroup):
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', args(node_selector=WORKER_SELECTOR))
    assert result['_rc'] == 0, result
    assert result['changed'] is False
    assert [vm['action'] for vm in result['vms']] == ['none'] * 5
    assert all(vm['mac'] for vm in result['vms'])
    assert vcsim_writes(twin) == {}


def test_noop_costs_the_same_for_one_vm_and_all(twin, run_module, portgroup):
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    run_module('vsphere_vm_nic', args(node_names=['ocp1-worker-0']))
    one, one_kube = counts(twin), twin.kube_requests()['counts']
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    run_module('vsphere_vm_nic', args(node_selector=WORKER_SELECTOR))
    assert counts(twin) == one
    assert twin.kube_requests()['counts'] == one_kube
    assert one['RetrievePropertiesEx'] <= 4  # datacenters, networks, VM index, devices of the selected VMs


def test_vms_by_name_uuid_and_moid_and_upper_case_uuid(twin, run_module, portgroup):
    vms = dict((vm['name'], vm) for vm in twin.vcsim_state['vms'])
    result = run_module('vsphere_vm_nic', args(vm_names=['ocp1-worker-0'], vm_uuids=[vms['ocp1-worker-1']['uuid'].upper()],
                                               vm_moids=[vms['ocp1-worker-2']['moid']]))
    assert result['_rc'] == 0, result
    assert [vm['name'] for vm in result['vms']] == ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
    assert result['changed'] is False and all(vm['mac'] for vm in result['vms'])


@pytest.mark.parametrize('extra,words', [
    ({'parallel': 0}, ['parallel=0', '1 to 64']),
    ({'timeout': 0}, ['timeout=0']),
    ({}, ['no VM given', 'node_names']),
    ({'node_names': ['no-such-node']}, ['node_names=no-such-node', 'no such node']),
    ({'node_selector': {'team': 'nobody'}}, ['node_selector=', 'matches no node']),
    ({'node_names': ['ocp1-worker-0'], 'network': 'no-such-pg'}, ['portgroup_missing', 'no-such-pg']),
    ({'node_names': ['ocp1-worker-0'], 'network': 'no-such-pg', 'network_planned': True}, ['portgroup_missing']),  # check mode only
    ({'node_names': ['ocp1-worker-0'], 'datacenter': 'DCX'}, ['datacenter=DCX', 'DC0']),
    ({'vm_names': ['no-such-vm']}, ['vsphere_vm_not_found', 'no-such-vm']),
    ({'node_names': ['ocp1-worker-0'], 'switch': 'DSwitchX'}, ['portgroup_missing', 'DSwitchX']),
    ({'node_names': ['ocp1-worker-0'], 'state': 'absent', 'cidr': '10.20.0.0'}, ["cidr '10.20.0.0' has no prefix length", 'address/prefix']),
])
def test_bad_input_names_field_value_and_writes_nothing(twin, run_module, portgroup, extra, words):
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    result = run_module('vsphere_vm_nic', args(**extra))
    assert result['_rc'] != 0 and result.get('failed'), result
    for word in words:
        assert word in result['msg'], result['msg']
    assert vcsim_writes(twin) == {}
    assert kube_writes(twin) == 0


def test_ten_nic_limit_refused_and_nothing_written_without_continue_on_error(twin, run_module, portgroup):
    add_nics(twin, 'ocp1-master-0', 9)  # 1 primary + 9 = the vSphere maximum of 10
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', args(vm_names=['ocp1-master-0', 'ocp1-master-1']))
    assert result['_rc'] != 0
    assert 'vsphere_vm_nic_limit' in result['msg'] and 'ocp1-master-0' in result['msg'] and '10' in result['msg']
    assert 'nothing was written' in result['msg']
    assert vcsim_writes(twin) == {}
    refused = dict((vm['name'], vm) for vm in result['vms'])
    assert refused['ocp1-master-0']['failed'] and refused['ocp1-master-0']['action'] == 'refused'
    assert refused['ocp1-master-1']['action'] == 'add' and not refused['ocp1-master-1'].get('failed')


def test_continue_on_error_configures_the_others_and_reports_the_refused(twin, run_module, portgroup):
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', args(vm_names=['ocp1-master-0', 'ocp1-master-1'], continue_on_error=True))
    assert result['_rc'] == 0, result
    assert result['changed'] is True
    by_name = dict((vm['name'], vm) for vm in result['vms'])
    assert by_name['ocp1-master-0']['failed'] and 'limit' in by_name['ocp1-master-0']['error']
    assert by_name['ocp1-master-1']['action'] == 'add' and by_name['ocp1-master-1']['mac']
    assert [item['id'] for item in result['findings']] == ['vsphere_vm_nic_limit']
    assert 'vsphere_vm_nic_limit' in json.dumps(result.get('warnings'))  # the warning's shape varies by ansible-core version
    assert vcsim_writes(twin) == {'ReconfigVM_Task': 1}
    assert vm_nics(twin, 'ocp1-master-0', portgroup) == []


def test_two_nics_on_the_network_is_ambiguous(twin, run_module, portgroup):
    add_nics(twin, 'ocp1-master-2', 2, network=dict(portgroup, switch_uuid=portgroup_switch_uuid(twin)))
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', args(vm_names=['ocp1-master-2']))
    assert result['_rc'] != 0
    assert 'vsphere_vm_nic_ambiguous' in result['msg'] and 'ocp1-master-2' in result['msg']
    macs = [nic['mac'].lower() for nic in vm_nics(twin, 'ocp1-master-2', portgroup)]
    assert all(mac in result['msg'] for mac in macs)
    assert vcsim_writes(twin) == {}


def test_nodes_without_provider_id_or_vm_are_listed(twin, run_module, portgroup):
    core = twin.core_v1()
    labels = {'node-role.kubernetes.io/worker': '', 'test': 'stray'}
    core.create_node({'metadata': {'name': 'stray-no-provider', 'labels': labels}})
    core.create_node({'metadata': {'name': 'stray-no-vm', 'labels': labels},
                      'spec': {'providerID': 'vsphere://4230ffff-0000-4000-8000-000000000001'}})
    try:
        twin.reset_vcsim_requests()
        result = run_module('vsphere_vm_nic', args(node_selector=WORKER_SELECTOR))
        assert result['_rc'] != 0
        assert 'stray-no-provider' in result['msg'] and 'stray-no-vm' in result['msg']
        assert '4230ffff-0000-4000-8000-000000000001' in result['msg']
        assert [item['id'] for item in result['findings']] == ['vsphere_node_vm_not_found'] * 2
        assert vcsim_writes(twin) == {}
    finally:
        core.delete_node('stray-no-provider')
        core.delete_node('stray-no-vm')


def test_failed_task_for_one_vm_others_complete_and_rerun_converges(twin, run_module, portgroup):
    vms = dict((vm['name'], vm) for vm in twin.vcsim_state['vms'])
    add_nics(twin, 'ocp1-master-2', 0)
    # master-2 has two NICs on the port group from the ambiguity test: take them away by hand
    remove_portgroup_nics(twin, 'ocp1-master-2', portgroup)
    twin.inject_vcsim_fault(method='ReconfigVM_Task', this=vms['ocp1-master-2']['moid'], count=1, fault='disk full on LocalDS_0')
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', args(vm_names=['ocp1-master-1', 'ocp1-master-2'], parallel=2))
    assert result['_rc'] != 0
    assert 'ocp1-master-2' in result['msg'] and 'disk full on LocalDS_0' in result['msg']
    assert 'failed for 1 of 2' in result['msg']
    by_name = dict((vm['name'], vm) for vm in result['vms'])
    assert by_name['ocp1-master-2']['failed'] and 'disk full' in by_name['ocp1-master-2']['error']
    assert [item['id'] for item in result['findings']] == ['vsphere_vm_reconfigure_failed']
    assert vm_nics(twin, 'ocp1-master-2', portgroup) == []
    assert len(vm_nics(twin, 'ocp1-master-1', portgroup)) == 1
    rerun = run_module('vsphere_vm_nic', args(vm_names=['ocp1-master-1', 'ocp1-master-2']))
    assert rerun['_rc'] == 0, rerun
    assert [(vm['name'], vm['changed']) for vm in rerun['vms']] == [('ocp1-master-1', False), ('ocp1-master-2', True)]
    assert len(vm_nics(twin, 'ocp1-master-2', portgroup)) == 1


def remove_portgroup_nics(twin, vm_name, portgroup):
    vm = vo.find(twin, vim.VirtualMachine, vm_name)
    changes = [vim.vm.device.VirtualDeviceSpec(operation='remove', device=device) for device in vm.config.hardware.device
               if isinstance(device, vim.vm.device.VirtualEthernetCard)
               and getattr(getattr(device.backing, 'port', None), 'portgroupKey', None) == portgroup['key']]
    if changes:
        WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=changes)))


def test_powered_off_vm_gets_a_nic_connected_at_power_on(twin, run_module, portgroup):
    vm = vo.find(twin, vim.VirtualMachine, 'ocp1-master-0')
    remove_portgroup_nics(twin, 'ocp1-master-0', portgroup)
    # make room under the 10-NIC limit: drop the hand-made NICs on VM Network but the first
    extra = [device for device in vm.config.hardware.device if isinstance(device, vim.vm.device.VirtualEthernetCard)][1:]
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[
        vim.vm.device.VirtualDeviceSpec(operation='remove', device=device) for device in extra])))
    WaitForTask(vm.PowerOffVM_Task())
    try:
        result = run_module('vsphere_vm_nic', args(vm_names=['ocp1-master-0']))
        assert result['_rc'] == 0, result
        [nic] = vm_nics(twin, 'ocp1-master-0', portgroup)
        assert nic['start_connected'] is True and nic['connected'] is False
        assert run_module('vsphere_vm_nic', args(vm_names=['ocp1-master-0']))['changed'] is False
    finally:
        WaitForTask(vm.PowerOnVM_Task())


def test_disconnected_nic_is_connected_again(twin, run_module, portgroup):
    vm = vo.find(twin, vim.VirtualMachine, 'ocp1-worker-4')
    device = next(device for device in vm.config.hardware.device if isinstance(device, vim.vm.device.VirtualEthernetCard)
                  and getattr(getattr(device.backing, 'port', None), 'portgroupKey', None) == portgroup['key'])
    device.connectable.connected = False
    device.connectable.startConnected = False
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='edit', device=device)])))
    result = run_module('vsphere_vm_nic', args(node_names=['ocp1-worker-4']), diff=True)
    assert result['_rc'] == 0, result
    assert result['vms'][0]['action'] == 'connect' and result['changed'] is True
    assert result['diff']['before']['ocp1-worker-4'][0]['connected'] is False
    [nic] = vm_nics(twin, 'ocp1-worker-4', portgroup)
    assert nic['connected'] and nic['start_connected'] and nic['mac'].lower() == result['vms'][0]['mac']


def test_absent_refused_while_the_node_hosts_egress_ips_then_forced(twin, run_module, portgroup):
    core, custom = twin.core_v1(), twin.custom_objects()
    core.patch_node('ocp1-worker-3', {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': ''}}})
    egressip = {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': 'test-nic-absent'},
                'spec': {'egressIPs': ['192.168.10.200'], 'namespaceSelector': {'matchLabels': {'team': 'x'}}}}
    custom.create_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', egressip)
    try:
        twin.wait_for(lambda: (custom.get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'test-nic-absent')
                               .get('status') or {}).get('items'), timeout=15, what='the egress IP to be assigned')
        twin.reset_vcsim_requests()
        result = run_module('vsphere_vm_nic', args(node_names=['ocp1-worker-3'], state='absent'))
        assert result['_rc'] != 0
        assert 'vsphere_vm_nic_hosts_egress_ips' in result['msg'] and '192.168.10.200' in result['msg']
        assert vcsim_writes(twin) == {}
        forced = run_module('vsphere_vm_nic', args(node_names=['ocp1-worker-3'], state='absent', force=True))
        assert forced['_rc'] == 0, forced
        assert forced['changed'] is True and forced['vms'][0]['action'] == 'remove'
        assert vm_nics(twin, 'ocp1-worker-3', portgroup) == []
    finally:
        custom.delete_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'test-nic-absent')
        core.patch_node('ocp1-worker-3', {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': None}}})


def test_absent_removes_and_rerun_is_unchanged(twin, run_module, portgroup):
    result = run_module('vsphere_vm_nic', args(vm_names=['ocp1-worker-2'], state='absent'), diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True and result['vms'][0]['node'] == 'ocp1-worker-2'
    assert result['diff']['after'] == {'ocp1-worker-2': []} and len(result['diff']['before']['ocp1-worker-2']) == 1
    assert vm_nics(twin, 'ocp1-worker-2', portgroup) == []
    assert len(vm_nics(twin, 'ocp1-worker-2')) == 1
    again = run_module('vsphere_vm_nic', args(vm_names=['ocp1-worker-2'], state='absent'))
    assert again['changed'] is False


def test_absent_counts_only_egress_ips_in_the_secondary_cidr(twin, run_module, portgroup):
    """An egress IP of the primary network on the node is not carried by this NIC: with cidr it does not block."""
    core, custom = twin.core_v1(), twin.custom_objects()
    node = 'ocp1-worker-1'
    core.patch_node(node, {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': ''}}})
    egressip = {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': 'test-nic-primary'},
                'spec': {'egressIPs': ['192.168.10.201'], 'namespaceSelector': {'matchLabels': {'team': 'y'}}}}
    custom.create_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', egressip)
    try:
        twin.wait_for(lambda: [item for item in (custom.get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'test-nic-primary')
                                                 .get('status') or {}).get('items') or [] if item.get('node') == node],
                      timeout=15, what='the egress IP to be assigned to %s' % node)
        twin.reset_vcsim_requests()
        inside = run_module('vsphere_vm_nic', args(node_names=[node], state='absent', cidr='192.168.10.0/24'))
        assert inside['_rc'] != 0 and '192.168.10.201' in inside['msg'], inside
        assert vcsim_writes(twin) == {}
        result = run_module('vsphere_vm_nic', args(node_names=[node], state='absent', cidr='10.20.0.0/24', ipv6_cidr='fd00:20::/64'))
        assert result['_rc'] == 0, result
        assert result['changed'] is True and result['vms'][0]['action'] == 'remove'
        assert vm_nics(twin, node, portgroup) == []
    finally:
        custom.delete_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'test-nic-primary')
        core.patch_node(node, {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': None}}})
