"""The one vCenter reader (clients/vcenter.py) against a fake client: one retrieval per object family, whatever the
number of VMs; lookups by name or moid with messages naming what exists; one VM index and one device read for both the
NIC facts (preflight, verify) and the reconfigure snapshots (the NIC and MachineSet steps)."""

import pytest
from pyVmomi import vim

from ansible_collections.ocp.egressip.plugins.module_utils.clients import vcenter, vcenter_nics
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere import ObjectRecord
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure


class FakeClient(object):
    """A VsphereClient stand-in: views answer from `records` by type, reads by reference from `details`."""

    endpoint = 'vc.example.com:443'

    def __init__(self, records=(), details=None):
        self.records, self.details, self.calls = list(records), details or {}, []
        self.content = type('Content', (), {'rootFolder': 'root'})()

    def retrieve_view(self, container, specs, purpose):
        self.calls.append(('view', [spec[0].__name__ for spec in specs], purpose))
        return [record for record in self.records if any(isinstance(record.ref, spec[0]) for spec in specs)]

    def retrieve_objects(self, refs, vim_type, paths, purpose):
        self.calls.append(('objects', list(paths), purpose))
        return [ObjectRecord(ref=ref, moid=ref._moId, props=self.details[ref._moId]) for ref in refs if ref._moId in self.details]


def record(ref, **props):
    return ObjectRecord(ref=ref, moid=ref._moId, props=props)


def nic(mac, network='VM Network', key=4000):
    backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=network)
    return vim.vm.device.VirtualVmxnet3(key=key, macAddress=mac, backing=backing,
                                        connectable=vim.vm.device.VirtualDevice.ConnectInfo(connected=True, startConnected=True))


DATACENTERS = [record(vim.Datacenter('datacenter-1'), name='DC1'), record(vim.Datacenter('datacenter-2'), name='DC2')]


def test_find_datacenter_by_name_or_moid():
    client = FakeClient(DATACENTERS)
    assert vcenter.find_datacenter(client, 'DC2').moid == 'datacenter-2'
    assert vcenter.find_datacenter(client, 'datacenter-1').props['name'] == 'DC1'
    assert [call[0] for call in client.calls] == ['view', 'view']


def test_not_found_names_what_exists_and_the_option_with_its_fix_when_given():
    client = FakeClient(DATACENTERS)
    with pytest.raises(ModuleFailure) as plain:
        vcenter.find_datacenter(client, 'DC9')
    with pytest.raises(ModuleFailure) as named:
        vcenter.find_datacenter(client, 'DC9', 'datacenter')
    assert plain.value.details['reason'] == named.value.details['reason'] == 'not_found'
    assert 'DC1' in plain.value.msg and 'DC2' in plain.value.msg and not plain.value.msg.startswith('datacenter=')
    assert named.value.msg == 'datacenter=DC9: %s. Fix: use one of those names.' % plain.value.msg
    assert 'pyvmomi_version' in named.value.details  # the library version, as every vCenter failure carries


def test_ambiguous_names_ask_for_the_moid():
    twins = [record(vim.HostSystem('host-1'), name='esx'), record(vim.HostSystem('host-2'), name='esx')]
    with pytest.raises(ModuleFailure) as plain:
        vcenter.pick_one(twins, 'esx', 'host', 'cluster C1')
    assert plain.value.msg == "host name 'esx' is ambiguous in cluster C1: host-1, host-2; use the moid"
    with pytest.raises(ModuleFailure) as named:
        vcenter.pick_one(twins, 'esx', 'host', 'cluster C1', 'hosts')
    assert named.value.msg == 'hosts=esx is ambiguous in cluster C1 (host-1, host-2). Fix: give the moid instead.'
    assert named.value.details['reason'] == 'ambiguous'


def _vms(count):
    props = [{'name': 'w%d' % index, 'config.uuid': 'ABC-%d' % index, 'config.instanceUuid': 'INST-%d' % index} for index in range(count)]
    records = [record(vim.VirtualMachine('vm-%d' % index), **props[index]) for index in range(count)]
    details = dict(('vm-%d' % index, {'config.hardware.device': [nic('00:50:56:00:00:%02x' % index)], 'config.changeVersion': 'v%d' % index,
                                      'runtime.host': vim.HostSystem('host-1'), 'runtime.powerState': 'poweredOn'})
                   for index in range(count))
    return records, details


def test_one_index_and_one_device_read_whatever_the_number_of_vms():
    records, details = _vms(25)
    client = FakeClient(records, details)
    datacenter = DATACENTERS[0]
    index = vcenter.index_vms(client, datacenter)
    assert index[3] == {'name': 'w3', 'moid': 'vm-3', 'ref': records[3].ref, 'uuid': 'abc-3', 'instance_uuid': 'inst-3'}
    snapshots = vcenter.read_vm_devices(client, index, [])
    facts = vcenter.read_vm_nics(client, datacenter, [dict(vm, node='n%d' % n) for n, vm in enumerate(index)], {}, {'host-1': 'esx-1'})
    assert [call[0] for call in client.calls] == ['view', 'objects', 'objects']
    # one device read each: the reconfigure snapshots' full one, the NIC facts' (without a pooled stub, through pyVmomi too)
    assert client.calls[1][1] == vcenter.VM_DEVICE_PATHS and client.calls[2][1] == list(vcenter_nics.PATHS)
    assert len(snapshots) == len(facts) == 25
    assert snapshots[0]['change_version'] == 'v0' and snapshots[0]['power_state'] == 'poweredOn' and list(snapshots[0]['devices']) == [4000]
    assert snapshots[0]['nics'][0]['mac'] == '00:50:56:00:00:00'
    assert (facts[1]['node'], facts[1]['host'], facts[1]['nics'][0]['mac']) == ('n1', 'esx-1', '00:50:56:00:00:01')


def test_a_vm_deleted_since_the_index_is_left_out_of_the_snapshots():
    records, details = _vms(2)
    del details['vm-1']
    client = FakeClient(records, details)
    snapshots = vcenter.read_vm_devices(client, vcenter.index_vms(client, DATACENTERS[0]), [])
    assert [vm['moid'] for vm in snapshots] == ['vm-0']


def test_select_vms_by_uuid_name_and_moid():
    index = [{'name': 'w0', 'moid': 'vm-0', 'uuid': 'abc-0'}, {'name': 'w1', 'moid': 'vm-1', 'uuid': None}]
    selected, missing = vcenter.select_vms(index, [{'by': 'uuid', 'value': 'ABC-0', 'node': 'n0'}, {'by': 'moid', 'value': 'vm-0'},
                                                   {'by': 'name', 'value': 'w9', 'node': 'n9'}])
    assert [(vm['moid'], vm['node']) for vm in selected] == [('vm-0', 'n0')]
    assert missing == [{'by': 'name', 'value': 'w9', 'node': 'n9'}]
    assert vcenter.missing_vms_message(missing, 'DC1', index).startswith("No VM in datacenter DC1 with name 'w9' (node n9); VMs there: ")
