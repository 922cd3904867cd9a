"""Machine API planning: append-only MachineSet devices, node coverage, Machine/VM NIC counts."""

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.plan import machine_api as mapi
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips

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


# --- state=absent: taking the port group out -----------------------------------------------------------

MACHINE_DEVICES = '/spec/providerSpec/value/network/devices'


def egressip(name, *assignments):
    return {'metadata': {'name': name}, 'status': {'items': [{'node': n, 'egressIP': ip} for n, ip in assignments]}}


def test_removes_only_the_port_group_devices_from_the_highest_index_down_after_a_test():
    devices = [{'networkName': 'pg'}, {'networkName': 'VM Network', 'gateway': '192.168.10.1'},
               {'networkName': '/DC0/network/pg'}, {'networkName': 'storage'}]
    plan = mapi.plan_machineset_remove(machineset(devices=copy.deepcopy(devices)), 'pg', [], {})
    assert plan['action'] == 'remove'
    assert plan['after'] == [devices[1], devices[3]]
    assert plan['patch'] == [{'op': 'test', 'path': DEVICES, 'value': devices},
                             {'op': 'remove', 'path': DEVICES + '/2'}, {'op': 'remove', 'path': DEVICES + '/0'}]


def test_nothing_to_remove_is_no_change():
    plan = mapi.plan_machineset_remove(machineset(devices=[{'networkName': 'not-pg'}]), 'pg', [('m0', 'n0')],
                                       hosted_egress_ips([egressip('e', ('n0', '10.20.0.100'))]))
    assert plan['action'] == 'none' and plan['patch'] is None and plan['findings'] == []
    broken = machineset()
    del broken['spec']['template']['spec']['providerSpec']['value']['network']
    assert mapi.plan_machineset_remove(broken, 'pg', [], {})['action'] == 'none'


def test_template_removal_refused_while_a_node_of_the_set_hosts_egress_ips_names_machine_node_egressip_and_fix():
    hosted = hosted_egress_ips([egressip('payments', ('n1', '10.20.0.100')), egressip('other', ('elsewhere', '10.20.0.101'))])
    members = [('m0', 'n0'), ('m1', 'n1'), ('m2', None)]
    plan = mapi.plan_machineset_remove(machineset(devices=[{'networkName': 'VM Network'}, {'networkName': 'pg'}]), 'pg', members, hosted)
    assert plan['action'] == 'refused' and plan['patch'] is None and plan['nodes'] == ['n0', 'n1']
    [finding] = plan['findings']
    assert finding['id'] == 'machine_api_device_hosts_egress_ips' and finding['severity'] == 'error'
    assert 'node n1 (Machine m1) hosts egress IP 10.20.0.100 of EgressIP payments' in finding['message']
    assert 'delete EgressIP payments or move its IPs off node n1' in finding['remedy'] and 'force=true' in finding['remedy']
    assert {'kind': 'EgressIP', 'name': 'payments'} in finding['objects']
    forced = mapi.plan_machineset_remove(machineset(devices=[{'networkName': 'VM Network'}, {'networkName': 'pg'}]), 'pg', members,
                                         hosted, force=True)
    assert forced['action'] == 'remove' and forced['findings'] == []


def test_machineset_members_from_owner_and_node_ref():
    members = mapi.machineset_members([machine('m0', node='n0'), machine('m1'), machine('cp0', owner=None, node='cp')])
    assert members == {'ocp1-worker': [('m0', 'n0'), ('m1', None)]}


def two_devices():
    return [{'networkName': 'VM Network'}, {'networkName': 'pg'}]


def test_machine_whose_vm_still_has_the_nic_is_pending_not_changed():
    # Removing the device now would start "invalid network count: expected=1 current=2".
    plan = mapi.plan_machine_remove(machine('m0', devices=two_devices()), vm('m0', 2), 'pg', True, 'n0', {})
    assert plan['action'] == 'pending' and plan['patch'] is None and plan['findings'] == []
    # Not on the port group by what vCenter says (for example the port group is gone), but still as many NICs as listed.
    plan = mapi.plan_machine_remove(machine('m0', devices=two_devices()), vm('m0', 2), 'pg', False, 'n0', {})
    assert plan['action'] == 'pending'


def test_machine_whose_vm_lost_the_nic_is_aligned():
    plan = mapi.plan_machine_remove(machine('m0', devices=two_devices()), vm('m0', 1), 'pg', False, 'n0', {})
    assert plan['action'] == 'remove' and plan['mismatch'] is True
    assert plan['after'] == [{'networkName': 'VM Network'}]
    assert plan['patch'] == [{'op': 'test', 'path': MACHINE_DEVICES, 'value': two_devices()},
                             {'op': 'remove', 'path': MACHINE_DEVICES + '/1'}]


def test_machine_removal_refused_while_its_node_hosts_egress_ips_unless_force():
    hosted = hosted_egress_ips([egressip('payments', ('n0', '10.20.0.100'))])
    plan = mapi.plan_machine_remove(machine('m0', devices=two_devices()), vm('m0', 1), 'pg', False, 'n0', hosted)
    assert plan['action'] == 'refused' and plan['patch'] is None
    assert 'Machine m0: not taking port group pg out of its providerSpec while node n0 (Machine m0) hosts egress IP 10.20.0.100 ' \
           'of EgressIP payments' in plan['findings'][0]['message']
    forced = mapi.plan_machine_remove(machine('m0', devices=two_devices()), vm('m0', 1), 'pg', False, 'n0', hosted, force=True)
    assert forced['action'] == 'remove'


def test_machine_removal_that_would_not_fix_the_count_is_reported():
    plan = mapi.plan_machine_remove(machine('m0', devices=two_devices() + [{'networkName': 'x'}]), vm('m0', 1), 'pg', False, 'n0', {})
    assert plan['action'] == 'report' and ids(plan['findings']) == ['machine_nic_count_mismatch']
    assert 'would still leave 2 device(s) for 1 NIC(s)' in plan['findings'][0]['message']


def test_machine_without_the_port_group_reports_an_unrelated_mismatch_only():
    assert mapi.plan_machine_remove(machine('m0'), vm('m0', 1), 'pg', False, 'n0', {})['action'] == 'none'
    plan = mapi.plan_machine_remove(machine('m0'), vm('m0', 3), 'pg', False, 'n0', {})
    assert plan['action'] == 'report' and ids(plan['findings']) == ['machine_nic_count_mismatch']


def test_machine_listing_the_port_group_without_a_vm_is_left_and_reported():
    plan = mapi.plan_machine_remove(machine('m0', devices=two_devices()), None, 'pg', False, 'n0', {})
    assert plan['action'] == 'report' and ids(plan['findings']) == ['vsphere_node_vm_not_found']
    assert plan['findings'][0]['severity'] == 'warning'
