"""machineset_network against the twin: MachineSet devices (append, and state=absent), Machine/VM NIC counts, UPI.

The twin's Machine API (tests/twin/controllers/machineapi.py) seeds a worker MachineSet with a
Machine per worker VM and a Machine per master VM, links them to the Nodes, and records
Machine API's `invalid network count` Warning event when a Machine's device count differs from
its VM's NIC count. Tests run in file order and build on each other (one twin per module).
"""

import copy

import pytest

from pyVim.task import WaitForTask
from pyVmomi import vim

from twin.fixture import kube_writes, vcsim_writes

import _vsphere_objects as vo

PORTGROUP = 'ocp-egress-ms'
NAMESPACE = 'openshift-machine-api'
GROUP, VERSION = 'machine.openshift.io', 'v1beta1'
WORKERS = {'node-role.kubernetes.io/worker': ''}


@pytest.fixture(scope='module')
def portgroup(twin):
    return vo.add_distributed_portgroup(twin, PORTGROUP)


def remove_egress_nic(twin, portgroup, vm_name):
    """Take the VM's NIC on the port group out in vCenter (what vsphere_vm_nic state=absent does), with plain pyVmomi."""
    vm = vo.find(twin, vim.VirtualMachine, vm_name)
    [nic] = [device for device in vm.config.hardware.device if isinstance(device, vim.vm.device.VirtualEthernetCard)
             and getattr(getattr(device.backing, 'port', None), 'portgroupKey', None) == portgroup['key']]
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='remove', device=nic)])))


def add_egress_nic(twin, portgroup, vm_name):
    vm = vo.find(twin, vim.VirtualMachine, vm_name)
    backing = vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
        port=vim.dvs.PortConnection(portgroupKey=portgroup['key'], switchUuid=portgroup['switch_uuid']))
    nic = vim.vm.device.VirtualVmxnet3(key=-1, backing=backing)
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=nic)])))


def args(**extra):
    base = {'datacenter': 'DC0', 'network': PORTGROUP, 'node_selector': WORKERS}
    base.update(extra)
    return base


def machinesets(twin):
    return twin.custom_objects().list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, 'machinesets')['items']


def machine(twin, name):
    return twin.custom_objects().get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, 'machines', name)


def template_devices(machineset):
    return machineset['spec']['template']['spec']['providerSpec']['value']['network']['devices']


def machine_devices(obj):
    return obj['spec']['providerSpec']['value']['network']['devices']


def count_events(twin, machine_name):
    return [event.message for event in twin.core_v1().list_namespaced_event(NAMESPACE).items
            if event.involved_object.name == machine_name and event.reason == 'FailedUpdate']


def test_seeded_machine_api_links_machines_and_nodes(twin):
    [worker_set] = machinesets(twin)
    assert worker_set['spec']['replicas'] == 3
    node = twin.core_v1().read_node('ocp1-worker-0')
    assert node.metadata.annotations['machine.openshift.io/machine'] == '%s/ocp1-worker-0' % NAMESPACE
    obj = machine(twin, 'ocp1-worker-0')
    assert obj['spec']['providerID'] == node.spec.provider_id
    assert obj['metadata']['ownerReferences'][0]['name'] == worker_set['metadata']['name']


def test_twin_reports_invalid_network_count_for_a_nic_added_only_in_vcenter(twin, portgroup):
    add_egress_nic(twin, portgroup, 'ocp1-worker-0')
    messages = twin.wait_for(lambda: count_events(twin, 'ocp1-worker-0'), timeout=10, what='the FailedUpdate event')
    assert messages == ['ocp1-worker-0: reconciler failed to Update machine: invalid network count: expected=1 current=2']


def test_check_mode_writes_nothing(twin, run_module, portgroup):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    before = copy.deepcopy(machinesets(twin))
    result = run_module('machineset_network', args(align_machines=True), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True
    assert kube_writes(twin) == 0
    dry_runs = [req for req in twin.kube_requests()['requests'] if req['verb'] == 'patch']
    assert dry_runs and all(req['dry_run'] for req in dry_runs)
    assert vcsim_writes(twin) == {}
    assert machinesets(twin) == before
    name = before[0]['metadata']['name']
    assert result['diff']['after']['MachineSet/%s' % name] == [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]
    assert result['diff']['after']['Machine/ocp1-worker-0'][-1] == {'networkName': PORTGROUP}
    assert sorted(result['diff']['before']) == sorted(['MachineSet/%s' % name, 'Machine/ocp1-worker-0'])


def test_a_failed_patch_does_not_stop_the_others_and_is_named(twin, run_module, portgroup):
    [before] = machinesets(twin)
    twin.inject_kube_fault(verb='patch', path='/machines/ocp1-worker-0', code=500, count=1)
    try:
        result = run_module('machineset_network', args(align_machines=True))
    finally:
        twin.clear_kube_faults()
    assert result['_rc'] != 0 and result.get('failed'), result
    assert 'Machine API patches: 1 write(s) failed' in result['msg'] and 'machines.machine.openshift.io ocp1-worker-0' in result['msg']
    assert 'HTTP 500' in result['msg'] and '1 write(s) succeeded' in result['msg'], result['msg']
    [after] = machinesets(twin)
    assert template_devices(after) == [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]  # the other patch went through
    assert machine_devices(machine(twin, 'ocp1-worker-0')) == [{'networkName': 'VM Network'}]
    # back to the state the next tests start from
    twin.custom_objects().patch_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, 'machinesets', after['metadata']['name'],
        [{'op': 'replace', 'path': '/spec/template/spec/providerSpec/value/network/devices', 'value': template_devices(before)}],
        _content_type='application/json-patch+json')


def test_machineset_appended_and_mismatch_reported_without_align(twin, run_module, portgroup):
    twin.reset_kube_requests()
    result = run_module('machineset_network', args())
    assert result['_rc'] == 0, result
    assert result['changed'] is True and result['machine_api'] is True
    [worker_set] = machinesets(twin)
    assert template_devices(worker_set) == [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]
    assert [entry['action'] for entry in result['machinesets']] == ['append']
    by_name = dict((entry['name'], entry) for entry in result['machines'])
    assert by_name['ocp1-worker-0']['mismatch'] and by_name['ocp1-worker-0']['action'] == 'report'
    assert (by_name['ocp1-worker-0']['expected'], by_name['ocp1-worker-0']['current']) == (1, 2)
    [finding] = [item for item in result['findings'] if item['id'] == 'machine_nic_count_mismatch']
    assert 'invalid network count: expected=1 current=2' in finding['message'] and 'align_machines=true' in finding['message']
    assert machine_devices(machine(twin, 'ocp1-worker-0')) == [{'networkName': 'VM Network'}]
    assert kube_writes(twin) == 1


def test_rerun_unchanged_still_reports(twin, run_module, portgroup):
    twin.reset_kube_requests()
    result = run_module('machineset_network', args())
    assert result['changed'] is False
    assert kube_writes(twin) == 0
    assert [item['id'] for item in result['findings']] == ['machine_nic_count_mismatch']


def test_align_machines_ends_the_mismatch(twin, run_module, portgroup):
    result = run_module('machineset_network', args(align_machines=True), diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True
    assert machine_devices(machine(twin, 'ocp1-worker-0')) == [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]
    assert result['findings'] == []
    again = run_module('machineset_network', args(align_machines=True))
    assert again['changed'] is False and all(not entry['mismatch'] for entry in again['machines'])


def test_vms_from_vsphere_vm_nic_replace_the_vcenter_read(twin, run_module, portgroup):
    """The role passes vsphere_vm_nic's vms: same plan, no vCenter session; a Machine missing from them is read from vCenter."""
    nic_args = {'datacenter': 'DC0', 'network': PORTGROUP, 'switch': 'DSwitch1', 'node_selector': {'node-role.kubernetes.io/worker': ''}}
    vms = run_module('vsphere_vm_nic', nic_args, check=True)['vms']
    assert vms and all(isinstance(vm['nic_count'], int) and vm['instance_uuid'] for vm in vms), vms
    # the twin's Machines are on ocp1-worker-0 (egress NIC added by hand above) and its neighbours: make one mismatch to see
    remove_egress_nic(twin, portgroup, 'ocp1-worker-0')
    try:
        vms = run_module('vsphere_vm_nic', nic_args, check=True)['vms']
        read = run_module('machineset_network', args(), check=True)
        twin.reset_vcsim_requests()
        given = run_module('machineset_network', args(vms=vms), check=True)
        assert given['_rc'] == 0, given
        assert twin.vcsim_requests()['counts'] == {}  # not even a login
        assert given['machines'] == read['machines'] and given['machinesets'] == read['machinesets']
        assert given['findings'] == read['findings'] and [item['id'] for item in given['findings']] == ['machine_nic_count_mismatch']
        # an entry missing: that Machine's VM is read from vCenter, the others still come from the list
        partial = run_module('machineset_network', args(vms=[vm for vm in vms if vm['name'] != 'ocp1-worker-0']), check=True)
        assert partial['machines'] == read['machines'] and twin.vcsim_requests()['counts'].get('Login') == 1
    finally:
        add_egress_nic(twin, portgroup, 'ocp1-worker-0')


def test_noop_cost_is_the_same_for_one_node_and_all(twin, run_module, portgroup):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run_module('machineset_network', args(node_selector=None, node_names=['ocp1-worker-1']))
    one = (twin.kube_requests()['counts'], twin.vcsim_requests()['counts'])
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run_module('machineset_network', args())
    assert (twin.kube_requests()['counts'], twin.vcsim_requests()['counts']) == one


def create_machineset(twin, name, devices):
    worker_set = next(item for item in machinesets(twin) if item['metadata']['name'].endswith('-worker-0'))
    obj = copy.deepcopy(worker_set)
    obj['metadata'] = {'name': name, 'namespace': NAMESPACE, 'labels': worker_set['metadata'].get('labels', {})}
    obj['spec']['replicas'] = 0
    obj['spec']['template']['spec']['providerSpec']['value']['network']['devices'] = devices
    obj.pop('status', None)
    twin.custom_objects().create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, 'machinesets', obj)


def test_existing_devices_are_never_reordered_or_dropped(twin, run_module, portgroup):
    devices = [{'networkName': 'VM Network', 'gateway': '192.168.10.1'}, {'networkName': 'storage-net'}]
    create_machineset(twin, 'ocp1-infra', copy.deepcopy(devices))
    create_machineset(twin, 'ocp1-egress-first', [{'networkName': PORTGROUP}, {'networkName': 'VM Network'}])
    result = run_module('machineset_network', args(node_selector=None, machinesets=['ocp1-infra', 'ocp1-egress-first'],
                                                   device={'nameservers': ['10.20.0.2']}))
    assert result['_rc'] == 0, result
    assert [(entry['name'], entry['action']) for entry in result['machinesets']] == [('ocp1-infra', 'append'), ('ocp1-egress-first', 'none')]
    by_name = dict((item['metadata']['name'], item) for item in machinesets(twin))
    assert template_devices(by_name['ocp1-infra']) == devices + [{'networkName': PORTGROUP, 'nameservers': ['10.20.0.2']}]
    assert template_devices(by_name['ocp1-egress-first']) == [{'networkName': PORTGROUP}, {'networkName': 'VM Network'}]


def test_ten_devices_refused_nothing_written(twin, run_module, portgroup):
    create_machineset(twin, 'ocp1-full', [{'networkName': 'net-%d' % index} for index in range(10)])
    twin.reset_kube_requests()
    result = run_module('machineset_network', args(node_selector=None, machinesets=['ocp1-full', 'ocp1-infra']))
    assert result['_rc'] != 0
    assert 'machineset_device_limit' in result['msg'] and 'ocp1-full' in result['msg']
    assert kube_writes(twin) == 0


@pytest.mark.parametrize('extra,words', [
    ({'node_selector': None}, ['nothing selected', 'machinesets']),
    ({'node_selector': None, 'machinesets': ['no-such-set']}, ['machinesets=no-such-set', 'ocp1-infra']),
    ({'node_selector': {'team': 'nobody'}}, ['node_selector=', 'matches no node']),
    ({'node_selector': None, 'node_names': ['ghost']}, ['node_names=ghost', 'no such node']),
    ({'datacenter': 'DCX'}, ['datacenter=DCX', 'DC0']),
    ({'state': 'absent', 'ipv6_cidr': '10.20.0.0/24'}, ["ipv6_cidr '10.20.0.0/24' is not an IPv6 network", 'Nothing was written']),
])
def test_bad_input_names_field_value_and_writes_nothing(twin, run_module, portgroup, extra, words):
    twin.reset_kube_requests()
    result = run_module('machineset_network', args(**extra))
    assert result['_rc'] != 0 and result.get('failed'), result
    for word in words:
        assert word in result['msg'], result['msg']
    assert kube_writes(twin) == 0


def test_control_plane_machines_are_reported_not_changed(twin, run_module, portgroup):
    twin.reset_kube_requests()
    result = run_module('machineset_network', args(node_selector={'node-role.kubernetes.io/master': ''}))
    assert result['_rc'] == 0, result
    assert result['changed'] is False and result['machinesets'] == []
    assert [item['id'] for item in result['findings']] == ['machine_api_node_without_machineset'] * 3
    assert 'ocp1-master-0' in result['findings'][0]['message']
    assert kube_writes(twin) == 0


# --- state=absent ---------------------------------------------------------------------------------------------
# From here: the worker MachineSet template and Machine ocp1-worker-0 list the port group, and the VM ocp1-worker-0 has
# the NIC (the tests above); ocp1-infra and ocp1-egress-first list it too, with other devices around it.

def worker_set(twin):
    return next(item for item in machinesets(twin) if item['metadata']['name'].endswith('-worker-0'))


def listed(twin):
    return [req['resource'] for req in twin.kube_requests()['requests'] if req['verb'] == 'list']


def hold_egress_ip(twin, node, name, ip):
    """An EgressIP on the primary network assigned to `node` (the only egress-assignable node): the twin's cluster manager assigns it."""
    custom = twin.custom_objects()
    twin.core_v1().patch_node(node, {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': ''}}})
    custom.create_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', {
        'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': name},
        'spec': {'egressIPs': [ip], 'namespaceSelector': {'matchLabels': {'team': name}}}})
    twin.wait_for(lambda: [item['node'] for item in (custom.get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', name)
                                                     .get('status') or {}).get('items') or []] == [node],
                  timeout=15, what='egress IP %s assigned to %s' % (ip, node))


def release_egress_ip(twin, node, name):
    twin.custom_objects().delete_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', name)
    twin.core_v1().patch_node(node, {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': None}}})


def test_absent_check_mode_writes_nothing_shows_the_diff_and_keeps_machines_whose_vm_has_the_nic(twin, run_module, portgroup):
    before_sets, before_machine = copy.deepcopy(machinesets(twin)), machine(twin, 'ocp1-worker-0')
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    result = run_module('machineset_network', args(state='absent'), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    dry_runs = [req for req in twin.kube_requests()['requests'] if req['verb'] == 'patch']
    assert len(dry_runs) == 1 and dry_runs[0]['dry_run']
    assert machinesets(twin) == before_sets and machine(twin, 'ocp1-worker-0') == before_machine
    key = 'MachineSet/%s' % worker_set(twin)['metadata']['name']
    assert result['diff'] == {'before': {key: [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]},
                              'after': {key: [{'networkName': 'VM Network'}]}}
    by_name = dict((entry['name'], entry) for entry in result['machines'])
    # the VM still has the NIC: taking the device out now would start an invalid network count
    assert by_name['ocp1-worker-0']['action'] == 'pending' and by_name['ocp1-worker-0']['mismatch'] is False
    assert by_name['ocp1-worker-1']['action'] == 'none'
    assert [(entry['action'], entry['nodes']) for entry in result['machinesets']] == [('remove', ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2'])]


def test_absent_refused_while_a_node_of_the_machineset_hosts_egress_ips(twin, run_module, portgroup):
    hold_egress_ip(twin, 'ocp1-worker-1', 'ms-absent', '192.168.10.201')
    try:
        twin.reset_kube_requests()
        result = run_module('machineset_network', args(state='absent'))
        assert result['_rc'] != 0 and result.get('failed'), result
        message = result['msg']
        assert '[machine_api_device_hosts_egress_ips] MachineSet %s' % worker_set(twin)['metadata']['name'] in message, message
        assert 'node ocp1-worker-1 (Machine ocp1-worker-1) hosts egress IP 192.168.10.201 of EgressIP ms-absent' in message
        assert 'Fix: delete EgressIP ms-absent or move its IPs off node ocp1-worker-1' in message and 'force=true' in message
        assert kube_writes(twin) == 0
        assert len([resource for resource in listed(twin) if 'egressips' in resource]) == 1, listed(twin)
        assert template_devices(worker_set(twin)) == [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]
        # that egress IP is on the primary network, which the port group does not carry: with cidr it does not block
        planned = run_module('machineset_network', args(state='absent', cidr='10.20.0.0/24'), check=True)
        assert planned['_rc'] == 0 and planned['changed'] is True, planned
        assert [entry['action'] for entry in planned['machinesets']] == ['remove']
        assert kube_writes(twin) == 0
    finally:
        release_egress_ip(twin, 'ocp1-worker-1', 'ms-absent')


def test_absent_takes_the_port_group_out_of_the_template_and_leaves_the_machine_whose_vm_has_the_nic(twin, run_module, portgroup):
    twin.reset_kube_requests()
    result = run_module('machineset_network', args(state='absent'))
    assert result['_rc'] == 0, result
    assert result['changed'] is True and kube_writes(twin) == 1
    assert template_devices(worker_set(twin)) == [{'networkName': 'VM Network'}]
    assert machine_devices(machine(twin, 'ocp1-worker-0')) == [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]
    assert [entry['action'] for entry in result['machines'] if entry['name'] == 'ocp1-worker-0'] == ['pending']
    again = run_module('machineset_network', args(state='absent'))
    assert again['changed'] is False and [entry['action'] for entry in again['machinesets']] == ['none']


def test_absent_aligns_the_machine_once_its_vm_lost_the_nic_refused_while_its_node_hosts_egress_ips(twin, run_module, portgroup):
    events_before = len(count_events(twin, 'ocp1-worker-0'))
    remove_egress_nic(twin, portgroup, 'ocp1-worker-0')
    messages = twin.wait_for(lambda: count_events(twin, 'ocp1-worker-0')[events_before:], timeout=10, what='the FailedUpdate event')
    assert messages == ['ocp1-worker-0: reconciler failed to Update machine: invalid network count: expected=2 current=1']
    hold_egress_ip(twin, 'ocp1-worker-0', 'machine-absent', '192.168.10.202')
    try:
        twin.reset_kube_requests()
        refused = run_module('machineset_network', args(state='absent'))
        assert refused['_rc'] != 0, refused
        assert '[machine_api_device_hosts_egress_ips] Machine ocp1-worker-0: not taking port group %s out of its providerSpec while ' \
               'node ocp1-worker-0 (Machine ocp1-worker-0) hosts egress IP 192.168.10.202 of EgressIP machine-absent' % PORTGROUP \
               in refused['msg'], refused['msg']
        assert kube_writes(twin) == 0
        check = run_module('machineset_network', args(state='absent', force=True), check=True)
        assert check['_rc'] == 0 and check['changed'] is True, check
        assert kube_writes(twin) == 0
        forced = run_module('machineset_network', args(state='absent', force=True), diff=True)
        assert forced['_rc'] == 0, forced
        assert forced['changed'] is True and kube_writes(twin) == 1
    finally:
        release_egress_ip(twin, 'ocp1-worker-0', 'machine-absent')
    assert forced['diff'] == {'before': {'Machine/ocp1-worker-0': [{'networkName': 'VM Network'}, {'networkName': PORTGROUP}]},
                              'after': {'Machine/ocp1-worker-0': [{'networkName': 'VM Network'}]}}
    [entry] = [entry for entry in forced['machines'] if entry['name'] == 'ocp1-worker-0']
    assert (entry['action'], entry['expected'], entry['current'], entry['mismatch']) == ('remove', 2, 1, True)
    assert machine_devices(machine(twin, 'ocp1-worker-0')) == [{'networkName': 'VM Network'}]
    vm = next(vm for vm in twin.inventory()['vms'] if vm['name'] == 'ocp1-worker-0')
    assert len(vm['nics']) == len(machine_devices(machine(twin, 'ocp1-worker-0'))) == 1


def test_absent_rerun_is_unchanged_with_one_list_per_kind_for_one_node_and_all(twin, run_module, portgroup):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    result = run_module('machineset_network', args(state='absent'))
    assert result['_rc'] == 0 and result['changed'] is False, result
    assert result['findings'] == [] and all(entry['action'] == 'none' for entry in result['machines'])
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
    every = (twin.kube_requests()['counts'], twin.vcsim_requests()['counts'])
    # one list per kind (nodes, MachineSets, Machines); no EgressIP list when nothing lists the port group
    assert sorted(listed(twin)) == sorted(set(listed(twin))) and not any('egressips' in resource for resource in listed(twin)), listed(twin)
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    one = run_module('machineset_network', args(state='absent', node_selector=None, node_names=['ocp1-worker-1']))
    assert one['changed'] is False
    assert (twin.kube_requests()['counts'], twin.vcsim_requests()['counts']) == every
    check = run_module('machineset_network', args(state='absent'), check=True, diff=True)
    assert check['changed'] is False and check['diff'] == {'before': {}, 'after': {}}


def test_absent_takes_out_only_the_port_group_never_reordering_the_other_devices(twin, run_module, portgroup):
    by_name = dict((item['metadata']['name'], item) for item in machinesets(twin))
    assert template_devices(by_name['ocp1-egress-first']) == [{'networkName': PORTGROUP}, {'networkName': 'VM Network'}]
    infra_before = template_devices(by_name['ocp1-infra'])
    assert infra_before[-1]['networkName'] == PORTGROUP
    result = run_module('machineset_network', args(node_selector=None, machinesets=['ocp1-egress-first', 'ocp1-infra', 'ocp1-full'],
                                                   state='absent'))
    assert result['_rc'] == 0, result
    assert [(entry['name'], entry['action']) for entry in result['machinesets']] == [
        ('ocp1-egress-first', 'remove'), ('ocp1-infra', 'remove'), ('ocp1-full', 'none')]
    by_name = dict((item['metadata']['name'], item) for item in machinesets(twin))
    assert template_devices(by_name['ocp1-egress-first']) == [{'networkName': 'VM Network'}]
    assert infra_before[:-1] == [{'networkName': 'VM Network', 'gateway': '192.168.10.1'}, {'networkName': 'storage-net'}]
    assert template_devices(by_name['ocp1-infra']) == infra_before[:-1]
    assert template_devices(by_name['ocp1-full']) == [{'networkName': 'net-%d' % index} for index in range(10)]


def test_cluster_without_machine_api_reports_the_vcenter_path_only(twin, run_module, portgroup):
    custom = twin.custom_objects()
    for item in custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, 'machines')['items']:
        custom.delete_namespaced_custom_object(GROUP, VERSION, NAMESPACE, 'machines', item['metadata']['name'])
    for item in machinesets(twin):
        custom.delete_namespaced_custom_object(GROUP, VERSION, NAMESPACE, 'machinesets', item['metadata']['name'])
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    result = run_module('machineset_network', args())
    assert result['_rc'] == 0, result
    assert result['changed'] is False and result['machine_api'] is False
    assert [item['id'] for item in result['findings']] == ['machine_api_absent']
    assert 'only the vCenter path applies' in result['findings'][0]['message']
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}
