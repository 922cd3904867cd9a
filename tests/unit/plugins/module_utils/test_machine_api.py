"""Machine API planning: append-only MachineSet devices, node coverage, Machine/VM NIC counts."""

import copy

from ansible_collections.ocp.egressip.plugins.module_utils import _machine_api as mapi

NS = 'openshift-machine-api'
DEVICES = '/spec/template/spec/providerSpec/value/network/devices'


def ids(findings):
    return [item['id'] for item in findings]


def machineset(name='ocp1-worker', devices=None):
    devices = [{'networkName': 'VM Network'}] if devices is None else devices
    return {'kind': 'MachineSet', 'metadata': {'name': name, 'namespace': NS},
            'spec': {'template': {'spec': {'providerSpec': {'value': {'network': {'devices': devices}}}}}}}


def machine(name, devices=None, owner='ocp1-worker', node=None, uid='uid-' + 'x'):
    devices = [{'networkName': 'VM Network'}] if devices is None else devices
    meta = {'name': name, 'namespace': NS, 'uid': uid}
    if owner:
        meta['ownerReferences'] = [{'kind': 'MachineSet', 'name': owner, 'apiVersion': 'machine.openshift.io/v1beta1'}]
    obj = {'kind': 'Machine', 'metadata': meta, 'spec': {'providerSpec': {'value': {'network': {'devices': devices}}}}}
    if node:
        obj['status'] = {'nodeRef': {'kind': 'Node', 'name': node}}
    return obj


def node(name, machine_name=None):
    meta = {'name': name}
    if machine_name:
        meta['annotations'] = {mapi.NODE_MACHINE_ANNOTATION: '%s/%s' % (NS, machine_name)}
    return {'metadata': meta}


# --- MachineSet template devices -----------------------------------------------------------------

def test_appends_after_existing_devices_with_guarded_patch():
    existing = [{'networkName': 'VM Network', 'gateway': '192.168.10.1'}, {'networkName': 'storage'}]
    plan = mapi.plan_machineset(machineset(devices=copy.deepcopy(existing)), 'ocp-egress-120')
    assert plan['action'] == 'append'
    assert plan['after'] == existing + [{'networkName': 'ocp-egress-120'}]
    assert plan['patch'] == [{'op': 'test', 'path': DEVICES, 'value': existing},
                             {'op': 'add', 'path': DEVICES + '/-', 'value': {'networkName': 'ocp-egress-120'}}]


def test_present_anywhere_is_no_change_and_never_reordered():
    devices = [{'networkName': 'ocp-egress-120'}, {'networkName': 'VM Network'}]
    plan = mapi.plan_machineset(machineset(devices=devices), 'ocp-egress-120')
    assert plan['action'] == 'none' and plan['patch'] is None and plan['after'] == devices


def test_inventory_path_counts_as_the_port_group():
    plan = mapi.plan_machineset(machineset(devices=[{'networkName': '/DC0/network/ocp-egress-120'}]), 'ocp-egress-120')
    assert plan['action'] == 'none'
    plan = mapi.plan_machineset(machineset(devices=[{'networkName': 'not-ocp-egress-120'}]), 'ocp-egress-120')
    assert plan['action'] == 'append'


def test_device_options_only_when_set():
    plan = mapi.plan_machineset(machineset(), 'pg', {'gateway': '10.20.0.1', 'ipAddrs': [], 'nameservers': None})
    assert plan['after'][-1] == {'networkName': 'pg', 'gateway': '10.20.0.1'}


def test_ten_devices_refused():
    plan = mapi.plan_machineset(machineset(devices=[{'networkName': 'n%d' % i} for i in range(10)]), 'pg')
    assert plan['action'] == 'refused' and ids(plan['findings']) == ['machineset_device_limit']


def test_missing_devices_refused():
    broken = machineset()
    del broken['spec']['template']['spec']['providerSpec']['value']['network']
    plan = mapi.plan_machineset(broken, 'pg')
    assert plan['action'] == 'refused' and ids(plan['findings']) == ['machine_api_providerspec_unexpected']


# --- coverage ---------------------------------------------------------------------------------------

def test_nodes_map_to_machine_by_annotation_or_node_ref():
    machines = [machine('m0'), machine('m1', node='n1'), machine('cp0', owner=None)]
    rows = mapi.node_machines([node('n0', 'm0'), node('n1'), node('cp-node', 'cp0'), node('stray')], machines, [machineset()])
    assert [(r['node'], r['machine'] and r['machine']['metadata']['name'], r['machineset']) for r in rows] == [
        ('n0', 'm0', 'ocp1-worker'), ('n1', 'm1', 'ocp1-worker'), ('cp-node', 'cp0', None), ('stray', None, None)]
    findings = mapi.coverage_findings(rows)
    assert ids(findings) == ['machine_api_node_without_machineset'] * 2
    assert 'cp0' in findings[0]['message'] and 'stray' in findings[1]['message']


def test_owner_that_is_gone_counts_as_no_machineset():
    rows = mapi.node_machines([node('n0', 'm0')], [machine('m0', owner='deleted-set')], [machineset()])
    assert rows[0]['machineset'] is None


def test_no_machine_for_any_node_is_upi():
    rows = mapi.node_machines([node('n0'), node('n1')], [], [])
    assert ids(mapi.coverage_findings(rows)) == ['machine_api_absent']
    assert mapi.coverage_findings([]) == []


# --- Machine / VM NIC counts ----------------------------------------------------------------------------

def vm(name, nics):
    return {'name': name, 'nics': [{'mac': 'm%d' % i} for i in range(nics)]}


def test_vm_found_by_instance_uuid_then_name():
    by_uuid = {'uid-1': vm('cloned', 1)}
    by_name = {'m0': vm('m0', 1)}
    assert mapi.machine_vm(machine('m0', uid='UID-1'), by_uuid, by_name)['name'] == 'cloned'
    assert mapi.machine_vm(machine('m0', uid='other'), by_uuid, by_name)['name'] == 'm0'
    assert mapi.machine_vm(machine('zz', uid='other'), by_uuid, by_name) is None


def test_equal_counts_no_action():
    plan = mapi.plan_machine(machine('m0'), vm('m0', 1), 'pg', False, align=True)
    assert plan['mismatch'] is False and plan['action'] == 'none'


def test_mismatch_reported_with_machine_api_message_and_hint():
    plan = mapi.plan_machine(machine('m0'), vm('m0', 2), 'pg', True, align=False)
    assert plan['mismatch'] and plan['action'] == 'report'
    assert (plan['expected'], plan['current']) == (1, 2)
    assert ids(plan['findings']) == ['machine_nic_count_mismatch']
    assert 'invalid network count: expected=1 current=2' in plan['findings'][0]['message']
    assert 'align_machines=true' in plan['findings'][0]['message']


def test_align_appends_when_that_fixes_the_count():
    plan = mapi.plan_machine(machine('m0'), vm('m0', 2), 'pg', True, align=True)
    assert plan['action'] == 'append'
    assert plan['after'] == [{'networkName': 'VM Network'}, {'networkName': 'pg'}]
    assert plan['patch'][1] == {'op': 'add', 'path': '/spec/providerSpec/value/network/devices/-', 'value': {'networkName': 'pg'}}


def test_align_does_not_guess_when_append_would_not_fix_it():
    # VM has 3 NICs but only one is ours: appending gives 2, still a mismatch.
    plan = mapi.plan_machine(machine('m0'), vm('m0', 3), 'pg', True, align=True)
    assert plan['action'] == 'report' and 'align_machines' not in plan['findings'][0]['message']
    # VM lacks our NIC: nothing of ours to describe.
    assert mapi.plan_machine(machine('m0'), vm('m0', 2), 'pg', False, align=True)['action'] == 'report'


def test_machine_without_vm_is_no_mismatch():
    plan = mapi.plan_machine(machine('m0'), None, 'pg', False, align=True)
    assert plan['mismatch'] is False and plan['vm'] is None
