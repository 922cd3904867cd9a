"""Pure vSphere conversions (real pyVmomi data objects, no server) and node/VM matching."""

from types import SimpleNamespace

import pytest
from pyVmomi import vim

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import (
    adapter_type,
    distributed_portgroup_facts,
    host_network_facts,
    is_ethernet_card,
    names_text,
    nic_facts,
    node_vm_selectors,
    not_found_message,
    vlan_facts,
    vm_nics,
    vm_uuid_from_provider_id,
)
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vcenter import add_uplink_state, missing_vms_message, select_vms

UUID = '4237a1b2-0c1d-2e3f-4a5b-6c7d8e9f0a1b'
DVS_UUID = '50 1c 2e 3d 4f 5a 6b 7c-8d 9e 0f 1a 2b 3c 4d 5e'


def connect_info(connected=True, start_connected=True):
    return vim.vm.device.VirtualDevice.ConnectInfo(connected=connected, startConnected=start_connected, allowGuestControl=True)


def standard_nic(cls=vim.vm.device.VirtualVmxnet3, mac='00:50:56:AA:BB:01', network='VM Network', moid='network-7', key=4000):
    return cls(key=key, macAddress=mac, deviceInfo=vim.Description(label='Network adapter 1', summary=network),
               backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=network, network=vim.Network(moid)),
               connectable=connect_info())


def distributed_nic(portgroup_key='dvportgroup-44', key=4001):
    port = vim.dvs.PortConnection(switchUuid=DVS_UUID, portgroupKey=portgroup_key)
    return vim.vm.device.VirtualE1000e(key=key, macAddress='00:50:56:aa:bb:02', deviceInfo=vim.Description(label='ethernet--7', summary='x'),
                                       backing=vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(port=port),
                                       connectable=connect_info(connected=False, start_connected=True))


def test_standard_nic():
    assert nic_facts(standard_nic()) == {
        'key': 4000, 'label': 'Network adapter 1', 'mac': '00:50:56:aa:bb:01', 'adapter': 'vmxnet3', 'network': 'VM Network',
        'network_moid': 'network-7', 'portgroup_key': None, 'switch_uuid': None, 'opaque_network_id': None,
        'connected': True, 'start_connected': True,
    }


def test_distributed_nic_gets_the_portgroup_name():
    facts = nic_facts(distributed_nic(), {'dvportgroup-44': 'ocp-egress-120'})
    assert facts['adapter'] == 'e1000e'
    assert facts['network'] == 'ocp-egress-120' and facts['network_moid'] == 'dvportgroup-44'
    assert facts['portgroup_key'] == 'dvportgroup-44' and facts['switch_uuid'] == DVS_UUID
    assert facts['connected'] is False and facts['start_connected'] is True
    unknown = nic_facts(distributed_nic('dvportgroup-99'), {'dvportgroup-44': 'ocp-egress-120'})
    assert unknown['network'] is None and unknown['network_moid'] is None and unknown['portgroup_key'] == 'dvportgroup-99'


def test_opaque_nic():
    device = vim.vm.device.VirtualVmxnet3(key=4002, macAddress='00:50:56:aa:bb:03',
                                          backing=vim.vm.device.VirtualEthernetCard.OpaqueNetworkBackingInfo(opaqueNetworkId='seg-1',
                                                                                                             opaqueNetworkType='nsx.LogicalSwitch'))
    facts = nic_facts(device)
    assert facts['opaque_network_id'] == 'seg-1' and facts['network'] is None
    assert facts['connected'] is False and facts['label'] is None


@pytest.mark.parametrize('cls, expected', [
    (vim.vm.device.VirtualVmxnet3, 'vmxnet3'),
    (vim.vm.device.VirtualVmxnet3Vrdma, 'vmxnet3vrdma'),
    (vim.vm.device.VirtualVmxnet2, 'vmxnet2'),
    (vim.vm.device.VirtualE1000e, 'e1000e'),
    (vim.vm.device.VirtualE1000, 'e1000'),
    (vim.vm.device.VirtualPCNet32, 'pcnet32'),
    (vim.vm.device.VirtualSriovEthernetCard, 'sriov'),
])
def test_adapter_types(cls, expected):
    assert adapter_type(cls()) == expected


def test_vm_nics_keeps_only_nics_in_device_order():
    devices = [vim.vm.device.VirtualDisk(key=2000), standard_nic(key=4000), vim.vm.device.VirtualCdrom(key=3000), distributed_nic(key=4001)]
    assert [nic['key'] for nic in vm_nics(devices)] == [4000, 4001]
    assert vm_nics(None) == []
    assert is_ethernet_card(standard_nic()) and not is_ethernet_card(vim.vm.device.VirtualDisk())


def test_vlan_specs():
    spec = vim.dvs.VmwareDistributedVirtualSwitch
    assert vlan_facts(spec.VlanIdSpec(vlanId=120)) == {'vlan_type': 'vlan', 'vlan_id': 120, 'vlan_ranges': []}
    trunk = spec.TrunkVlanSpec(vlanId=[vim.NumericRange(start=0, end=4094), vim.NumericRange(start=200, end=200)])
    assert vlan_facts(trunk) == {'vlan_type': 'trunk', 'vlan_id': None, 'vlan_ranges': ['0-4094', '200']}
    assert vlan_facts(spec.PvlanSpec(pvlanId=5)) == {'vlan_type': 'pvlan', 'vlan_id': 5, 'vlan_ranges': []}
    assert vlan_facts(None) == {'vlan_type': None, 'vlan_id': None, 'vlan_ranges': []}


def test_distributed_portgroup():
    bool_policy = vim.BoolPolicy
    config = vim.dvs.DistributedVirtualPortgroup.ConfigInfo(
        key='dvportgroup-44', name='ocp-egress-120', numPorts=8, type='earlyBinding', configVersion='3',
        defaultPortConfig=vim.dvs.VmwareDistributedVirtualSwitch.VmwarePortConfigPolicy(
            vlan=vim.dvs.VmwareDistributedVirtualSwitch.VlanIdSpec(vlanId=120),
            securityPolicy=vim.dvs.VmwareDistributedVirtualSwitch.SecurityPolicy(
                allowPromiscuous=bool_policy(value=False), macChanges=bool_policy(value=False), forgedTransmits=bool_policy(value=True))))
    assert distributed_portgroup_facts('dvportgroup-44', config) == {
        'name': 'ocp-egress-120', 'key': 'dvportgroup-44', 'moid': 'dvportgroup-44', 'num_ports': 8, 'binding': 'static', 'uplink': False,
        'config_version': '3', 'security': {'allow_promiscuous': False, 'mac_changes': False, 'forged_transmits': True},
        'vlan_type': 'vlan', 'vlan_id': 120, 'vlan_ranges': [],
    }
    config.type = 'ephemeral'
    assert distributed_portgroup_facts('dvportgroup-44', config)['binding'] == 'ephemeral'
    assert distributed_portgroup_facts('dvportgroup-44', config, uplink_moids={'dvportgroup-44'})['uplink'] is True
    config.type = ''
    assert distributed_portgroup_facts('dvportgroup-44', config)['binding'] is None


def test_host_network_uses_effective_policy_and_groups_portgroups_by_vswitch():
    security = vim.host.NetworkPolicy.SecurityPolicy
    vswitches = [vim.host.VirtualSwitch(name='vSwitch1', numPorts=128, mtu=9000,
                                        spec=vim.host.VirtualSwitch.Specification(
                                            numPorts=128, bridge=vim.host.VirtualSwitch.BondBridge(nicDevice=['vmnic1']),
                                            policy=vim.host.NetworkPolicy(security=security(allowPromiscuous=False, macChanges=False,
                                                                                            forgedTransmits=False)))),
                 vim.host.VirtualSwitch(name='vSwitch0', numPorts=0)]
    portgroups = [
        vim.host.PortGroup(key='key-vim.host.PortGroup-egress', vswitch='key-vim.host.VirtualSwitch-vSwitch1',
                           spec=vim.host.PortGroup.Specification(name='ocp-egress-120', vlanId=120, vswitchName='vSwitch1',
                                                                 policy=vim.host.NetworkPolicy(security=security())),
                           computedPolicy=vim.host.NetworkPolicy(security=security(allowPromiscuous=False, macChanges=False, forgedTransmits=False))),
        vim.host.PortGroup(spec=vim.host.PortGroup.Specification(name='VM Network', vlanId=0, vswitchName='vSwitch0',
                                                                 policy=vim.host.NetworkPolicy(security=security(macChanges=True)))),
    ]
    facts = host_network_facts('esxi-1', 'host-34', vswitches, portgroups, connection_state='connected', in_maintenance_mode=False)
    assert facts['name'] == 'esxi-1' and facts['moid'] == 'host-34' and facts['connection_state'] == 'connected'
    assert [switch['name'] for switch in facts['standard_switches']] == ['vSwitch0', 'vSwitch1']
    assert facts['standard_switches'][1] == {'name': 'vSwitch1', 'mtu': 9000, 'num_ports': 128, 'uplinks': ['vmnic1'], 'portgroups': ['ocp-egress-120'],
                                             'security': {'allow_promiscuous': False, 'mac_changes': False, 'forged_transmits': False}}
    assert facts['standard_switches'][0]['portgroups'] == ['VM Network']
    assert facts['standard_portgroups'][1] == {'name': 'ocp-egress-120', 'vswitch': 'vSwitch1', 'vlan_id': 120,
                                               'security': {'allow_promiscuous': False, 'mac_changes': False, 'forged_transmits': False}}
    # without computedPolicy, the port group's own (partial) policy is reported
    assert facts['standard_portgroups'][0]['security'] == {'allow_promiscuous': None, 'mac_changes': True, 'forged_transmits': None}
    assert host_network_facts('esxi-2', 'host-2', None, None)['standard_switches'] == []


@pytest.mark.parametrize('provider_id, expected', [
    ('vsphere://%s' % UUID, UUID),
    ('vsphere://%s' % UUID.upper(), UUID),
    (' vsphere://%s/ ' % UUID, UUID),
    ('aws:///us-east-1a/i-0abc', None),
    ('vsphere://not-a-uuid', None),
    ('', None),
    (None, None),
])
def test_provider_id(provider_id, expected):
    assert vm_uuid_from_provider_id(provider_id) == expected


def k8s_node(name, provider_id):
    return {'metadata': {'name': name}, 'spec': {'providerID': provider_id} if provider_id else {}}


NODES = [k8s_node('w0', 'vsphere://%s' % UUID), k8s_node('w1', 'vsphere://%s' % UUID.replace('4237', '4238')), k8s_node('bm', None)]


def test_node_selectors():
    assert node_vm_selectors(NODES[:2], ['w1'], 'https://api:6443') == [{'by': 'uuid', 'value': UUID.replace('4237', '4238'), 'node': 'w1'}]
    assert [item['node'] for item in node_vm_selectors(NODES[:2], None, 'https://api:6443')] == ['w0', 'w1']


def test_unknown_node_names_what_exists():
    with pytest.raises(ModuleFailure) as failure:
        node_vm_selectors(NODES, ['w9'], 'https://api:6443')
    assert failure.value.msg == "node 'w9' not found in the Kubernetes API https://api:6443; nodes there: bm, w0, w1"
    with pytest.raises(ModuleFailure) as failure:
        node_vm_selectors(NODES, ['w8', 'w9'], 'https://api:6443')
    assert failure.value.msg.startswith("nodes 'w8', 'w9' not found")


def test_node_without_vsphere_provider_id():
    with pytest.raises(ModuleFailure) as failure:
        node_vm_selectors(NODES, ['w0', 'bm'], 'https://api:6443')
    assert failure.value.msg == "Node(s) without a vSphere providerID (vsphere://<BIOS UUID>), so no VM can be found for them: bm (spec.providerID None)"


def test_names_text_is_bounded():
    assert names_text([]) == 'none'
    assert names_text(['b', 'a', 'a']) == 'a, b'
    many = ['vm-%03d' % index for index in range(25)]
    assert names_text(many).endswith('vm-019, ... (and 5 more)')
    message = not_found_message('datacenter', 'DCX', 'vCenter vc:443', ['DC1', 'DC0'])
    assert message == "datacenter 'DCX' not found in vCenter vc:443; datacenters there: DC0, DC1"


VMS = [
    {'name': 'ocp1-worker-0', 'moid': 'vm-52', 'uuid': UUID, 'ref': None},
    {'name': 'ocp1-worker-1', 'moid': 'vm-55', 'uuid': '11111111-2222-3333-4444-555555555555', 'ref': None},
    {'name': 'dup', 'moid': 'vm-60', 'uuid': None, 'ref': None},
    {'name': 'dup', 'moid': 'vm-61', 'uuid': None, 'ref': None},
]


def test_select_vms_by_name_uuid_moid_each_once():
    selected, missing = select_vms(VMS, [
        {'by': 'name', 'value': 'ocp1-worker-1'},
        {'by': 'uuid', 'value': UUID.upper()},
        {'by': 'moid', 'value': 'vm-55'},
        {'by': 'uuid', 'value': UUID, 'node': 'ocp1-worker-0'},
        {'by': 'name', 'value': 'dup'},
    ])
    assert missing == []
    assert [(vm['moid'], vm['node']) for vm in selected] == [('vm-55', None), ('vm-52', 'ocp1-worker-0'), ('vm-60', None), ('vm-61', None)]


def test_missing_vms_are_all_named_in_one_message():
    selected, missing = select_vms(VMS, [{'by': 'name', 'value': 'ghost'}, {'by': 'uuid', 'value': 'abc', 'node': 'w7'},
                                         {'by': 'moid', 'value': 'vm-52'}])
    assert [vm['moid'] for vm in selected] == ['vm-52']
    assert missing_vms_message(missing, 'DC0', VMS) == (
        "No VM in datacenter DC0 with name 'ghost', BIOS UUID 'abc' (node w7); VMs there: dup, ocp1-worker-0, ocp1-worker-1")


def test_uplinks_down_are_the_bridged_nics_without_link_speed():
    facts = {'standard_switches': [{'name': 'vSwitch0', 'uplinks': ['vmnic0']}, {'name': 'vSwitch1', 'uplinks': ['vmnic1', 'vmnic2']}]}
    pnics = [SimpleNamespace(device='vmnic0', linkSpeed=SimpleNamespace(speedMb=10000)), SimpleNamespace(device='vmnic1', linkSpeed=None),
             SimpleNamespace(device='vmnic2', linkSpeed=SimpleNamespace(speedMb=1000))]
    add_uplink_state(facts, pnics)
    assert [switch['uplinks_down'] for switch in facts['standard_switches']] == [[], ['vmnic1']]
    add_uplink_state(facts, None)  # physical NICs not reported: nothing claimed down
    assert [switch['uplinks_down'] for switch in facts['standard_switches']] == [[], []]
