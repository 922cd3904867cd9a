"""The vSphere write specs and the task runner, with a recording client (no server).

What the twin's simulator cannot show: vcsim does not check configVersion, so the spec is
checked here; task polling is checked with fake tasks that finish out of order.
"""

from pyVmomi import vim

from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere_network_io as io
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere import ObjectRecord


class Recorder(object):
    """A VsphereClient stand-in: `call` records the keyword arguments, `retrieve_objects` answers task states."""

    endpoint = 'vcenter.example:443'

    def __init__(self, states=None):
        self.calls = []
        self.states = states or {}
        self.polls = 0

    def call(self, method, purpose, func, *args, **kwargs):
        self.calls.append((method, kwargs))
        return func(*args, **kwargs) if callable(func) else None

    def retrieve_objects(self, refs, vim_type, paths, purpose):
        self.polls += 1
        records = []
        for ref in refs:
            state = self.states[ref._moId].pop(0) if len(self.states[ref._moId]) > 1 else self.states[ref._moId][0]
            props = {'info.state': state[0], 'info.error': state[1]}
            records.append(ObjectRecord(ref=ref, moid=ref._moId, props=props))
        return records


class Task(object):
    def __init__(self, moid):
        self._moId = moid


def dvpg_config():
    port = vim.dvs.VmwareDistributedVirtualSwitch.VmwarePortConfigPolicy(
        vlan=vim.dvs.VmwareDistributedVirtualSwitch.VlanIdSpec(vlanId=120, inherited=False),
        securityPolicy=vim.dvs.VmwareDistributedVirtualSwitch.SecurityPolicy(allowPromiscuous=vim.BoolPolicy(value=True, inherited=False)))
    return vim.dvs.DistributedVirtualPortgroup.ConfigInfo(
        key='dvportgroup-9', name='pg', configVersion='7', type='earlyBinding', numPorts=32, autoExpand=False,
        defaultPortConfig=port, description='hand made')


def test_reconfigure_sends_config_version_and_keeps_what_the_user_did_not_set():
    client = Recorder()

    class Portgroup(object):
        def ReconfigureDVPortgroup_Task(self, spec):  # pylint: disable=invalid-name
            return spec

    network = {'name': 'pg', 'config': dvpg_config(), 'ref': Portgroup()}
    spec = io.reconfigure_distributed_portgroup(client, network, {'vlan_id': 130, 'forged_transmits': False})
    assert client.calls[0][0] == 'ReconfigureDVPortgroup_Task'
    assert spec.configVersion == '7'
    assert (spec.numPorts, spec.autoExpand, spec.type, spec.description) == (32, False, 'earlyBinding', 'hand made')
    assert spec.defaultPortConfig.vlan.vlanId == 130
    assert spec.defaultPortConfig.securityPolicy.allowPromiscuous.value is True
    assert spec.defaultPortConfig.securityPolicy.forgedTransmits.value is False
    assert spec.defaultPortConfig.securityPolicy.macChanges is None


def test_standard_update_keeps_the_port_groups_own_policy():
    client = Recorder()
    teaming = vim.host.NetworkPolicy.NicTeamingPolicy(policy='failover_explicit')
    spec = vim.host.PortGroup.Specification(name='pg', vlanId=7, vswitchName='vSwitch1',
                                            policy=vim.host.NetworkPolicy(nicTeaming=teaming))
    sent = {}

    class System(object):
        def UpdatePortGroup(self, pgName, portgrp):  # pylint: disable=invalid-name
            sent.update(name=pgName, spec=portgrp)

    host = {'name': 'h1', 'network_system': System(), 'specs': {'pg': spec}}
    io.update_standard_portgroup(client, host, 'pg', {'vlan_id': 120, 'promiscuous': False})
    assert sent['name'] == 'pg' and sent['spec'].vlanId == 120
    assert sent['spec'].policy.nicTeaming.policy == 'failover_explicit'
    assert sent['spec'].policy.security.allowPromiscuous is False and sent['spec'].policy.security.macChanges is None


def test_distributed_view_of_trunk_and_pvlan():
    config = dvpg_config()
    network = {'switch': 'DSwitch1', 'config': config}
    assert io.distributed_view(network)['vlan_id'] == 120
    config.defaultPortConfig.vlan = vim.dvs.VmwareDistributedVirtualSwitch.TrunkVlanSpec(
        vlanId=[vim.NumericRange(start=0, end=4094)])
    assert io.distributed_view(network)['vlan_id'] == 'trunk:0-4094'
    config.defaultPortConfig.vlan = vim.dvs.VmwareDistributedVirtualSwitch.PvlanSpec(pvlanId=5)
    assert io.distributed_view(network)['vlan_id'] == 'pvlan:5'
    assert io.distributed_view(network)['port_binding'] == 'static' and io.distributed_view(network)['promiscuous'] is True


def test_run_tasks_bounded_polls_together_and_keeps_going_after_a_failure():
    fault = vim.LocalizedMethodFault(fault=vim.fault.InvalidDeviceSpec(msg='bad device'), localizedMessage='bad device')
    states = {'task-1': [('running', None), ('success', None)], 'task-2': [('error', fault)], 'task-3': [('success', None)]}
    client = Recorder(states)
    started = []

    def start(moid):
        def run():
            started.append(moid)
            return Task(moid)
        return run

    def refused():
        raise ModuleFailure('vCenter refused the call: NoPermission')

    jobs = [('a', start('task-1')), ('b', start('task-2')), ('c', refused), ('d', start('task-3'))]
    results = io.run_tasks(client, jobs, parallel=2, timeout=30, purpose='test')
    assert results == {'a': None, 'b': 'InvalidDeviceSpec: bad device', 'c': 'vCenter refused the call: NoPermission', 'd': None}
    assert started == ['task-1', 'task-2', 'task-3']
    assert client.polls <= 3


def test_run_tasks_timeout_reports_the_task():
    client = Recorder({'task-1': [('running', None)]})
    results = io.run_tasks(client, [('a', lambda: Task('task-1'))], parallel=1, timeout=0, purpose='test')
    assert 'task-1 did not finish within 0 seconds' in results['a']


def test_run_tasks_notes_which_vms_tasks_are_running_and_which_are_still_to_start(tmp_path, monkeypatch):
    from ansible_collections.ocp.egressip.plugins.module_utils.core import progress
    notes = []
    monkeypatch.setattr(progress, 'note', notes.append)
    client = Recorder({'task-1': [('running', None), ('success', None)], 'task-2': [('success', None)]})
    jobs = [('vm-1', lambda: Task('task-1')), ('vm-2', lambda: Task('task-2'))]
    io.run_tasks(client, jobs, parallel=1, timeout=30, purpose='reconfiguring the NICs', names={'vm-1': 'VM w0'})
    assert notes[0] == 'the vCenter tasks of VM w0, vm-2 (reconfiguring the NICs: 0 running, 2 to start; timeout 30 s)'
    assert 'the vCenter tasks of VM w0, vm-2 (reconfiguring the NICs: 1 running, 1 to start; timeout 30 s)' in notes
