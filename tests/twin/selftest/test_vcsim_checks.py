"""Self-test of vCenter's own checks in the twin (tests/twin/vcsim/checks.go, pages.go), with real pyVmomi.

README, "vCenter's own checks": RetrievePropertiesEx pages (maxObjects, the -max-objects policy, Continue/Cancel),
one ReconfigVM_Task at a time per VM (TaskInProgress, or queued), NICs disconnected while a VM is not powered on,
vMotion refused to a host without a connected NIC's standard port group (CannotAccessNetwork), at most 10 NICs.
"""

import threading

import pytest
from pyVim.task import WaitForTask
from pyVmomi import vim, vmodl

from test_vcsim import Vcsim, by_name, connect, fixture_binary, nics, objects, reconfigure  # noqa: F401  pylint: disable=unused-import

PC = vmodl.query.PropertyCollector


@pytest.fixture(name='checks_twin', scope='module')
def fixture_checks_twin(binary, tmp_path_factory):
    sim = Vcsim(binary, tmp_path_factory.mktemp('vcsim-checks'), '-hosts', '3', '-workers', '5')
    yield sim
    assert sim.stop() == 0, sim.log()


@pytest.fixture(name='paged_twin', scope='module')
def fixture_paged_twin(binary, tmp_path_factory):
    sim = Vcsim(binary, tmp_path_factory.mktemp('vcsim-paged'), '-workers', '5', '-max-objects', '2')
    yield sim
    assert sim.stop() == 0, sim.log()


def _vm_names_spec(si):
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
    traversal = PC.TraversalSpec(name='view', type=vim.view.ContainerView, path='view', skip=False)
    return content.propertyCollector, PC.FilterSpec(objectSet=[PC.ObjectSpec(obj=view, skip=True, selectSet=[traversal])],
                                                    propSet=[PC.PropertySpec(type=vim.VirtualMachine, pathSet=['name'])])


def _pages(collector, result):
    sizes, names = [], []
    while True:
        sizes.append(len(result.objects))
        names += [content.propSet[0].val for content in result.objects]
        if not result.token:
            return sizes, sorted(names)
        result = collector.ContinueRetrievePropertiesEx(token=result.token)


# --- RetrievePropertiesEx pages ----------------------------------------------------------------

def test_max_objects_pages_and_continue_returns_the_rest(checks_twin):
    collector, spec = _vm_names_spec(checks_twin.si)
    everything = sorted(vm['name'] for vm in checks_twin.state['vms'])
    sizes, names = _pages(collector, collector.RetrievePropertiesEx([spec], PC.RetrieveOptions(maxObjects=3)))
    assert sizes == [3, 3, 2] and names == everything
    unpaged = collector.RetrievePropertiesEx([spec], PC.RetrieveOptions())
    assert unpaged.token is None and len(unpaged.objects) == 8  # no maxObjects and no policy: one answer


def test_a_used_or_cancelled_token_is_invalid(checks_twin):
    collector, spec = _vm_names_spec(checks_twin.si)
    first = collector.RetrievePropertiesEx([spec], PC.RetrieveOptions(maxObjects=5))
    collector.ContinueRetrievePropertiesEx(token=first.token)
    with pytest.raises(vmodl.query.InvalidProperty) as used:
        collector.ContinueRetrievePropertiesEx(token=first.token)
    assert used.value.name == 'token'
    second = collector.RetrievePropertiesEx([spec], PC.RetrieveOptions(maxObjects=5))
    collector.CancelRetrievePropertiesEx(token=second.token)
    with pytest.raises(vmodl.query.InvalidProperty):
        collector.ContinueRetrievePropertiesEx(token=second.token)


def test_server_policy_limits_pages_without_max_objects(paged_twin):
    collector, spec = _vm_names_spec(paged_twin.si)
    sizes, names = _pages(collector, collector.RetrievePropertiesEx([spec], PC.RetrieveOptions()))
    assert sizes == [2, 2, 2, 2] and names == sorted(vm['name'] for vm in paged_twin.state['vms'])
    sizes, _names = _pages(collector, collector.RetrievePropertiesEx([spec], PC.RetrieveOptions(maxObjects=100)))
    assert sizes == [2, 2, 2, 2]  # the policy wins over a larger maxObjects
    sizes, _names = _pages(collector, collector.RetrievePropertiesEx([spec], PC.RetrieveOptions(maxObjects=1)))
    assert sizes == [1] * 8


def test_negative_max_objects_flag_is_refused(binary, tmp_path):
    with pytest.raises(AssertionError) as refused:
        Vcsim(binary, tmp_path, '-max-objects', '-1')
    assert '-max-objects must not be negative' in str(refused.value)


# --- one reconfigure at a time per VM ----------------------------------------------------------

def _options(sim, **options):
    status, body = sim.http('POST', '/_twin/options', options)
    assert status == 200, body
    return body


def _annotate_at_once(vm, count=2):
    """`count` ReconfigVM_Task calls on one VM from parallel threads; their task errors (None: success)."""
    errors = [None] * count

    def run(index):
        try:
            WaitForTask(vm.ReconfigVM_Task(spec=vim.vm.ConfigSpec(annotation='writer %d' % index)))
        except vim.fault.TaskInProgress as fault:
            errors[index] = fault
    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return errors


def test_second_reconfigure_of_a_vm_fails_with_task_in_progress(checks_twin):
    vm = by_name(checks_twin.si, vim.VirtualMachine, 'ocp1-worker-0')
    _options(checks_twin, reconfigure_delay=0.5)
    try:
        errors = _annotate_at_once(vm)
    finally:
        _options(checks_twin, reconfigure_delay=0)
    [fault] = [error for error in errors if error is not None]
    assert errors.count(None) == 1
    assert fault.msg == 'Another task is already in progress.'
    # the fault names the running task, which ends as the first reconfigure did
    WaitForTask(fault.task)
    assert fault.task.info.entity == vm and fault.task.info.state == 'success'
    assert vm.config.annotation in ('writer 0', 'writer 1')


def test_reconfigures_of_different_vms_run_at_once(checks_twin):
    _options(checks_twin, reconfigure_delay=0.3)
    errors = []

    def run(name):
        try:
            reconfigure(by_name(checks_twin.si, vim.VirtualMachine, name), vim.vm.ConfigSpec(annotation='x'))
        except vmodl.MethodFault as fault:
            errors.append(fault)
    try:
        threads = [threading.Thread(target=run, args=(name,)) for name in ('ocp1-worker-1', 'ocp1-worker-2')]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    finally:
        _options(checks_twin, reconfigure_delay=0)
    assert errors == []


def test_queue_mode_runs_the_second_after_the_first(checks_twin):
    vm = by_name(checks_twin.si, vim.VirtualMachine, 'ocp1-worker-3')
    assert _options(checks_twin, reconfigure_overlap='queue', reconfigure_delay=0.3)['reconfigure_overlap'] == 'queue'
    try:
        errors = _annotate_at_once(vm)
    finally:
        _options(checks_twin, reconfigure_overlap='fail', reconfigure_delay=0)
    assert errors == [None, None]
    status, body = checks_twin.http('POST', '/_twin/options', {'reconfigure_overlap': 'sometimes'})
    assert status == 400 and 'reconfigure_overlap' in body['error']
    assert _options(checks_twin)['reconfigure_overlap'] == 'fail'


def test_the_reconfigure_barrier_holds_writes_until_every_session_has_sent_one(checks_twin):
    """A test control (not vCenter behaviour): writers started at once overlap however far apart they start."""
    other = connect(checks_twin.state)
    first = by_name(checks_twin.si, vim.VirtualMachine, 'ocp1-worker-4')
    second = by_name(other, vim.VirtualMachine, 'ocp1-worker-3')
    assert _options(checks_twin, reconfigure_barrier=2)['reconfigure_barrier'] == 2
    done = threading.Event()
    try:
        thread = threading.Thread(target=lambda: (reconfigure(first, vim.vm.ConfigSpec(annotation='held')), done.set()))
        thread.start()
        assert not done.wait(1.0), 'the first session passed the barrier alone'
        reconfigure(second, vim.vm.ConfigSpec(annotation='releases'))
        assert done.wait(10.0), 'the second session did not release the first'
        thread.join(10)
        # once open it stays open: a later reconfigure of the same session is not held
        reconfigure(first, vim.vm.ConfigSpec(annotation='after'))
    finally:
        _options(checks_twin, reconfigure_barrier=0)
    assert first.config.annotation == 'after' and second.config.annotation == 'releases'
    status, body = checks_twin.http('POST', '/_twin/options', {'reconfigure_barrier': 'two'})
    assert status == 400 and 'bad options' in body['error']


# --- NICs of a VM that is not powered on are disconnected --------------------------------------

def _nic_states(vm):
    return [(nic.connectable.connected, nic.connectable.startConnected) for nic in nics(vm)]


def test_power_off_disconnects_and_power_on_applies_start_connected(checks_twin):
    vm = by_name(checks_twin.si, vim.VirtualMachine, 'ocp1-worker-4')
    card = vim.vm.device.VirtualVmxnet3(backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName='VM Network'),
                                        connectable=vim.vm.device.VirtualDevice.ConnectInfo(startConnected=False, connected=False))
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=card)]))
    assert _nic_states(vm) == [(True, True), (False, False)]
    WaitForTask(vm.PowerOffVM_Task())
    assert _nic_states(vm) == [(False, True), (False, False)]
    # a NIC added or connected while the VM is off stays disconnected, its startConnected kept
    added = vim.vm.device.VirtualVmxnet3(backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName='VM Network'),
                                         connectable=vim.vm.device.VirtualDevice.ConnectInfo(startConnected=True, connected=True))
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=added)]))
    assert _nic_states(vm) == [(False, True), (False, False), (False, True)]
    inventory = next(item for item in checks_twin.http('GET', '/_twin/inventory')[1]['vms'] if item['name'] == 'ocp1-worker-4')
    assert [(nic['connected'], nic['start_connected']) for nic in inventory['nics']] == [(False, True), (False, False), (False, True)]
    WaitForTask(vm.PowerOnVM_Task())
    assert _nic_states(vm) == [(True, True), (False, False), (True, True)]


def test_disconnecting_a_nic_of_a_running_vm_sticks(checks_twin):
    vm = by_name(checks_twin.si, vim.VirtualMachine, 'ocp1-master-0')
    device = nics(vm)[0]
    device.connectable.connected = False
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='edit', device=device)]))
    assert _nic_states(vm) == [(False, True)]
    device = nics(vm)[0]
    device.connectable.connected = True
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='edit', device=device)]))
    assert _nic_states(vm) == [(True, True)]


# --- vMotion needs the VM's standard port groups on the target host ----------------------------

def _portgroup_on(host, name):
    spec = vim.host.PortGroup.Specification(name=name, vlanId=130, vswitchName='vSwitch1', policy=vim.host.NetworkPolicy())
    host.configManager.networkSystem.AddPortGroup(portgrp=spec)


def _nic_on_portgroup(vm, name):
    card = vim.vm.device.VirtualVmxnet3(backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=name),
                                        connectable=vim.vm.device.VirtualDevice.ConnectInfo(startConnected=True, connected=True))
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=card)]))


def _vm_with_a_nic_on_a_new_portgroup(si, vm_name, portgroup, other_hosts_with_it=0):
    """(vm, its host, the other hosts) once `portgroup` is on the VM's host and the first `other_hosts_with_it` other hosts,
    and the VM has a connected NIC on it."""
    vm = by_name(si, vim.VirtualMachine, vm_name)
    home = vm.runtime.host
    others = [host for host in objects(si, vim.HostSystem) if host != home]
    for host in [home] + others[:other_hosts_with_it]:
        _portgroup_on(host, portgroup)
    _nic_on_portgroup(vm, portgroup)
    return vm, home, others


def test_vmotion_to_a_host_without_the_portgroup_is_refused(checks_twin):
    vm, home, others = _vm_with_a_nic_on_a_new_portgroup(checks_twin.si, 'ocp1-master-1', 'ocp-vmotion-check', 1)
    label = nics(vm)[-1].deviceInfo.label
    for move in (lambda: vm.RelocateVM_Task(vim.vm.RelocateSpec(host=others[1])),
                 lambda: vm.MigrateVM_Task(host=others[1], priority='defaultPriority')):
        with pytest.raises(vim.fault.CannotAccessNetwork) as refused:
            WaitForTask(move())
        fault = refused.value
        assert fault.backing == 'ocp-vmotion-check' and fault.connected is True and fault.device == label
        assert fault.msg == "Currently connected network interface '%s' uses network 'ocp-vmotion-check', which is not accessible." % label
        assert vm.runtime.host == home and vm in home.vm
    WaitForTask(vm.MigrateVM_Task(host=others[0], priority='defaultPriority'))  # a host with the port group: allowed
    assert vm.runtime.host == others[0]
    WaitForTask(vm.RelocateVM_Task(vim.vm.RelocateSpec(host=home)))
    assert vm.runtime.host == home


def test_vmotion_with_the_nic_disconnected_or_powered_off_goes_ahead(checks_twin):
    vm, _home, others = _vm_with_a_nic_on_a_new_portgroup(checks_twin.si, 'ocp1-master-2', 'ocp-vmotion-warn')
    device = nics(vm)[1]
    device.connectable.connected = False
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='edit', device=device)]))
    WaitForTask(vm.RelocateVM_Task(vim.vm.RelocateSpec(host=others[0])))  # disconnected: only a warning in vCenter
    assert vm.runtime.host == others[0]
    device = nics(vm)[1]
    device.connectable.connected = True
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='edit', device=device)]))
    WaitForTask(vm.PowerOffVM_Task())
    WaitForTask(vm.MigrateVM_Task(host=others[1], priority='defaultPriority'))  # powered off: no NIC is connected
    assert vm.runtime.host == others[1]
    WaitForTask(vm.PowerOnVM_Task())


# --- at most 10 NICs ----------------------------------------------------------------------------

def test_an_eleventh_nic_is_refused(checks_twin):
    vm = by_name(checks_twin.si, vim.VirtualMachine, 'ocp1-worker-2')
    adds = [vim.vm.device.VirtualDeviceSpec(operation='add', device=vim.vm.device.VirtualVmxnet3(
        key=-100 - index, backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName='VM Network')))
        for index in range(10 - len(nics(vm)))]
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=adds))
    assert len(nics(vm)) == 10
    one_more = vim.vm.device.VirtualDeviceSpec(operation='add', device=vim.vm.device.VirtualVmxnet3(
        backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName='VM Network')))
    with pytest.raises(vim.fault.TooManyDevices):
        reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[one_more]))
    assert len(nics(vm)) == 10
    # removing one and adding one in the same spec is fine
    remove = vim.vm.device.VirtualDeviceSpec(operation='remove', device=nics(vm)[-1])
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[remove, one_more]))
    assert len(nics(vm)) == 10
