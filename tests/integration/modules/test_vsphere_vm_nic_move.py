"""The collection's NIC (the MAC its NMState policy names) follows a changed port group (issue 13, section 2).

In file order on one twin: NICs on port group A and their policies; the variables name port group B: vsphere_vm_nic
moves each NIC (check mode first: nothing written, the diff shows the network change), a rerun changes nothing, and
machineset_network renames the device A of the MachineSet and the Machines to B instead of appending one. Then B is
renamed in vCenter (a distributed port group keeps its key: nothing to move) and machineset_network finds the old
name by itself. A VM with a second NIC already on the target port group is refused, nothing written.
"""

from pyVim.task import WaitForTask
from pyVmomi import vim

from twin.fixture import kube_writes, vcsim_writes

import _vsphere_objects as vo

TWIN_OPTIONS = {'workers': 3}
WORKERS = ['ocp1-worker-%d' % i for i in range(3)]
SELECTOR = {'node-role.kubernetes.io/worker': ''}
A, B, RENAMED, C = 'egress-a', 'egress-b', 'egress-b-renamed', 'egress-c'
NNCP = dict(group='nmstate.io', version='v1', plural='nodenetworkconfigurationpolicies')
MACHINE_API = dict(group='machine.openshift.io', version='v1beta1', namespace='openshift-machine-api')


def _dvs(twin):
    return vo.find(twin, vim.DistributedVirtualSwitch, 'DSwitch1')


def _add_portgroup(twin, name):
    vo.add_distributed_portgroup(twin, name)


def _key(twin, name):
    return next(pg['key'] for dvs in twin.inventory()['dvs'] for pg in dvs['portgroups'] if pg['name'] == name)


def _nics(twin, name, portgroup_name=None):
    vm = next(item for item in twin.inventory()['vms'] if item['name'] == name)
    key = _key(twin, portgroup_name) if portgroup_name else None
    return [nic for nic in vm['nics'] if key is None or nic['portgroup_key'] == key]


def _args(network, **extra):
    base = {'datacenter': 'DC0', 'network': network, 'switch': 'DSwitch1', 'node_selector': SELECTOR}
    base.update(extra)
    return base


def _policy(twin, node, mac, address):
    """A policy as node_nic_address writes it (the collection's label, its node and address annotations, the NIC by MAC)."""
    body = {'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy',
            'metadata': {'name': 'egressip-' + node, 'labels': {'egressip.ocp/managed-by': 'ocp.egressip'},
                         'annotations': {'egressip.ocp/node': node, 'egressip.ocp/addresses': address + '/24'}},
            'spec': {'nodeSelector': {'kubernetes.io/hostname': node}, 'desiredState': {'interfaces': [
                {'name': 'egress0', 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address', 'mac-address': mac.upper(),
                 'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': address, 'prefix-length': 24}]}}]}}}
    twin.custom_objects().create_cluster_custom_object(body=body, **NNCP)


def _machineset(twin):
    return next(item for item in twin.custom_objects().list_namespaced_custom_object(plural='machinesets', **MACHINE_API)['items']
                if item['metadata']['name'].endswith('-worker-0'))


def _devices(obj):
    spec = obj['spec']['template']['spec'] if obj['kind'] == 'MachineSet' else obj['spec']
    return [device['networkName'] for device in spec['providerSpec']['value']['network']['devices']]


def _machine(twin, name):
    return twin.custom_objects().get_namespaced_custom_object(plural='machines', name=name, **MACHINE_API)


MACS = {}


def test_arrange_nics_on_a_and_their_policies(twin, run_module):
    _add_portgroup(twin, A)
    _add_portgroup(twin, B)
    result = run_module('vsphere_vm_nic', _args(A))
    assert result['_rc'] == 0, result
    for index, vm in enumerate(result['vms']):
        MACS[vm['node']] = (vm['mac'], vm['device_key'])
        _policy(twin, vm['node'], vm['mac'], '10.20.0.%d' % (11 + index))
    aligned = run_module('machineset_network', {'datacenter': 'DC0', 'network': A, 'node_selector': SELECTOR,
                                                'align_machines': True, 'vms': result['vms']})
    assert aligned['_rc'] == 0, aligned
    assert _devices(_machineset(twin)) == ['VM Network', A]
    assert all(_devices(_machine(twin, name)) == ['VM Network', A] for name in WORKERS)


def test_check_mode_plans_the_move_and_writes_nothing(twin, run_module):
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    result = run_module('vsphere_vm_nic', _args(B), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert [vm['action'] for vm in result['vms']] == ['move'] * 3
    for vm in result['vms']:
        assert (vm['mac'], vm['device_key'], vm['previous_network']) == MACS[vm['node']] + (A,)
        assert [nic['network'] for nic in result['diff']['before'][vm['name']]] == [A]
        assert [nic['network'] for nic in result['diff']['after'][vm['name']]] == [B]
        assert result['diff']['after'][vm['name']][0]['mac'] == vm['mac']
    assert vcsim_writes(twin) == {} and kube_writes(twin) == 0


def test_the_nic_moves_with_its_mac_and_device_key(twin, run_module):
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', _args(B))
    assert result['_rc'] == 0, result
    assert result['changed'] is True and vcsim_writes(twin) == {'ReconfigVM_Task': 3}
    for vm in result['vms']:
        assert vm['action'] == 'move' and (vm['mac'], vm['device_key']) == MACS[vm['node']]
        [nic] = _nics(twin, vm['name'], B)
        assert (nic['mac'].lower(), nic['key']) == MACS[vm['node']] and nic['connected']
        assert _nics(twin, vm['name'], A) == [] and len(_nics(twin, vm['name'])) == 2  # never a second NIC
    MACS['vms'] = result['vms']


def test_a_rerun_changes_nothing(twin, run_module):
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', _args(B))
    assert result['_rc'] == 0 and result['changed'] is False, result
    assert [vm['action'] for vm in result['vms']] == ['none'] * 3 and vcsim_writes(twin) == {}


def test_machineset_network_renames_the_device_instead_of_appending_one(twin, run_module):
    args = {'datacenter': 'DC0', 'network': B, 'node_selector': SELECTOR, 'align_machines': True, 'vms': MACS['vms']}
    twin.reset_kube_requests()
    check = run_module('machineset_network', args, check=True, diff=True)
    assert check['_rc'] == 0, check
    assert kube_writes(twin) == 0 and _devices(_machineset(twin)) == ['VM Network', A]
    [machineset] = check['machinesets']
    assert machineset['action'] == 'replace' and machineset['devices'] == [{'networkName': 'VM Network'}, {'networkName': B}]
    assert [entry['action'] for entry in check['machines'] if entry['name'] in WORKERS] == ['replace'] * 3
    result = run_module('machineset_network', args, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert _devices(_machineset(twin)) == ['VM Network', B]
    assert all(_devices(_machine(twin, name)) == ['VM Network', B] for name in WORKERS)
    again = run_module('machineset_network', args)
    assert again['_rc'] == 0 and again['changed'] is False, again


def test_a_port_group_renamed_in_vcenter_is_found_by_machineset_network_itself(twin, run_module):
    portgroup = next(item for item in _dvs(twin).portgroup if item.name == B)
    WaitForTask(portgroup.ReconfigureDVPortgroup_Task(vim.dvs.DistributedVirtualPortgroup.ConfigSpec(
        name=RENAMED, configVersion=portgroup.config.configVersion)))
    nics = run_module('vsphere_vm_nic', _args(RENAMED))
    assert nics['_rc'] == 0 and nics['changed'] is False, nics  # same key: the NIC is already there
    result = run_module('machineset_network', {'datacenter': 'DC0', 'network': RENAMED, 'node_selector': SELECTOR,
                                               'align_machines': True, 'vms': nics['vms']})
    assert result['_rc'] == 0, result
    assert [item['action'] for item in result['machinesets']] == ['replace']
    assert _devices(_machineset(twin)) == ['VM Network', RENAMED]
    assert all(_devices(_machine(twin, name)) == ['VM Network', RENAMED] for name in WORKERS)


def test_a_second_nic_already_on_the_target_is_refused_nothing_written(twin, run_module):
    _add_portgroup(twin, C)
    vm = vo.find(twin, vim.VirtualMachine, WORKERS[0])
    switch_uuid = next(dvs['uuid'] for dvs in twin.inventory()['dvs'] if dvs['name'] == 'DSwitch1')
    backing = vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
        port=vim.dvs.PortConnection(portgroupKey=_key(twin, C), switchUuid=switch_uuid))
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(
        operation='add', device=vim.vm.device.VirtualVmxnet3(key=-1, backing=backing))])))
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', _args(C))
    assert result['_rc'] != 0
    assert [item['id'] for item in result['findings']] == ['vsphere_vm_nic_move_refused']
    assert WORKERS[0] in result['msg'] and MACS[WORKERS[0]][0] in result['msg']
    assert vcsim_writes(twin) == {}
