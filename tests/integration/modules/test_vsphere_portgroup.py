"""vsphere_portgroup against the twin: standard port groups on every host, distributed port groups.

Tests run in file order and build on each other (one twin per module).
"""

import pytest

from pyVim.task import WaitForTask
from pyVmomi import vim

from twin.fixture import vcsim_writes

import _vsphere_objects as vo

HOSTS = ['DC0_C0_H0', 'DC0_C0_H1', 'DC0_C0_H2']
DVPG = 'ocp-egress-dv'
STDPG = 'ocp-egress-std'


def distributed(**extra):
    args = {'datacenter': 'DC0', 'name': DVPG, 'switch_type': 'distributed', 'switch': 'DSwitch1'}
    args.update(extra)
    return args


def standard(**extra):
    args = {'datacenter': 'DC0', 'cluster': 'DC0_C0', 'name': STDPG, 'switch_type': 'standard', 'switch': 'vSwitch1'}
    args.update(extra)
    return args


def refused_writing_nothing(twin, run_module, args, words):
    """Bad input: the run fails, its message has every one of `words`, and nothing is written in vCenter."""
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', args)
    assert failed(result), result
    for word in words:
        assert word in result['msg'], result['msg']
    assert vcsim_writes(twin) == {}


def dv_portgroup(twin, name=DVPG):
    return next((pg for dvs in twin.inventory()['dvs'] for pg in dvs['portgroups'] if pg['name'] == name), None)


def host_portgroups(twin, name=STDPG):
    return dict((host['name'], next((pg for pg in host['portgroups'] if pg['name'] == name), None)) for host in twin.inventory()['hosts'])


def dv_config(twin, name=DVPG):
    return vo.find(twin, vim.dvs.DistributedVirtualPortgroup, name).config


def failed(result):
    return result['_rc'] != 0 and result.get('failed')


# --- distributed -----------------------------------------------------------------------------------

def test_distributed_check_mode_writes_nothing(twin, run_module):
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', distributed(vlan_id=120), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True and result['portgroup']['action'] == 'create'
    assert result['diff'] == {'before': None, 'after': {'switch': 'DSwitch1', 'vlan_id': 120, 'port_binding': 'static', 'num_ports': 8,
                                                        'elastic': True, 'promiscuous': None, 'mac_changes': None, 'forged_transmits': None}}
    assert vcsim_writes(twin) == {}
    assert dv_portgroup(twin) is None


def test_distributed_create_then_rerun_unchanged(twin, run_module):
    result = run_module('vsphere_portgroup', distributed(vlan_id=120))
    assert result['_rc'] == 0, result
    assert result['changed'] is True
    created = dv_portgroup(twin)
    assert created['vlan'] == 120 and result['portgroup']['key'] == created['key']
    config = dv_config(twin)
    assert (config.type, config.numPorts, config.autoExpand) == ('earlyBinding', 8, True)
    twin.reset_vcsim_requests()
    again = run_module('vsphere_portgroup', distributed(vlan_id=120))
    assert again['changed'] is False and again['portgroup']['action'] == 'none'
    assert vcsim_writes(twin) == {}


def test_distributed_hand_made_settings_are_kept(twin, run_module):
    pg = vo.find(twin, vim.dvs.DistributedVirtualPortgroup, DVPG)
    config = pg.config
    port = config.defaultPortConfig
    port.securityPolicy = vim.dvs.VmwareDistributedVirtualSwitch.SecurityPolicy(
        allowPromiscuous=vim.BoolPolicy(value=True, inherited=False))
    spec = vim.dvs.DistributedVirtualPortgroup.ConfigSpec(configVersion=config.configVersion, name=config.name, type=config.type,
                                                          numPorts=32, autoExpand=False, defaultPortConfig=port, policy=config.policy)
    WaitForTask(pg.ReconfigureDVPortgroup_Task(spec))
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', distributed(vlan_id=120))
    assert result['changed'] is False, result
    assert vcsim_writes(twin) == {}
    # a change of one option keeps the others
    result = run_module('vsphere_portgroup', distributed(vlan_id=121, security={'forged_transmits': False}), diff=True)
    assert result['changed'] is True and result['portgroup']['changes'] == {'vlan_id': 121, 'forged_transmits': False}
    assert result['diff']['before']['num_ports'] == 32 and result['diff']['after']['num_ports'] == 32
    assert result['diff']['before']['promiscuous'] is True and result['diff']['after']['promiscuous'] is True
    config = dv_config(twin)
    assert (config.numPorts, config.autoExpand, config.defaultPortConfig.vlan.vlanId) == (32, False, 121)
    security = config.defaultPortConfig.securityPolicy
    assert security.allowPromiscuous.value is True and security.forgedTransmits.value is False
    assert run_module('vsphere_portgroup', distributed(vlan_id=121, security={'forged_transmits': False}))['changed'] is False


def test_distributed_options_the_user_sets_are_changed(twin, run_module):
    result = run_module('vsphere_portgroup', distributed(num_ports=16, elastic=True))
    assert result['changed'] is True and result['portgroup']['changes'] == {'elastic': True, 'num_ports': 16}
    config = dv_config(twin)
    assert (config.numPorts, config.autoExpand, config.defaultPortConfig.vlan.vlanId) == (16, True, 121)


@pytest.mark.parametrize('extra,words', [
    ({'vlan_id': 4095}, ['vlan_id=4095', '0 to 4094']),
    ({'hosts': ['DC0_C0_H0']}, ['hosts=DC0_C0_H0', 'standard port groups only']),
    ({'port_binding': 'ephemeral', 'elastic': True}, ['elastic=true', 'port_binding=static']),
    ({'num_ports': -1}, ['num_ports=-1']),
    ({'switch': 'DSwitchX'}, ['switch=DSwitchX', 'DSwitch1', 'switch_missing']),
    ({'datacenter': 'DCX'}, ['datacenter=DCX', 'DC0']),
])
def test_distributed_bad_input_writes_nothing(twin, run_module, extra, words):
    refused_writing_nothing(twin, run_module, distributed(**extra), words)


def attach_nic(twin, vm_name, backing):
    vm = vo.find(twin, vim.VirtualMachine, vm_name)
    nic = vim.vm.device.VirtualVmxnet3(key=-1, backing=backing)
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=nic)])))


def detach_nics(twin, vm_name, predicate):
    vm = vo.find(twin, vim.VirtualMachine, vm_name)
    changes = [vim.vm.device.VirtualDeviceSpec(operation='remove', device=device) for device in vm.config.hardware.device
               if isinstance(device, vim.vm.device.VirtualEthernetCard) and predicate(device)]
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=changes)))


def test_distributed_absent_refused_while_a_vm_uses_it(twin, run_module):
    created = dv_portgroup(twin)
    switch_uuid = next(dvs['uuid'] for dvs in twin.inventory()['dvs'] if dvs['name'] == 'DSwitch1')
    attach_nic(twin, 'ocp1-worker-1', vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
        port=vim.dvs.PortConnection(portgroupKey=created['key'], switchUuid=switch_uuid)))
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', distributed(state='absent'))
    assert failed(result)
    assert 'vsphere_portgroup_in_use' in result['msg'] and 'ocp1-worker-1' in result['msg']
    assert vcsim_writes(twin) == {}
    assert dv_portgroup(twin) is not None
    detach_nics(twin, 'ocp1-worker-1', lambda device: getattr(getattr(device.backing, 'port', None), 'portgroupKey', None) == created['key'])


def test_distributed_absent_check_then_remove_then_unchanged(twin, run_module):
    twin.reset_vcsim_requests()
    check = run_module('vsphere_portgroup', distributed(state='absent'), check=True, diff=True)
    assert check['changed'] is True and check['diff']['after'] is None and check['diff']['before']['vlan_id'] == 121
    assert vcsim_writes(twin) == {}
    result = run_module('vsphere_portgroup', distributed(state='absent'))
    assert result['_rc'] == 0, result
    assert result['changed'] is True and dv_portgroup(twin) is None
    assert run_module('vsphere_portgroup', distributed(state='absent'))['changed'] is False


# --- standard --------------------------------------------------------------------------------------

def test_standard_check_mode_writes_nothing(twin, run_module):
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', standard(vlan_id=120), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert [host['action'] for host in result['portgroup']['hosts']] == ['create'] * 3
    assert result['diff']['before'] == dict((host, None) for host in HOSTS)
    assert result['diff']['after']['DC0_C0_H1'] == {'vswitch': 'vSwitch1', 'vlan_id': 120, 'promiscuous': None,
                                                    'mac_changes': None, 'forged_transmits': None}
    assert vcsim_writes(twin) == {}


def test_standard_host_without_the_vswitch_refused_on_all_hosts(twin, run_module):
    system = vo.find(twin, vim.HostSystem, 'DC0_C0_H2').configManager.networkSystem
    system.RemoveVirtualSwitch(vswitchName='vSwitch1')
    try:
        twin.reset_vcsim_requests()
        result = run_module('vsphere_portgroup', standard(vlan_id=120))
        assert failed(result)
        assert 'switch_missing' in result['msg'] and 'DC0_C0_H2' in result['msg'] and 'vSwitch1' in result['msg']
        assert 'DC0_C0_H0' not in result['msg']
        assert vcsim_writes(twin) == {}
        assert host_portgroups(twin) == dict((host, None) for host in HOSTS)
    finally:
        system.AddVirtualSwitch(vswitchName='vSwitch1', spec=vim.host.VirtualSwitch.Specification(numPorts=128, mtu=1500))


def test_standard_created_on_every_host_of_the_cluster(twin, run_module):
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', standard(vlan_id=120))
    assert result['_rc'] == 0, result
    assert result['changed'] is True and result['portgroup']['action'] == 'create'
    assert vcsim_writes(twin) == {'AddPortGroup': 3}
    assert host_portgroups(twin) == dict((host, {'name': STDPG, 'vswitch': 'vSwitch1', 'vlan': 120}) for host in HOSTS)


def test_standard_rerun_unchanged_at_constant_cost(twin, run_module):
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', standard(vlan_id=120))
    assert result['changed'] is False and vcsim_writes(twin) == {}
    all_hosts = twin.vcsim_requests()['counts']
    twin.reset_vcsim_requests()
    one = run_module('vsphere_portgroup', standard(vlan_id=120, cluster=None, hosts=['DC0_C0_H0']))
    assert one['changed'] is False
    assert twin.vcsim_requests()['counts'] == all_hosts


def test_standard_one_host_drifted_is_updated_alone(twin, run_module):
    system = vo.find(twin, vim.HostSystem, 'DC0_C0_H1').configManager.networkSystem
    spec = next(pg.spec for pg in system.networkInfo.portgroup if pg.spec.name == STDPG)
    spec.vlanId = 7
    system.UpdatePortGroup(pgName=STDPG, portgrp=spec)
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', standard(vlan_id=120), diff=True)
    assert result['_rc'] == 0, result
    assert [(host['host'], host['action']) for host in result['portgroup']['hosts']] == [
        ('DC0_C0_H0', 'none'), ('DC0_C0_H1', 'update'), ('DC0_C0_H2', 'none')]
    assert result['diff']['before']['DC0_C0_H1']['vlan_id'] == 7 and result['diff']['after']['DC0_C0_H1']['vlan_id'] == 120
    assert vcsim_writes(twin) == {'UpdatePortGroup': 1}
    assert host_portgroups(twin)['DC0_C0_H1']['vlan'] == 120


def test_standard_security_only_when_set(twin, run_module):
    result = run_module('vsphere_portgroup', standard(security={'mac_changes': False}))
    assert result['changed'] is True
    for host in HOSTS:
        system = vo.find(twin, vim.HostSystem, host).configManager.networkSystem
        spec = next(pg.spec for pg in system.networkInfo.portgroup if pg.spec.name == STDPG)
        assert spec.policy.security.macChanges is False
        assert spec.policy.security.allowPromiscuous is None and spec.vlanId == 120
    assert run_module('vsphere_portgroup', standard(vlan_id=120, security={'mac_changes': False}))['changed'] is False


@pytest.mark.parametrize('extra,words', [
    ({'cluster': None}, ['switch_type=standard', 'cluster', 'hosts']),
    ({'num_ports': 8}, ['num_ports=8', 'distributed port groups only']),
    ({'vlan_id': -1}, ['vlan_id=-1']),
    ({'cluster': 'NoSuchCluster'}, ['cluster=NoSuchCluster', 'DC0_C0']),
    ({'hosts': ['DC0_C0_H0', 'no-such-host']}, ['hosts=no-such-host', 'DC0_C0_H1']),
    ({'switch': 'vSwitch0'}, ['vsphere_portgroup_on_other_vswitch', 'vSwitch1']),
])
def test_standard_bad_input_writes_nothing(twin, run_module, extra, words):
    refused_writing_nothing(twin, run_module, standard(**extra), words)


def test_standard_absent_refused_while_a_vm_uses_it_then_removed(twin, run_module):
    attach_nic(twin, 'ocp1-worker-2', vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=STDPG))
    twin.reset_vcsim_requests()
    result = run_module('vsphere_portgroup', standard(state='absent'))
    assert failed(result)
    assert 'vsphere_portgroup_in_use' in result['msg'] and 'ocp1-worker-2' in result['msg']
    assert vcsim_writes(twin) == {}
    detach_nics(twin, 'ocp1-worker-2', lambda device: getattr(device.backing, 'deviceName', None) == STDPG)
    result = run_module('vsphere_portgroup', standard(state='absent'), diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True and result['diff']['after'] == dict((host, None) for host in HOSTS)
    assert host_portgroups(twin) == dict((host, None) for host in HOSTS)
    assert run_module('vsphere_portgroup', standard(state='absent'))['changed'] is False
