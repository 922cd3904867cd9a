"""vsphere_vm_nic sends one reconfigure per VM at a time: vCenter refuses a second task on a VM while one runs
(TaskInProgress, tests/twin/README.md "vCenter's own checks"), so every VM's NIC changes go in one spec.

The twin holds each reconfigure half a second (a slow vCenter) and refuses overlapping ones (option
reconfigure_overlap, default fail): a run that sent two at once to one VM would fail or retry here.
"""

import pytest

import _vsphere_objects as vo

TWIN_OPTIONS = {'workers': 4}
PORTGROUP = 'ocp-egress-150'


@pytest.fixture(scope='module')
def portgroup(twin):
    return vo.add_distributed_portgroup(twin, PORTGROUP, vlan=150, ports=16, auto_expand=True)


@pytest.fixture
def slow_strict_vcenter(twin):
    assert twin._vcsim('POST', '/_twin/options', {'reconfigure_delay': 0.5})['reconfigure_overlap'] == 'fail'  # pylint: disable=protected-access
    yield
    twin._vcsim('POST', '/_twin/options', {'reconfigure_delay': 0})  # pylint: disable=protected-access


def _reconfigures_per_vm(twin):
    calls = [entry for entry in twin.vcsim_requests()['requests'] if entry['method'] == 'ReconfigVM_Task']
    per_vm = {}
    for entry in calls:
        per_vm[entry['this']] = per_vm.get(entry['this'], 0) + 1
    return per_vm


@pytest.mark.parametrize('state', ['present', 'absent'])
def test_one_reconfigure_per_vm_and_none_refused(twin, run_module, portgroup, slow_strict_vcenter, state):
    workers = dict((vm['moid'], vm['name']) for vm in twin.vcsim_state['vms'] if vm['role'] == 'worker')
    twin.reset_vcsim_requests()
    result = run_module('vsphere_vm_nic', {'datacenter': 'DC0', 'network': PORTGROUP, 'state': state, 'parallel': 8, 'force': True,
                                           'node_selector': {'node-role.kubernetes.io/worker': ''}})
    assert result['_rc'] == 0 and result['changed'] is True, result.get('msg')
    assert sorted(vm['name'] for vm in result['vms'] if vm['changed']) == sorted(workers.values())
    assert _reconfigures_per_vm(twin) == dict((moid, 1) for moid in workers)  # one task per VM: no TaskInProgress, no retry
    for vm in twin.inventory()['vms']:
        count = len([nic for nic in vm['nics'] if nic['portgroup_key'] == portgroup['key']])
        assert count == (1 if state == 'present' and vm['moid'] in workers else 0), vm
