"""machineset_network against the twin: MachineSet devices (append-only), Machine/VM NIC counts, UPI.

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

PORTGROUP = 'ocp-egress-ms'
NAMESPACE = 'openshift-machine-api'
GROUP, VERSION = 'machine.openshift.io', 'v1beta1'
WORKERS = {'node-role.kubernetes.io/worker': ''}


def find(si, vim_type, name):
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim_type], True)
    try:
        return next(obj for obj in view.view if obj.name == name)
    finally:
        view.DestroyView()


@pytest.fixture(scope='module')
def portgroup(twin):
    si = twin.vsphere()
    dvs = find(si, vim.DistributedVirtualSwitch, 'DSwitch1')
    WaitForTask(dvs.AddDVPortgroup_Task([vim.dvs.DistributedVirtualPortgroup.ConfigSpec(name=PORTGROUP, type='earlyBinding', numPorts=8)]))
    pg = find(si, vim.dvs.DistributedVirtualPortgroup, PORTGROUP)
    return {'key': pg.key, 'switch_uuid': dvs.uuid}


def add_egress_nic(twin, portgroup, vm_name):
    vm = find(twin.vsphere(), vim.VirtualMachine, vm_name)
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
